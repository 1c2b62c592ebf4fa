"""The shipped examples by name: ``scenarios.example``, ``costmodel examples`` and ``costmodel
run NAME`` work from any folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

import scenarios
from cli import main
from scenarios.library import examples

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "scenarios" / "examples").glob("*.yaml"))
LAB = "lab-4x-rtx2080ti-vs-p3-8xlarge"


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder with no examples in it."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_an_example_by_name_from_any_folder(elsewhere):
    path = scenarios.example(LAB)
    assert path.is_file() and path.samefile(ROOT / "scenarios" / "examples" / f"{LAB}.yaml")
    assert scenarios.example(f"{LAB}.yaml") == path
    assert scenarios.evaluate(path, samples=100).name == LAB


def test_an_unknown_example_names_the_closest_and_lists_them_all():
    for typo in ("lab-4x-rtx2080ti-vs-p3-8xlarg", "lab-4x"):  # close, and a prefix
        with pytest.raises(scenarios.ScenarioError) as error:
            scenarios.example(typo)
        text = str(error.value)
        assert text.startswith(f"{typo}: no shipped example of that name")
        assert f"did you mean {LAB!r}?" in text
        assert all(p.stem in text for p in SHIPPED)


def test_every_shipped_file_is_listed_with_its_kind_and_one_sentence():
    listed = {e.name: e for e in examples()}
    assert sorted(listed) == [p.stem for p in SHIPPED]
    for path in SHIPPED:
        entry, data = listed[path.stem], yaml.safe_load(path.read_text("utf-8"))
        assert entry.kind == data.get("kind", "scenario")
        assert entry.description and "\n" not in entry.description
        if "description" in data:
            assert " ".join(data["description"].split()).startswith(entry.description[:-1])
    # a description of several sentences is listed by its first, ended where a capital follows
    assert listed["inference-8b-rtx6000ada-vs-api"].description == (
        "A small team serves Llama 3.1 8B at FP8 from an office workstation with four "
        "RTX 6000 Ada cards."
    )
    assert listed["plan-inference-70b-api-burst"].description.endswith("the mean load.")
    # no description key: the first sentence of the opening comment
    assert listed["worked-example"].description.startswith("The worked example of docs/model.md")
    assert listed["worked-example"].description.endswith("section 4.")


def test_costmodel_examples_lists_them(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["examples"]) == 0
    out = capsys.readouterr().out
    cells = [line.split() for line in out.splitlines() if line[:1].isalnum()]
    rows = {c[0]: c[1] for c in cells if len(c) > 2}
    for entry in examples():
        assert rows[entry.name] == entry.kind
    assert max(map(len, out.splitlines())) <= 100


def test_run_and_plan_take_an_example_name(elsewhere, capsys):
    assert main(["run", "worked-example"]) == 0
    assert capsys.readouterr().out.startswith("worked-example-2gpu-vs-on-demand ")
    assert main(["plan", "plan-worked-example"]) == 0
    assert capsys.readouterr().out.startswith("plan-worked-example ")
    assert main(["run", "lab-4x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: lab-4x: file not found, and no shipped example of that name")
    assert f"did you mean {LAB!r}?" in err
    # a path is a path: a missing file is not looked up among the examples
    assert main(["run", "worked-example.yaml"]) == 2
    assert capsys.readouterr().err == "error: worked-example.yaml: file not found\n"


def test_a_file_of_that_name_wins_over_the_example(elsewhere, capsys):
    shutil.copy(ROOT / "scenarios" / "examples" / "inference-1x-t4-vs-g4dn-xlarge.yaml", LAB)
    assert main(["run", LAB, "--samples", "100"]) == 0
    assert capsys.readouterr().out.startswith("inference-1x-t4-vs-g4dn-xlarge ")
