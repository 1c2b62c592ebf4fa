"""The packages import one way only: pricing <- costmodel <- present <- scenarios <- api <- cli."""

from __future__ import annotations

import ast
import graphlib
import shutil
from pathlib import Path

import pytest

import scenarios
from pricing import load_catalog, read_catalog

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ("pricing", "costmodel", "present", "scenarios", "api", "cli")
#: What each package may import of the project. The engine reads the catalog's vocabulary and
#: ranges (pricing.vocabulary), never the catalogs themselves.
ALLOWED = {
    "pricing": set(),
    "costmodel": {"pricing.vocabulary"},
    "present": {"costmodel", "pricing.vocabulary", "pricing.text"},
    "scenarios": {"present", "costmodel", "pricing"},
    "api": {"scenarios", "present", "costmodel", "pricing"},
    "cli": {"api", "scenarios", "present", "costmodel", "pricing"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return {n for n in names if n.split(".")[0] in PROJECT}


@pytest.mark.parametrize("package", PROJECT)
def test_no_package_imports_a_higher_one(package):
    for path in (ROOT / package).rglob("*.py"):
        for name in _imports(path):
            top = name.split(".")[0]
            if top == package:
                continue
            allowed = ALLOWED[package]
            assert top in allowed or name in allowed, f"{path.relative_to(ROOT)} imports {name}"


def test_a_scenario_resolves_against_the_catalog_it_is_given(tmp_path):
    data = tmp_path / "catalog"
    shutil.copytree(ROOT / "pricing" / "data", data)
    gpus = data / "gpus.csv"
    text = gpus.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("rtx-3090,"))
    gpus.write_text(text.replace(row, row.replace(",1499,false,", ",999,false,")))
    other = read_catalog(data)
    doc = {
        "version": 1,
        "name": "x",
        "buy": {"gpu": "rtx-3090", "gpu_count": 1},
        "rent": {"instance": "aws/p3.2xlarge"},
    }
    shipped = scenarios.load_mapping(doc)
    mine = scenarios.load_mapping(doc, catalog=other)
    assert shipped.resolved.inputs.buy.gpu_price_usd.support() == (1499.0, 1499.0)
    assert mine.resolved.inputs.buy.gpu_price_usd.support() == (999.0, 999.0)
    assert load_catalog().gpu("rtx-3090").price_usd == 1499  # the shared catalog is untouched
    assert scenarios.evaluate(doc, catalog=other, samples=10).catalog.version == other.version


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.Import | ast.ImportFrom, path: Path) -> list[tuple[str, list[str]]]:
    """What one import statement of ``path`` imports, as (absolute module, names) pairs;
    names are empty for a plain ``import``."""
    if isinstance(node, ast.Import):
        return [(a.name, []) for a in node.names]
    module = node.module or ""
    if node.level:
        package = _module(path).split(".")
        if path.name != "__init__.py":
            package = package[:-1]
        module = ".".join(package[: len(package) - node.level + 1] + ([module] if module else []))
    return [(module, [a.name for a in node.names])]


def _type_checking(node: ast.AST) -> bool:
    """Whether ``node`` is an ``if TYPE_CHECKING:`` block (imports for annotations only)."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _run_time_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` that runs, at import or in a call: all but the bodies of
    ``if TYPE_CHECKING:`` blocks (their ``else`` runs)."""
    out, stack = [], [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        children = node.orelse if _type_checking(node) else ast.iter_child_nodes(node)
        stack.extend(children)
    return out


def _imports_of(path: Path, run_time: bool = False) -> list[tuple[str, list[str]]]:
    """The project imports of ``path``: every one, or with ``run_time`` those that run (at
    module level or inside functions), not those under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = _run_time_nodes(tree) if run_time else list(ast.walk(tree))
    out = []
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            out += _absolute(node, path)
    return [(m, n) for m, n in out if m.split(".")[0] in PROJECT]


def _project_files() -> list[Path]:
    return [p for package in PROJECT for p in (ROOT / package).rglob("*.py")]


def test_the_engine_folder_holds_no_presentation():
    """Showing a result (JSON form, verdicts, formatting, reports) is the ``present`` package's;
    the engine's folder holds numbers only."""
    assert not (ROOT / "costmodel" / "present").exists()


def test_no_module_imports_another_modules_private_names():
    found = [
        f"{path.relative_to(ROOT)}: {module}.{name}"
        for path in _project_files()
        for module, names in _imports_of(path)
        for name in names
        if name.startswith("_") and not name.startswith("__")
    ]
    assert not found, "private names used across modules; make what two modules share public"


def test_modules_import_without_cycles():
    """The imports between the project's modules form no cycle at run time: module-level ones
    and those inside functions (made lazily for start-up time) alike; imports under ``if
    TYPE_CHECKING:``, for annotations only, are not counted."""
    files = {_module(p): p for p in _project_files()}
    graph = {}
    for name, path in files.items():
        edges = set()
        for module, names in _imports_of(path, run_time=True):
            # ``from package import module`` depends on that module, else on the package
            edges |= {f"{module}.{n}" for n in names if f"{module}.{n}" in files} or {module}
        graph[name] = {e for e in edges if e in files and e != name}
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")


def test_no_function_is_longer_than_80_lines():
    """Functions a reader can follow: none of the project's (benchmarks and tools included) runs
    over 80 lines; declarative tables are module-level data, not functions."""
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1})"
        for package in (*PROJECT, "tools", "benchmarks")
        for path in (ROOT / package).rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > 80
    ]
    assert not long, long


def test_the_cycle_check_sees_imports_inside_functions_but_not_for_annotations(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "import costmodel.result\n"
        "if TYPE_CHECKING:\n"
        "    from present.schema import ResultSchema\n"
        "else:\n"
        "    import pricing.suggest\n"
        "def f():\n"
        "    from present.verdict import verdict\n"
        "    return verdict\n"
    )
    seen = {m for m, _ in _imports_of(module, run_time=True)}
    assert seen == {"costmodel.result", "pricing.suggest", "present.verdict"}
    assert "present.schema" in {m for m, _ in _imports_of(module)}
