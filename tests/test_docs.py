"""The documentation and the JSON Schema in the repo: current, complete and runnable."""

from __future__ import annotations

import doctest
import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from scenarios.jsonschema import scenario_json_schema
from scenarios.keyref import BEGIN, END, key_reference, schema_keys

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLES = sorted((ROOT / "scenarios" / "examples").glob("*.yaml"))


def _tracked_text_files() -> list[Path]:
    names = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / n for n in names if Path(n).suffix in {".md", ".py", ".yaml", ".json", ".j2"}]


def test_the_key_reference_is_generated_from_the_schema():
    text = (DOCS / "scenario-format.md").read_text(encoding="utf-8")
    section = text[text.index(BEGIN) : text.index(END) + len(END)]
    assert section == key_reference(), "run: python tools/build_docs.py"


def _default_of(reference: str, key: str) -> str:
    """The default column of key ``key``'s row of the key reference."""
    row = next(r for r in reference.splitlines() if r.startswith(f"| `{key}` |"))
    return row.split(" | ")[4]


def test_the_carbon_defaults_are_written_from_the_values_resolution_uses(monkeypatch):
    """The key reference's carbon defaults name the values a document left without them gets
    (the default grid and its catalog row, an inline GPU's embodied carbon, an inline
    instance's PUE, the cloud host's GPUs), and follow them when they change."""
    from scenarios import keyref, sidecarbon

    ref = key_reference()
    assert _default_of(ref, "buy.grid") == (
        "`US`: the United States average (Ember 2024, lifecycle, 383.6 g/kWh), as for the "
        "electricity price"
    )  # pricing/data/grid_carbon.csv: US,country,United States,383.6,2024,lifecycle
    assert (sidecarbon.DEFAULT_GRID, sidecarbon.GENERIC_GPU_KG) == ("US", 150.0)
    assert (sidecarbon.INLINE_PUE, sidecarbon.HOST_GPUS) == (1.25, 8)
    assert "(150 kg for an inline GPU, an estimate)" in _default_of(ref, "buy.embodied_kg_co2e")
    assert _default_of(ref, "rent.grid").endswith("; `US` for an inline instance")
    assert "; `1.25` (the public-cloud average)" in _default_of(ref, "rent.pue")
    assert "n/8 of the 8-GPU server's" in _default_of(ref, "rent.embodied_kg_co2e")
    change = "`0`: a grid as carbon-intensive as today"
    assert _default_of(ref, "buy.grid_annual_change") == change
    assert _default_of(ref, "own.grid") == _default_of(ref, "buy.grid")

    for name, value in (("DEFAULT_GRID", "DE"), ("GENERIC_GPU_KG", 175.0),
                        ("INLINE_PUE", 1.3), ("HOST_GPUS", 4)):  # fmt: skip
        monkeypatch.setattr(keyref, name, value)
    ref = key_reference()
    assert _default_of(ref, "buy.grid").startswith("`DE`: the Germany average (Ember ")
    assert "(175 kg for an inline GPU" in _default_of(ref, "buy.embodied_kg_co2e")
    assert _default_of(ref, "rent.grid").endswith("; `DE` for an inline instance")
    assert "; `1.3` (the public-cloud average)" in _default_of(ref, "rent.pue")
    assert "n/4 of the 4-GPU server's" in _default_of(ref, "rent.embodied_kg_co2e")


def test_every_schema_key_is_documented():
    text = (DOCS / "scenario-format.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([^`]+)` \|", text, re.M))
    keys = schema_keys()
    assert len(keys) > 60
    assert set(keys) <= documented, sorted(set(keys) - documented)


def test_every_key_has_a_meaning_and_a_default():
    rows = [r for r in key_reference().splitlines() if r.startswith("| `")]
    for row in rows:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
        assert len(cells) == 6, row
        assert cells[4] and cells[5], row  # default and meaning


def test_python_guide_runs(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # the examples are found by name, from any folder
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    failed, attempted = doctest.testfile(
        str(DOCS / "python.md"), module_relative=False, optionflags=flags
    )
    assert attempted > 10 and failed == 0


def test_no_file_points_users_to_documents_they_do_not_have():
    for path in _tracked_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.name == Path(__file__).name:
            continue
        assert "DESIGN" not in text, path
        assert "shared/" not in text, path


def test_docs_links_resolve():
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text("utf-8")):
            assert (page.parent / target).exists(), (page.name, target)


# --------------------------------------------------------------------------- JSON Schema


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    out = subprocess.run(
        [sys.executable, "-m", "cli", "schema"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    schema = json.loads(out.stdout)
    assert schema == scenario_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_is_valid_against_the_schema(validator, path):
    errors = list(validator.iter_errors(yaml.safe_load(path.read_text("utf-8"))))
    assert errors == []


def test_the_schema_refuses_unknown_keys_and_out_of_range_values(validator):
    doc = yaml.safe_load(EXAMPLES[0].read_text("utf-8"))
    doc["buy"]["pue"] = 0.5
    assert not validator.is_valid(doc)
    doc["buy"]["pue"] = 1.2
    assert validator.is_valid(doc)
    doc["buy"]["pue_typo"] = 1.2
    assert not validator.is_valid(doc)
    doc = yaml.safe_load(EXAMPLES[0].read_text("utf-8"))
    doc["unknown"] = 1
    assert not validator.is_valid(doc)
    doc = yaml.safe_load(EXAMPLES[0].read_text("utf-8"))
    doc["buy"]["electricity_usd_per_kwh"] = {"dist": "gamma", "k": 2}
    assert not validator.is_valid(doc)
    doc = yaml.safe_load(EXAMPLES[0].read_text("utf-8"))
    doc["discount_rate"] = -0.5  # (-0.5, 1]: the loader refuses it, so must the schema
    assert not validator.is_valid(doc)
    doc["discount_rate"] = -0.49
    assert validator.is_valid(doc)


def _numeric(node: dict) -> bool:
    types = node.get("type", [])
    types = types if isinstance(types, list) else [types]
    return bool({"number", "integer"} & set(types)) or any(map(_numeric, node.get("oneOf", [])))


def test_every_numeric_key_has_its_unit_in_the_schema_and_the_docs():
    """x-unit on every number of the format (not a version constant), the unit the key
    reference shows; the description is words only, the unit not glued to it."""
    defs = scenario_json_schema()["$defs"]
    units = {}
    for name, node in defs.items():
        for key, prop in node.get("properties", {}).items():
            if name.startswith("Dist") or "enum" in prop or not _numeric(prop):
                continue
            assert prop.get("x-unit", "").startswith("["), (name, key)
            assert prop["x-unit"] not in prop.get("description", ""), (name, key)
            units[key] = prop["x-unit"]
    assert len(units) > 40 and units["discount_rate"] == "[1/year]" and units["pue"] == "[-]"
    rows = [r for r in key_reference().splitlines() if r.startswith("| `")]
    documented = {}
    for row in rows:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
        documented.setdefault(cells[0].strip("`").rsplit(".", 1)[-1], set()).add(cells[2])
    for key, unit in units.items():
        assert unit in documented[key], (key, unit, documented[key])


def test_the_readmes_compare_by_model_summary_is_what_the_command_prints(monkeypatch, capsys):
    # The README quotes the lines after the table of `costmodel compare --utilisation 0.5
    # --model llama-3.3-70b --precision fp8`; they went stale once (a $0.0601 that the command
    # no longer printed). Each quoted line, its wrapping undone, must be a line it prints.
    from cli import main

    text = (ROOT / "README.md").read_text("utf-8")
    block = re.search(r"```text\n(Cheapest owned:.*?)```", text, re.S).group(1)
    quoted = re.sub(r"\n(?!Cheapest|Break-even|\d+ servers)", " ", block.strip()).splitlines()
    monkeypatch.setenv("COLUMNS", "400")
    args = ["compare", "--utilisation", "0.5", "--model", "llama-3.3-70b", "--precision", "fp8"]
    assert main(args) == 0
    printed = capsys.readouterr().out.splitlines()
    assert len(quoted) == 6 and all(line in printed for line in quoted)


def test_the_format_guide_says_plans_count_carbon_as_a_shipped_plan_does():
    # it said "Plans do not count carbon yet and refuse these keys" after plans counted it
    import scenarios

    plan = scenarios.load_file(scenarios.example("plan-lab-rtx4090-carbon"))
    assert plan.document["carbon"] and plan.inputs.carbon is not None
    text = " ".join((DOCS / "scenario-format.md").read_text(encoding="utf-8").split())
    assert "refuse these keys" not in text
    assert "A plan counts carbon the same way" in text and "plan-lab-rtx4090-carbon" in text
