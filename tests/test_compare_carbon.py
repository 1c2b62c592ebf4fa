"""``compare``'s carbon: each option's g CO2e per unit of work, checked by hand on the small
catalog of ``test_compare`` with carbon figures and against a scenario of the same sides; the
ranking by carbon, the grid, and their errors at every door."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest

import scenarios
from api import create_app
from cli import main
from pricing import load_catalog
from pricing.carbon import CloudRegion, Embodied, GridIntensity
from scenarios.compare import CompareRequest, ComparisonSchema, compare, wording
from scenarios.errors import ScenarioError
from tests.test_compare import REL, REQUEST
from tests.test_compare import _catalog as cost_catalog

#: Equal to the scenario model's figure to this relative tolerance.
SAME = 1e-9


def _grid(grid_id: str, g: float) -> GridIntensity:
    return GridIntensity(grid_id, "country", grid_id.title(), g, 2024, "lifecycle", "test")


def _embodied(kind: str, id_: str, kg: float) -> Embodied:
    return Embodied(kind, id_, kg, "test", "test")


def _catalog():
    """``test_compare``'s catalog with carbon figures: grids US 400 and FR 50 g/kWh, its
    instances' region on FR at PUE 1.2, GPUs ref 100 kg, fast 150 kg, small 50 kg, the 1-GPU
    platform 200 kg, and an 8-GPU tier (800 kg, 600 W; a rented instance's host share is n/8
    of it)."""
    base = cost_catalog()
    eight = replace(base.tiers[0], gpu_count=8, name="8-GPU test server", power_w=600)
    embodied = [
        _embodied("gpu", "ref", 100),
        _embodied("gpu", "fast", 150),
        _embodied("gpu", "small", 50),
        _embodied("platform", "1", 200),
        _embodied("platform", "8", 800),
    ]
    return replace(
        base,
        tiers=(base.tiers[0], eight),
        grids=MappingProxyType({"us": _grid("US", 400.0), "fr": _grid("FR", 50.0)}),
        embodied=MappingProxyType({(e.kind, e.id): e for e in embodied}),
        regions=MappingProxyType({("cloud", "test"): CloudRegion("cloud", "test", "FR", 1.2, "t")}),
    )


def _by_id(result, count: int = 1) -> dict[tuple[str, str], object]:
    """The options by (id, pricing), the owned ones at ``count`` GPUs per server."""
    return {(o.id, o.pricing): o for o in result.options if o.side != "buy" or o.gpu_count == count}


def test_an_owned_and_a_rented_option_by_hand():
    """u = 0.5, 12 months of 730 h, no discounting, every input at its value.

    Owned ref x1 on grid US (400 g/kWh), PUE 1, on the 1-GPU tier:
      kW(u) = (25 + 100)/1000 + 0.5 * (250 - 25)/1000 = 0.2375 kW;
      operational 0.2375 * 730 * 12 * 1 * 400 / 1000 = 832.2 kg;
      embodied (100 + 200) kg * min(1, 12 / (12 * 5)) = 60 kg;
      work 0.5 * 730 * 12 * 1 = 4,380 reference GPU-hours:
      (832.2 + 60) * 1000 / 4,380 = 203.69863 g per reference GPU-hour.
    Rented cloud/one (1 x ref) on its region: grid FR 50 g/kWh, PUE 1.2:
      power 250 W + the 1-GPU tier's 100 W = 0.35 kW -> 0.35 * 1.2 * 50 = 21 g an hour;
      embodied 100 + 1/8 * 800 = 200 kg over 5 * 8,760 h -> 200,000 / 43,800 = 4.5662100 g
      an hour; one reference GPU-hour an hour: 25.566210 g per reference GPU-hour, at any u,
      and reserved for a year the same (its idle committed hours emit nothing here).
    """
    result = compare(REQUEST, _catalog(), uncertainty={}, counts=(1,))
    options = _by_id(result)
    owned = options[("ref", "purchase")].carbon
    assert owned.p50 == pytest.approx((832.2 + 60) * 1000 / 4380, rel=REL)
    assert owned.p10 == owned.p50 == owned.p90
    for pricing in ("on_demand", "reserved_1y"):
        rented = options[("cloud/one", pricing)].carbon
        assert rented.p50 == pytest.approx(21 + 200_000 / 43_800, rel=REL)
    assert result.grid.id == "US" and result.grid.g_co2e_per_kwh == 400.0
    # the costs are those of the catalog without carbon figures, to the last bit
    plain = compare(REQUEST, cost_catalog(), uncertainty={}, counts=(1,))
    assert [(o.id, o.pricing, o.cost) for o in plain.options] == [
        (o.id, o.pricing, o.cost) for o in result.options
    ]
    assert all(o.carbon is None for o in plain.options) and plain.grid is None
    assert (
        wording(plain).carbon_note == ""
        and "carbon_note" not in ComparisonSchema().dump(plain)["wording"]
    )


def _scenario(buy: dict, rent: dict, u: float, catalog=None, samples: int = 4):
    doc = {
        "version": 1,
        "name": "same sides",
        "workload": {
            "precision": "fp16",
            "reference_gpu": (catalog or load_catalog()).reference_gpu,
        },
        "buy": buy,
        "rent": rent,
        "utilisation": [u],
        "horizon_months": REQUEST.horizon_months,
    }
    return scenarios.evaluate(doc, samples=samples, catalog=catalog).carbon.per_unit


def test_the_options_carbon_is_the_scenario_models_for_the_same_sides():
    catalog = _catalog()
    options = _by_id(compare(REQUEST, catalog, uncertainty={}, counts=(1,)))
    per = _scenario(
        {"gpu": "ref", "gpu_count": 1}, {"instance": "cloud/one", "pricing": "on_demand"},
        REQUEST.utilisation, catalog,
    )  # fmt: skip
    assert options[("ref", "purchase")].carbon.p50 == pytest.approx(per["buy"].p50[0], rel=SAME)
    assert options[("cloud/one", "on_demand")].carbon.p50 == pytest.approx(
        per["rent"].p50[0], rel=SAME
    )
    # the shipped catalog, on another grid and at another utilisation
    request = CompareRequest(utilisation=0.3, samples=16, grid="camx")
    shipped = _by_id(compare(request), count=4)
    per = _scenario(
        {"gpu": "rtx-4090", "gpu_count": 4, "grid": "CAMX"},
        {"instance": "aws/p3.8xlarge", "pricing": "reserved_1y"}, 0.3, samples=16,
    )  # fmt: skip
    owned = shipped[("rtx-4090", "purchase")].carbon.p50
    assert owned == pytest.approx(per["buy"].p50[0], rel=SAME)
    rented = shipped[("aws/p3.8xlarge", "reserved_1y")].carbon.p50
    assert rented == pytest.approx(per["rent"].p50[0], rel=SAME)


def test_an_owned_option_on_a_cleaner_grid_emits_less_and_costs_the_same():
    catalog = _catalog()
    us = _by_id(compare(REQUEST, catalog, uncertainty={}, counts=(1,)))
    fr = compare(replace(REQUEST, grid="fr"), catalog, uncertainty={}, counts=(1,))
    assert fr.request.grid == "FR"  # as the catalog spells it
    for key, o in _by_id(fr).items():
        assert o.cost == us[key].cost
        if o.side == "rent":
            assert o.carbon == us[key].carbon  # on its region's grid whatever the request's
    # ref x1 on FR: 0.2375 * 8,760 * 50 / 1000 = 104.025 kg + 60 kg over 4,380 ref GPU-hours
    assert _by_id(fr)[("ref", "purchase")].carbon.p50 == pytest.approx(
        (104.025 + 60) * 1000 / 4380, rel=REL
    )


def test_ranking_by_carbon_puts_the_unknown_last_and_keeps_the_cheapest_by_cost():
    request = CompareRequest(utilisation=0.5, model="llama-3.3-70b", samples=200)
    by_cost = compare(request)
    by_carbon = compare(replace(request, sort="carbon"))
    known = [o.carbon.p50 for o in by_carbon.options if o.carbon is not None]
    assert known == sorted(known) and len(known) > 10
    sides = [o.side for o in by_carbon.options]
    first_unknown = next(i for i, o in enumerate(by_carbon.options) if o.carbon is None)
    assert all(o.carbon is None for o in by_carbon.options[first_unknown:])
    assert set(sides[first_unknown:]) == {"api"} and "api" not in sides[:first_unknown]
    # the same options at the same costs, only in another order; ties stay cheapest first
    assert sorted(by_carbon.options, key=lambda o: (o.side, o.id, o.pricing, o.gpu_count or 0)) == (
        sorted(by_cost.options, key=lambda o: (o.side, o.id, o.pricing, o.gpu_count or 0))
    )
    apis = [o.cost.p50 for o in by_carbon.options[first_unknown:]]
    assert apis == sorted(apis)
    for side in ("cheapest_buy", "cheapest_rent", "cheapest_api"):
        assert getattr(by_carbon, side) == getattr(by_cost, side)
    assert by_carbon.breakeven_utilisation == by_cost.breakeven_utilisation
    assert "lowest carbon first" in wording(by_carbon).heading
    assert "lowest carbon first" not in wording(by_cost).heading


def test_an_unknown_grid_names_the_closest_ids():
    with pytest.raises(ScenarioError) as err:
        compare(CompareRequest(utilisation=0.5, grid="usx", samples=10))
    (error,) = err.value.errors
    assert error["path"] == "grid" and "unknown grid id 'usx'; closest: US" in error["message"]


# ---------------------------------------------------------------------------- command line


def test_the_table_has_a_carbon_column_within_100_columns(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    args = ["compare", "-u", "0.5", "--samples", "100", "--top", "0"]
    for extra in (
        [],
        ["--model", "llama-3.3-70b"],
        ["--model", "llama-3.3-70b", "--sort", "carbon"],
    ):
        assert main([*args, *extra]) == 0
        out = capsys.readouterr().out
        lines = out.splitlines()
        assert max(map(len, lines)) <= 100
        head = next(i for i, line in enumerate(lines) if line.lstrip().startswith("# "))
        assert "CO2e" in lines[head - 1] and "P50" in lines[head]
        assert "Carbon [g CO2e per " in out and "owned on grid US (United States" in out
    assert "— carbon not published" in out
    dashes = [i for i, line in enumerate(lines) if line.endswith(" —")]  # the APIs, last
    assert dashes and all("per token" in lines[i] for i in dashes)
    rows = lines[head + 2 : dashes[-1] + 1]  # the table's body, ranked by carbon
    grams = [float(r.split()[-2].replace(",", "")) for r in rows if r.endswith(" g")]
    # every option ranked (measured or estimated), as many as the JSON has
    ranked = compare(CompareRequest(utilisation=0.5, model="llama-3.3-70b", samples=100))
    assert grams == sorted(grams) and len(grams) + len(dashes) == len(rows)
    assert len(rows) == len(ranked.options) > 100


def test_json_and_csv_carry_each_options_carbon(capsys):
    args = ["compare", "-u", "0.5", "--samples", "100", "--model", "llama-3.3-70b"]
    assert main([*args, "--format", "json", "--grid", "fr"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["request"]["grid"] == "FR" and doc["grid"]["name"] == "France"
    owned = next(o for o in doc["options"] if o["side"] == "buy")
    assert set(owned["carbon_per_unit"]) == {"p10", "p50", "p90"}
    assert all(("carbon_per_unit" in o) == (o["side"] != "api") for o in doc["options"])
    assert main([*args, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert list(rows[0])[-3:] == ["carbon_g_p10", "carbon_g_p50", "carbon_g_p90"]
    for row in rows:
        assert (row["carbon_g_p50"] == "") == (row["side"] == "api")


# ------------------------------------------------------------------------------------ HTTP


@pytest.fixture
def client(tmp_path: Path):
    app = create_app({"TESTING": True, "DB": str(tmp_path / "runs.sqlite3"), "API_KEYS": ""})
    return app.test_client()


def test_post_compare_ranks_by_carbon_on_the_grid_asked(client):
    body = {"utilisation": 0.5, "samples": 100, "grid": "fr", "sort": "carbon"}
    answer = client.post("/v1/compare", json=body)
    assert answer.status_code == 200
    doc = answer.get_json()
    same = ComparisonSchema().dump(compare(CompareRequest(**body), load_catalog()))
    assert doc["options"] == json.loads(json.dumps(same["options"]))
    assert doc["wording"]["carbon_note"] == same["wording"]["carbon_note"]
    p50 = [o["carbon_per_unit"]["p50"] for o in doc["options"]]
    assert p50 == sorted(p50)
    spec = client.get("/openapi.json").get_json()["components"]["schemas"]
    assert spec["Compare"]["properties"]["sort"]["enum"] == ["cost", "carbon"]
    option = spec["CompareOption"]["properties"]["carbon_per_unit"]
    assert option["allOf"] == [{"$ref": "#/components/schemas/CompareCarbon"}]
    assert set(spec["CompareCarbon"]["properties"]) == {"p10", "p50", "p90"}
    assert "grid" in spec["Comparison"]["properties"]


def test_post_compare_bad_grid_and_sort_are_422_in_the_one_shape(client):
    answer = client.post("/v1/compare", json={"utilisation": 0.5, "grid": "usx"})
    assert answer.status_code == 422
    doc = answer.get_json()
    assert set(doc) == {"code", "status", "message", "errors"} and doc["code"] == 422
    assert doc["errors"] == [
        {"path": "grid", "message": "unknown grid id 'usx'; closest: US; see 'costmodel catalog "
         "grids'"}
    ]  # fmt: skip
    answer = client.post("/v1/compare", json={"utilisation": 0.5, "sort": "co2"})
    assert answer.status_code == 422
    assert answer.get_json()["errors"] == [
        {"path": "sort", "message": "Must be one of: cost, carbon."}
    ]
