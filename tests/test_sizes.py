"""Sizes a reader can hold (issue 47): no function in d2lmini over 60 lines, no explorer file over 450.

A function counts from its ``def`` line to its last line, docstring and nested
functions included; a file counts its lines.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "d2lmini"
WIDGETS = PACKAGE / "widgets"
MAX_FUNCTION_LINES = 60
MAX_FILE_LINES = 450  # a module or page script of the explorers


def long_functions(path, limit=MAX_FUNCTION_LINES):
    """(qualified name, lines) of each function of ``path`` longer than ``limit`` lines."""
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lines = child.end_lineno - child.lineno + 1  # lineno is the def's, below any decorator
                    if lines > limit:
                        found.append((name, lines))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text()), "")
    return found


def long_files(folder, limit=MAX_FILE_LINES):
    """(path relative to ``folder``, lines) of each ``.py`` or ``.js`` file under ``folder`` longer than
    ``limit`` lines."""
    paths = sorted([*folder.rglob("*.py"), *folder.rglob("*.js")])
    counts = ((path.relative_to(folder).as_posix(), len(path.read_text().splitlines())) for path in paths)
    return [(name, lines) for name, lines in counts if lines > limit]


def test_no_function_in_d2lmini_is_over_60_lines():
    found = [f"d2lmini/{path.relative_to(PACKAGE).as_posix()}: {name} has {lines} lines"
             for path in sorted(PACKAGE.rglob("*.py")) for name, lines in long_functions(path)]
    assert found == [], f"functions over {MAX_FUNCTION_LINES} lines: split them\n" + "\n".join(found)


def test_no_explorer_module_or_page_script_is_over_450_lines():
    found = [f"d2lmini/widgets/{name}: {lines} lines" for name, lines in long_files(WIDGETS)]
    assert found == [], f"files over {MAX_FILE_LINES} lines: split them along their concerns\n" + "\n".join(found)


def test_the_size_finders_name_what_is_too_long(tmp_path):
    """A method, a nested function and a decorated one are counted from their ``def``; files of
    both kinds are counted, in subfolders too."""
    body = "\n".join(f"    x{i} = {i}" for i in range(4))
    (tmp_path / "module.py").write_text(
        "class A:\n"
        "    @staticmethod\n"
        f"    def long(x):\n{body.replace('    ', '        ')}\n"
        "    def short(self):\n        return 1\n"
        f"def outer():\n    def inner():\n{body.replace('    ', '        ')}\n    return inner\n")
    assert long_functions(tmp_path / "module.py", limit=4) == [("A.long", 5), ("outer", 7), ("outer.inner", 5)]
    assert long_functions(tmp_path / "module.py", limit=5) == [("outer", 7)]
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "page.js").write_text("a;\n" * 6)
    (tmp_path / "notes.txt").write_text("a\n" * 9)
    assert long_files(tmp_path, limit=5) == [("module.py", 16), ("scripts/page.js", 6)]
