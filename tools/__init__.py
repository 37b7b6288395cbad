"""The project's command-line tools (`make site`, `make hub`, the editions, …), importable as ``tools.<name>``.

Run one as a module from the repository root: ``python -m tools.build_site``.
"""
