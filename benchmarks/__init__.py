"""Measurements of speed and size, importable as ``benchmarks.<name>``; run one as ``python -m benchmarks.<name>``."""
