"""The packages import one way only: pricing <- costmodel <- scenarios <- api <- cli."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

import scenarios
from pricing import load_catalog, read_catalog

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ("pricing", "costmodel", "scenarios", "api", "cli")
#: What each package may import of the project. The engine reads the catalog's vocabulary and
#: ranges (pricing.vocabulary), never the catalogs themselves.
ALLOWED = {
    "pricing": set(),
    "costmodel": {"pricing.vocabulary"},
    "scenarios": {"costmodel", "pricing"},
    "api": {"scenarios", "costmodel", "pricing"},
    "cli": {"api", "scenarios", "costmodel", "pricing"},
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
