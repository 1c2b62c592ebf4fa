"""Carbon through documents: keys, catalog defaults with their origins, errors at key paths."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

import scenarios
from present import from_dict, to_dict, to_json

EXAMPLES = Path(__file__).resolve().parents[1] / "scenarios" / "examples"
WORKED = yaml.safe_load((EXAMPLES / "worked-example.yaml").read_text(encoding="utf-8"))
LAB = yaml.safe_load((EXAMPLES / "lab-4x-rtx2080ti-vs-p3-8xlarge.yaml").read_text(encoding="utf-8"))
INFERENCE = yaml.safe_load((EXAMPLES / "inference-70b-fp8-h100.yaml").read_text(encoding="utf-8"))


def _worked_carbon() -> dict:
    """The carbon worked table of docs/model.md as a document."""
    doc = copy.deepcopy(WORKED)
    doc["buy"] |= {"grid": 383.6, "grid_annual_change": -0.03, "embodied_kg_co2e": 600}
    doc["rent"] |= {"grid": 367.8, "pue": 1.14, "power_kw": 0.5, "embodied_kg_co2e": 650}
    doc["carbon"] = {"usd_per_tonne": 100}
    return doc


def _assumptions(result) -> dict:
    return {a.key: a for a in result.assumptions}


def test_the_worked_table_through_a_document():
    result = to_dict(scenarios.evaluate(_worked_carbon()))
    assert result["carbon"]["buy"]["p50"] == pytest.approx(
        [2.9934577, 4.9999017, 7.0063457, 11.0192337], rel=1e-6
    )
    assert result["carbon"]["rent"]["p50"] == pytest.approx(
        [0.0, 2.5220349, 5.0440698, 10.0881397], rel=1e-6
    )
    assert result["buy_tco"]["p50"] == pytest.approx(
        [8267.1949, 9207.0192, 10146.8434, 12026.4919], rel=1e-6
    )
    assert result["rent_tco"]["p50"] == pytest.approx(
        [640.8666, 27376.0392, 54111.2118, 107581.5569], rel=1e-6
    )
    back = from_dict(result)  # the JSON form reads back, carbon included
    assert to_json(back) == to_json(from_dict(to_dict(back)))
    assert back.carbon["buy"].p50[1] == pytest.approx(4.9999017, rel=1e-6)


def test_defaults_come_from_the_catalog_with_their_origin():
    result = scenarios.evaluate(LAB, samples=8)
    notes = _assumptions(result)
    assert notes["buy.grid"].value == 383.6 and notes["buy.grid"].origin == "default"
    assert "grid US, United States (383.6 g/kWh, 2024, lifecycle)" in notes["buy.grid"].source
    # 4 x rtx-2080-ti at 150 kg (CCF's per-card estimate) + the 4-GPU tier's 1455.5 kg
    assert notes["buy.embodied_kg_co2e"].value == pytest.approx(4 * 150 + 1455.5)
    assert notes["buy.embodied_kg_co2e"].origin == "catalog"
    # aws/p3.8xlarge runs in us-east-1: its grid row (418 g/kWh) and AWS's PUE 1.14
    assert notes["rent.grid"].value == 418 and "aws/us-east-1" in notes["rent.grid"].source
    assert notes["rent.pue"].value == 1.14
    # 4 x 300 W (V100 SXM2 TDP) + the 4-GPU tier's 300 W platform = 1.5 kW
    assert notes["rent.power_kw"].value == pytest.approx(1.5)
    # 4 x 150 kg + 4/8 of the 8-GPU server's 3000 kg
    assert notes["rent.embodied_kg_co2e"].value == pytest.approx(4 * 150 + 3000 / 2)
    assert notes["carbon.usd_per_tonne"].value == 0.0
    lab = scenarios.load_mapping(LAB)
    assert (lab.document["buy"]["grid"], lab.document["rent"]["grid"]) == ("US", "aws/us-east-1")
    assert scenarios.load_mapping(lab.document).key() == lab.key()  # the resolved document


def test_a_grid_is_a_catalog_id_in_any_case():
    doc = copy.deepcopy(LAB) | {"utilisation": [0.5]}
    doc["buy"]["grid"] = "camx"
    doc["rent"]["grid"] = "FR"
    notes = _assumptions(scenarios.evaluate(doc, samples=4))
    assert notes["buy.grid"].value == 226.5 and notes["buy.grid"].origin == "given"
    assert notes["rent.grid"].value == 44.2


@pytest.mark.parametrize(
    ("block", "key", "value", "message"),
    [
        ("buy", "grid", "USA", "unknown grid id 'USA'; closest: US"),
        ("buy", "grid", -5, "values must lie in [0, 2,000] [gCO2e/kWh]"),
        ("rent", "grid", "aws/us-eest-1", "closest: aws/us-west-1, aws/us-east-1"),
        ("rent", "pue", 0.9, "values must lie in [1, 5] [-]"),
        ("rent", "power_kw", -1, "values must lie in [0, 1,000] [kW]"),
        ("buy", "embodied_kg_co2e", {"dist": "uniform", "low": -1, "high": 5}, "values must lie"),
        ("carbon", "usd_per_tonne", -10, "values must lie in [0, 10,000] [USD/t CO2e]"),
    ],
)
def test_bad_carbon_keys_are_errors_at_their_key_path(block, key, value, message):
    doc = copy.deepcopy(LAB)
    doc.setdefault(block, {})[key] = value
    with pytest.raises(scenarios.ScenarioError) as err:
        scenarios.load_mapping(doc)
    hits = [e for e in err.value.errors if e["path"] == f"{block}.{key}"]
    assert hits and message in hits[0]["message"], err.value.errors


def test_an_unknown_grid_is_reported_with_the_schema_errors():
    doc = copy.deepcopy(LAB)
    doc["buy"]["grid"] = "Germany"
    doc["buy"]["pue"] = 0.5
    with pytest.raises(scenarios.ScenarioError) as err:
        scenarios.load_mapping(doc)
    assert {e["path"] for e in err.value.errors} == {"buy.grid", "buy.pue"}


def test_an_api_without_emission_figures_is_unknown_and_said_so():
    result = scenarios.evaluate(INFERENCE, samples=8)
    assert result.carbon.get("api") is None and result.carbon.unknown == ("api",)
    advice = [w for w in result.warnings if w.code == "api_carbon_unknown"]
    assert advice and advice[0].severity == "info"
    priced = copy.deepcopy(INFERENCE) | {"carbon": {"usd_per_tonne": 50}}
    advice = [
        w for w in scenarios.evaluate(priced, samples=8).warnings if w.code.startswith("api_c")
    ]
    assert advice[0].severity == "warning" and "not added to the API's cost" in advice[0].message
    known = copy.deepcopy(INFERENCE)
    known["api"]["g_co2e_per_mtok"] = 300
    result = scenarios.evaluate(known, samples=8)
    assert result.carbon.unknown == () and result.carbon.get("api") is not None
    assert _assumptions(result)["api.g_co2e_per_mtok"].value == 300


def test_an_unpriced_carbon_input_cannot_be_correlated():
    doc = copy.deepcopy(LAB)
    doc["buy"]["grid"] = {"dist": "uniform", "low": 300, "high": 450}
    doc["correlations"] = [["buy.electricity_usd_per_kwh", "buy.grid", -0.4]]
    with pytest.raises(scenarios.ScenarioError) as err:
        scenarios.load_mapping(doc)
    assert err.value.errors[0]["path"] == "correlations[0]"
    doc["carbon"] = {"usd_per_tonne": {"dist": "uniform", "low": 50, "high": 150}}
    result = scenarios.evaluate(doc, samples=64)
    drivers = {d.input for d in result.sensitivity.inputs}
    assert {"buy.grid", "carbon.usd_per_tonne"} <= drivers  # priced: they move the money


def test_the_command_line_lists_grids_and_shows_emissions(capsys):
    import json

    from cli import main

    assert main(["catalog", "grids", "--format", "json"]) == 0
    items = {g["id"]: g for g in json.loads(capsys.readouterr().out)["items"]}
    assert len(items) == 152 and items["CAMX"]["g_co2e_per_kwh"] == 226.5
    assert items["US-AVG"]["estimated_fields"] == ["g_co2e_per_kwh"]
    assert main(["catalog", "grids", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("US,country,United States,383.6")
    assert main(["catalog", "grids", "--provider", "aws"]) == 2
    assert "do not apply to grids" in capsys.readouterr().err
    assert main(["run", str(EXAMPLES / "worked-example.yaml")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # u = 0.5 with the catalog's defaults: 7.83 t owned, 4.58 t rented
    assert "Emissions at 50 % utilisation (P50, CO2e): buy 7.83 t" in out
    assert "rent 4.58 t" in out


def test_spares_add_their_embodied_carbon():
    doc = copy.deepcopy(LAB)
    doc["buy"] |= {"spare_gpus": 1, "repair_days": 7}
    notes = _assumptions(scenarios.evaluate(doc, samples=4))
    # (4 GPUs + 1 spare) x 150 kg + the 4-GPU tier's 1455.5 kg
    assert notes["buy.embodied_kg_co2e"].value == pytest.approx(5 * 150 + 1455.5)
    assert "5 x rtx-2080-ti" in notes["buy.embodied_kg_co2e"].source


def test_a_side_carries_its_carbon_inputs_from_the_same_pass():
    """The owned build resolved with carbon holds its carbon inputs; without, none. 4 RTX
    2080 Ti + 1 spare at the catalog's 150 kg each (an estimate) + the 4-GPU workstation tier's
    1,455.5 kg: 5 x 150 + 1,455.5 = 2,205.5 kg; the grid the US average, 383.6 g/kWh."""
    from costmodel.inputs import BuyInputs, input_fields
    from pricing import load_catalog
    from scenarios.sides import owned, work

    w = work({"precision": "fp16", "reference_gpu": "v100-sxm2-16gb"}, load_catalog())
    meta = input_fields(BuyInputs)
    plain = ("powered_when_idle", "depreciation", "depreciation_years")
    block = {n: meta[n].default for n in plain}
    block |= {"gpu": "rtx-2080-ti", "gpu_count": 4, "spare_gpus": 1}
    assert owned(block, "buy", w).carbon is None
    side = owned(block, "own", w, carbon="plan")
    assert side.carbon.inputs.embodied_kg_co2e.p50() == pytest.approx(5 * 150 + 1455.5)
    assert side.carbon.inputs.grid.p50() == pytest.approx(383.6)
    assert side.carbon.block["grid"] == "US"
    keys = [a.key for a in side.carbon.assumptions]
    assert keys == ["own.grid", "own.grid_annual_change", "own.embodied_kg_co2e"]
    given = owned({**block, "grid": 100.0}, "own", w, carbon="plan").carbon.assumptions[0]
    assert (given.key, given.source) == ("own.grid", "plan")
