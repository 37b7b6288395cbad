"""docs/architecture.md stays true: its import table is the package's import graph."""

import ast
import re
from pathlib import Path

import d2lmini

PACKAGE = Path(d2lmini.__file__).resolve().parent
DOC = PACKAGE.parent / "docs" / "architecture.md"


def documented_imports():
    """module -> the set of d2lmini modules the table says it imports."""
    table = {}
    for line in DOC.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`\w+`", cells[0]):
            names = set(re.findall(r"`(\w+)`", cells[2]))
            table[cells[0].strip("`")] = names
    return table


def actual_imports(module):
    """The top-level d2lmini modules that ``module`` (a file or a subpackage) imports, itself excluded."""
    path = PACKAGE / f"{module}.py"
    files = [path] if path.exists() else sorted((PACKAGE / module).glob("*.py"))
    found = set()
    for file in files:
        depth = len(file.relative_to(PACKAGE).parts)  # 1 for d2lmini/x.py, 2 for d2lmini/pkg/x.py
        for node in ast.walk(ast.parse(file.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == depth:
                if node.module:
                    found.add(node.module.split(".")[0])
                else:
                    found.update(alias.name for alias in node.names)
    return found - {module}


def test_every_module_is_in_the_table():
    modules = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    modules |= {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert set(documented_imports()) == modules


def test_the_table_lists_what_each_module_imports():
    for module, names in documented_imports().items():
        assert actual_imports(module) == names, f"{module}: the table in {DOC.name} is out of date"


def test_the_exercises_row_names_each_module_other_than_the_chapter_checks():
    """``exercises`` is one row; its modules besides chNN and the private ones must be named in it."""
    row = next(line for line in DOC.read_text().splitlines() if line.startswith("| `exercises` |"))
    described = row.split("|")[2]
    modules = {p.stem for p in (PACKAGE / "exercises").glob("*.py")
               if not re.fullmatch(r"ch\d\d|_.*", p.stem)}
    assert modules, "the exercises package has no module besides the chapter checks"
    for module in modules:
        assert f"`{module}`" in described, f"{module}: the exercises row in {DOC.name} does not name it"
