"""``compare``: every owned and rented option ranked by cost per reference GPU-hour, checked by
hand on a three-GPU, three-instance catalog; its filters, the command line and the HTTP door."""

from __future__ import annotations

import csv
import io
import json
import re
import time
from pathlib import Path
from types import MappingProxyType

import pytest

from api import create_app
from cli import main
from costmodel.result import Advice
from pricing import (
    GPU,
    Catalog,
    Instance,
    PlatformTier,
    apply_prices,
    load_catalog,
    read_prices,
)
from pricing.catalog import ScalingPoint
from scenarios.compare import (
    UNCERTAINTY,
    CompareRequest,
    ComparisonSchema,
    compare,
    load_request,
    market,
)
from scenarios.errors import ScenarioError

REL = 1e-9


def _gpu(gpu_id: str, memory: float, tdp: float, price: float, speed: float) -> GPU:
    return GPU(
        id=gpu_id,
        name=gpu_id.title(),
        family="Data center (test)",
        arch="test",
        year=2024,
        fp32_tflops=10.0 * speed,
        fp16_tflops=100.0 * speed,
        int8_tops=200.0 * speed,
        memory_gb=memory,
        bandwidth_gbs=None,
        tdp_w=tdp,
        idle_w=tdp / 10,
        idle_w_estimated=False,
        price_usd=price,
        price_estimated=False,
        cooling="blower",
        measured={"fp32": speed, "fp16": speed},
        measured_source="test",
        source="test",
    )


def _instance(name: str, tier: str, gpu: str, count: int, link: str, **prices: float) -> Instance:
    return Instance(
        id=f"cloud/{name}",
        provider="cloud",
        tier=tier,
        name=name,
        gpu=gpu,
        gpu_count=count,
        vcpus=8,
        ram_gib=64.0,
        region="test",
        as_of="2026-01-01",
        on_demand_usd_per_hour=prices["on_demand"],
        reserved_1y_usd_per_hour=prices.get("reserved_1y"),
        reserved_3y_usd_per_hour=prices.get("reserved_3y"),
        spot_usd_per_hour=prices.get("spot"),
        interconnect=link,
        source="test",
    )


def _catalog() -> Catalog:
    """Three GPUs (the reference, one twice and one half as fast), a 1-GPU platform tier only,
    and three instances: the reference on demand and reserved for a year, two fast GPUs on
    NVLink on demand and spot, the small GPU on demand."""
    gpus = {
        g.id: g
        for g in (
            _gpu("ref", memory=16, tdp=250, price=2000, speed=1.0),
            _gpu("fast", memory=24, tdp=400, price=4000, speed=2.0),
            _gpu("small", memory=8, tdp=150, price=500, speed=0.5),
        )
    }
    instances = {
        i.id: i
        for i in (
            _instance("one", "hyperscaler", "ref", 1, "pcie-x16", on_demand=2.0, reserved_1y=1.2),
            _instance("duo", "neocloud", "fast", 2, "nvlink", on_demand=6.0, spot=2.0),
            _instance("tiny", "marketplace", "small", 1, "pcie-x16", on_demand=0.4),
        )
    }
    tier = PlatformTier(
        gpu_count=1, name="1-GPU test box", cpu="cpu", dram_gb=32, psu_w=1000, chassis="tower",
        storage="ssd", network="1 GbE", interconnect="pcie-x16", price_usd=1000, power_w=100,
        source="test", estimated=False,
    )  # fmt: skip
    scaling = {
        (link, n): ScalingPoint(link, n, eff, False, "test")
        for link in ("pcie-x16", "nvlink")
        for n, eff in ((1, 1.0), (2, 0.9))
    }
    return Catalog(
        version="2026.01.01",
        as_of="2026-01-01",
        reference_gpu="ref",
        gpus=MappingProxyType(gpus),
        instances=MappingProxyType(instances),
        tiers=(tier,),
        scaling=MappingProxyType(scaling),
        bridge_factors=MappingProxyType({"fp16": 1.0}),
        files=MappingProxyType({}),
    )


#: Half-used, one year, every input at its value: the numbers below are exact.
REQUEST = CompareRequest(utilisation=0.5, horizon_months=12, samples=4, seed=0)


def _by_hand() -> dict[tuple[str, str], float]:
    """The cost per reference GPU-hour [USD] of every option, worked by hand.

    No discounting or tax, 12 months of 730 h, u = 0.5. Defaults: electricity 0.1252 USD/kWh,
    PUE 1, resale losing 20 %/year, no setup, hosting, maintenance or failures.

    Owned (one GPU on the 1-GPU tier: platform 1,000 USD, 100 W):
      TCO = HW - resale + kW(u) * 730 * 0.1252 * 12, resale = 0.8 * HW (one year at -20 %),
      kW(u) = (idle_w + 100)/1000 + u * (tdp_w - idle_w)/1000, and 730 * 0.1252 * 12 = 1,096.752;
      work = u * 730 * 12 * throughput = 4,380 * throughput reference GPU-hours.
      ref:   HW 3,000 -> 600; kW 0.125 + 0.5 * 0.225 = 0.2375 -> 260.4786; / 4,380
      fast:  HW 5,000 -> 1,000; kW 0.140 + 0.5 * 0.360 = 0.3200 -> 350.96064; / 8,760
      small: HW 1,500 -> 300; kW 0.115 + 0.5 * 0.135 = 0.1825 -> 200.157240; / 2,190
    Rented (one instance, its own throughput):
      on demand and spot: price / throughput, whatever u:
        one: 2.0 / 1 = 2.0; duo: 6.0 / (2 * 2.0 * 0.9) = 6.0 / 3.6; spot 2.0 / 3.6;
        tiny: 0.4 / 0.5 = 0.8
      reserved for a year: every hour of the term is paid, half of them used:
        one: 1.2 * 8,760 / (0.5 * 8,760 * 1) = 2.4
    """
    return {
        ("ref", "purchase"): (600 + 260.4786) / 4380,  # 0.196456
        ("fast", "purchase"): (1000 + 350.96064) / 8760,  # 0.154219
        ("small", "purchase"): (300 + 200.15724) / 2190,  # 0.228382
        ("cloud/duo", "spot"): 2.0 / 3.6,  # 0.555556
        ("cloud/tiny", "on_demand"): 0.8,
        ("cloud/duo", "on_demand"): 6.0 / 3.6,  # 1.666667
        ("cloud/one", "on_demand"): 2.0,
        ("cloud/one", "reserved_1y"): 2.4,
    }


def test_ranking_on_a_small_catalog_matches_the_hand_computation():
    result = compare(REQUEST, _catalog(), uncertainty={}, counts=(1,))
    expected = _by_hand()
    got = [(o.id, o.pricing) for o in result.options]
    assert got == sorted(expected, key=expected.get)  # cheapest first
    for o in result.options:
        cost = o.cost_per_reference_gpu_hour
        assert cost.p50 == pytest.approx(expected[(o.id, o.pricing)], rel=REL)
        assert cost.p10 == cost.p50 == cost.p90  # every input fixed
    assert {(o.side, o.gpu, o.gpu_count) for o in result.options if o.id == "cloud/duo"} == {
        ("rent", "fast", 2)
    }
    assert result.cheapest_buy.id == "fast" and result.cheapest_rent.pricing == "spot"
    assert result.left_out_by_min_memory == 0 and result.ruled_out == ()
    assert result.options[0].price_usd == 4000 and result.options[0].price_source == (
        "catalog: fast price"
    )


def test_break_even_between_the_cheapest_owned_and_rented_by_hand():
    # Owned fast x1 costs [1,000 + (0.14 + 0.36 u) * 1,096.752] / (8,760 * 2 * u) per reference
    # GPU-hour; spot duo costs 2.0 / 3.6 whatever u. Equal when
    # 1,000 + 153.54528 + 394.83072 u = (2.0 / 3.6) * 17,520 u = 9,733.333 u,
    # u = 1,153.54528 / (9,733.333 - 394.83072) = 0.123525.
    result = compare(REQUEST, _catalog(), uncertainty={}, counts=(1,))
    be = result.breakeven_utilisation
    expected = 1153.54528 / (2.0 / 3.6 * 17520 - 394.83072)
    assert be.p50 == pytest.approx(expected, rel=REL)
    assert be.p10 == be.p90 == be.p50 and be.prob_never == 0 and be.prob_always == 0


def test_min_memory_counts_what_it_leaves_out_and_tier_keeps_one_kind_of_provider():
    catalog = _catalog()
    result = compare(
        CompareRequest(**{**REQUEST.__dict__, "min_memory_gb": 16}), catalog, uncertainty={},
        counts=(1,),
    )  # fmt: skip
    assert result.left_out_by_min_memory == 2  # small x1 owned, cloud/tiny on demand
    assert {o.gpu for o in result.options} == {"ref", "fast"}
    result = compare(
        CompareRequest(**{**REQUEST.__dict__, "tier": "neocloud"}), catalog, uncertainty={},
        counts=(1,),
    )  # fmt: skip
    rented = [(o.id, o.pricing) for o in result.options if o.side == "rent"]
    assert rented == [("cloud/duo", "spot"), ("cloud/duo", "on_demand")]
    assert sum(o.side == "buy" for o in result.options) == 3  # owned options are not filtered


def test_options_that_cannot_be_built_are_ruled_out_with_the_reason():
    # the catalog has a 1-GPU tier only: 2, 4 and 8 per server have no platform price
    result = compare(REQUEST, _catalog(), uncertainty={})
    assert sum(o.side == "buy" for o in result.options) == 3
    assert len(result.ruled_out) == 9
    assert all(
        "buy.platform_price_usd: no platform tier of the catalog holds" in r.reason
        for r in result.ruled_out
    )
    four = next(r for r in result.ruled_out if r.gpu_count == 4)
    assert "buy.scaling_efficiency: no scaling data for 4 GPUs on pcie-x16" in four.reason
    assert {r.gpu_count for r in result.ruled_out} == {2, 4, 8}


def test_the_shipped_catalog_builds_modules_only_on_their_baseboards():
    # SXM and OAM modules at 1 and 2 per server (and the MI300X, an OAM module of 8-module
    # baseboards, at 4) are ruled out by the form_factor advice; on their baseboards they are
    # ranked. A single MI300X was the cheapest owned option at 1.95x the H100.
    result = compare(CompareRequest(utilisation=0.5, samples=200))
    cat = load_catalog()
    modules = {g.id for g in cat.gpus.values() if g.form_factor != "pcie" and g.price_usd}
    boards = {(g, n) for g in modules for n in (4, 8)} - {("mi300x", 4)}
    owned = {(o.id, o.gpu_count) for o in result.options if o.side == "buy"}
    assert boards <= owned
    off = {(g, n) for g in modules for n in (1, 2)} | {("mi300x", 4)}
    assert not off & owned
    ruled = {(r.id, r.gpu_count): r.reason for r in result.ruled_out}
    for gpu, n in off:
        assert "mounts only on a baseboard of modules" in ruled[(gpu, n)], (gpu, n)
    assert result.cheapest_buy.id != "mi300x"


def test_error_advice_rules_an_option_out(monkeypatch):
    def no_small_boxes(question):
        if any(side.path == "buy" and side.gpu.id == "small" for side in question.sides):
            yield Advice("too_small", "error", "the small GPU cannot be built")

    monkeypatch.setattr(market, "advise", lambda r: tuple(no_small_boxes(r)))
    result = compare(REQUEST, _catalog(), uncertainty={}, counts=(1,))
    assert "small" not in {o.id for o in result.options}
    assert [(r.id, r.reason) for r in result.ruled_out] == [
        ("small", "the small GPU cannot be built")
    ]


def test_a_ruled_out_option_is_named_in_words_as_a_ranked_one_is(monkeypatch):
    """A ruled-out row carries the ``name`` and ``pricing_name`` a ranked row has (the page's
    table of them shows "rent on demand", never "rent undefined")."""

    def no_small_rentals(question):
        if any(side.path == "rent" and side.gpu.id == "small" for side in question.sides):
            yield Advice("too_small", "error", "the small GPU cannot be rented")
        if any(side.path == "buy" and side.gpu.id == "small" for side in question.sides):
            yield Advice("too_small", "error", "the small GPU cannot be built")

    monkeypatch.setattr(market, "advise", lambda r: tuple(no_small_rentals(r)))
    result = compare(REQUEST, _catalog(), uncertainty={}, counts=(1,))
    doc = ComparisonSchema().dump(result)
    assert doc["ruled_out"] == [
        {"id": "small", "side": "buy", "pricing": "purchase", "gpu_count": 1,
         "reason": "the small GPU cannot be built", "name": "1 x small", "pricing_name": "own"},
        {"id": "cloud/tiny", "side": "rent", "pricing": "on_demand", "gpu_count": 1,
         "reason": "the small GPU cannot be rented", "name": "cloud/tiny",
         "pricing_name": "on demand"},
    ]  # fmt: skip
    ranked = {(o["name"], o["pricing_name"]) for o in doc["options"]}
    assert ("1 x ref", "own") in ranked and ("cloud/one", "reserved 1y") in ranked


def test_the_default_uncertainty_spreads_every_option_around_its_value():
    catalog = _catalog()
    fixed = compare(REQUEST, catalog, uncertainty={}, counts=(1,))
    wide = compare(CompareRequest(**{**REQUEST.__dict__, "samples": 4000}), catalog, counts=(1,))
    points = {(o.id, o.pricing): o.cost_per_reference_gpu_hour.p50 for o in fixed.options}
    for o in wide.options:
        cost = o.cost_per_reference_gpu_hour
        assert cost.p10 < cost.p50 < cost.p90
        assert cost.p50 == pytest.approx(points[(o.id, o.pricing)], rel=0.02)
        if o.side == "rent" and o.pricing != "reserved_1y":  # +-10 % triangular on the price
            assert cost.p90 / cost.p50 == pytest.approx(1 + 0.1 * (1 - 0.2**0.5), rel=0.01)
    assert dict(wide.uncertainty) == dict(UNCERTAINTY)


def test_the_shipped_catalog_is_compared_in_seconds():
    start = time.perf_counter()
    result = compare(CompareRequest(utilisation=0.5, samples=2000))
    elapsed = time.perf_counter() - start
    owned = sum(o.side == "buy" for o in result.options)
    assert owned >= 4 * 40 and len(result.options) - owned >= 130
    assert elapsed < 30  # measured: about 0.5 s cold, 0.15 s once resolved (README)
    doc = ComparisonSchema().dump(result)
    assert set(doc) == {
        "request", "reference_gpu", "catalog", "uncertainty", "options", "cheapest_buy",
        "cheapest_rent", "breakeven_utilisation", "left_out_by_min_memory", "ruled_out", "wording",
        "grid",
    }  # fmt: skip
    first = doc["options"][0]
    assert set(first) == {
        "id", "catalog_id", "side", "pricing", "gpu", "gpu_count", "cost_per_reference_gpu_hour",
        "price_usd",
        "price_source", "price_origin", "warnings", "name", "pricing_name", "from_peaks",
        "carbon_per_unit",
    }  # fmt: skip
    assert {o["price_origin"] for o in doc["options"]} == {"catalog"}
    assert set(first["cost_per_reference_gpu_hour"]) == {"p10", "p50", "p90"}
    p50 = [o["cost_per_reference_gpu_hour"]["p50"] for o in doc["options"]]
    assert p50 == sorted(p50)
    json.dumps(doc, allow_nan=False)
    # each option's id is its own (a GPU came 4 times, at 1, 2, 4 and 8 per server; an
    # instance at each of its pricings), the catalog's id beside it
    ids = [o["id"] for o in doc["options"]]
    assert len(set(ids)) == len(ids) > 100
    owned = next(o for o in doc["options"] if o["side"] == "buy")
    assert owned["id"] == f"{owned['catalog_id']}:{owned['gpu_count']}x"
    rented = next(o for o in doc["options"] if o["side"] == "rent")
    assert rented["id"] == f"{rented['catalog_id']}:{rented['pricing']}"


def test_request_errors_name_their_key_paths():
    with pytest.raises(ScenarioError) as err:
        load_request({"utilisation": 0, "tier": "cloud", "horizon_months": 0, "colour": 1})
    paths = {e["path"] for e in err.value.errors}
    assert paths == {"utilisation", "tier", "horizon_months", "colour"}
    # the precision left out is the work's default: fp16 for training
    assert load_request({"utilisation": 1}).precision is None
    result = compare(load_request({"utilisation": 1, "samples": 1}), _catalog(), uncertainty={})
    assert result.request.precision == "fp16"


# --------------------------------------------------------------------------------- command line


def test_the_table_labels_each_price_by_what_it_buys(capsys, monkeypatch):
    # an owned option's price is per GPU, a rented one's per instance-hour
    monkeypatch.setenv("COLUMNS", "200")  # wide enough for the price column
    assert main(["compare", "-u", "0.5", "--samples", "200", "--top", "0"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\$[\d,]+/GPU", out) and re.search(r"\$[\d.,]+/h", out)


def test_compare_prints_a_table_json_and_csv(capsys):
    assert main(["compare", "--utilisation", "0.5", "--samples", "200", "--top", "5"]) == 0
    out = capsys.readouterr().out
    assert "Cost per reference GPU-hour at 50 % utilisation" in out
    assert "Cheapest owned:" in out and "Cheapest rented:" in out
    assert "Break-even utilisation between them:" in out
    assert main(["compare", "-u", "0.5", "--samples", "200", "--min-memory", "80",
                 "--format", "json"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert doc["left_out_by_min_memory"] > 0
    assert all(o["cost_per_reference_gpu_hour"]["p50"] > 0 for o in doc["options"])
    assert main(["compare", "-u", "0.5", "--samples", "200", "--tier", "marketplace",
                 "--format", "csv"]) == 0  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    rented = [r for r in rows if r["side"] == "rent"]
    assert rented and all(r["catalog_id"].startswith("vastai/") for r in rented)
    assert [int(r["rank"]) for r in rows] == list(range(1, len(rows) + 1))
    assert len({r["id"] for r in rows}) == len(rows)  # unique: a GPU at 1, 2, 4 and 8


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--utilisation", "0"], "--utilisation: must be at least 1e-06 [-], got 0"),
        (["--utilisation", "1.5"], "--utilisation: must be <= 1 [-], got 1.5"),
        (["-u", "0.5", "--tier", "cloud"], "--tier: Must be one of: hyperscaler"),
        (["-u", "0.5", "--precision", "fp64"], "--precision: Must be one of: fp32, fp16, int8"),
        (["-u", "0.5", "--horizon", "0"], "--horizon: Must be greater than or equal to 1"),
        (["-u", "0.5", "--min-memory", "0.1"], "--min-memory: Must be greater than or equal"),
        (["-u", "0.5", "--top", "-1"], "--top must be 0 (all) or more"),
        (["-u", "0.5", "--grid", "usx"], "--grid: unknown grid id 'usx'; closest: US"),
        (["-u", "0.5", "--sort", "co2"], "--sort: Must be one of: cost, carbon."),
    ],
)
def test_compare_bad_input_exits_2_naming_the_option(capsys, args, says):
    assert main(["compare", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err


def test_compare_without_a_utilisation_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["compare"])
    assert exit_.value.code == 2
    assert "--utilisation" in capsys.readouterr().err


def test_compare_uses_the_prices_file(tmp_path, capsys):
    path = tmp_path / "prices.yaml"
    path.write_text(
        "- {gpu: rtx-4090, usd: 10, as_of: 2026-01-01, source: a gift}\n", encoding="utf-8"
    )
    assert main(["compare", "-u", "0.5", "--samples", "100", "--prices", str(path),
                 "--format", "json"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    mine = [o for o in doc["options"] if o["catalog_id"] == "rtx-4090"]
    assert {o["price_usd"] for o in mine} == {10.0}
    assert mine[0]["price_source"] == "prices.yaml: a gift (as of 2026-01-01)"
    assert doc["options"][0]["catalog_id"] == "rtx-4090"  # nearly free GPUs win


# ------------------------------------------------------------------------------------------ HTTP


@pytest.fixture
def client(tmp_path: Path):
    app = create_app({"TESTING": True, "DB": str(tmp_path / "runs.sqlite3"), "API_KEYS": ""})
    return app.test_client()


def test_post_compare_answers_the_ranked_options(client):
    answer = client.post("/v1/compare", json={"utilisation": 0.5, "samples": 100, "seed": 3})
    assert answer.status_code == 200
    doc = answer.get_json()
    assert doc["request"] == {
        "utilisation": 0.5, "precision": "fp16", "horizon_months": 36, "min_memory_gb": None,
        "tier": None, "samples": 100, "seed": 3, "grid": "US", "sort": "cost",
    }  # fmt: skip
    assert doc["cheapest_buy"]["side"] == "buy" and doc["cheapest_rent"]["side"] == "rent"
    assert 0 < doc["breakeven_utilisation"]["p50"] < 1
    same = ComparisonSchema().dump(compare(CompareRequest(utilisation=0.5, samples=100, seed=3)))
    assert doc["options"] == json.loads(json.dumps(same["options"]))


@pytest.mark.parametrize(
    ("body", "paths"),
    [
        ({}, {"utilisation"}),
        ({"utilisation": 0}, {"utilisation"}),
        ({"utilisation": 0.5, "tier": "cloud", "precision": "fp64"}, {"tier", "precision"}),
        (
            {"utilisation": 0.5, "min_memory_gb": 1000, "horizon_months": 241},
            {"min_memory_gb", "horizon_months"},
        ),  # fmt: skip
        ({"utilisation": 0.5, "samples": 0, "seed": -1}, {"samples", "seed"}),
        ({"utilisation": 0.5, "colour": "red"}, {"colour"}),
        ({"utilisation": "half"}, {"utilisation"}),
        ({"utilisation": 0.5, "samples": 10**6}, {"samples"}),  # over COSTMODEL_MAX_SAMPLES
        ({"utilisation": 0.5, "sort": "co2", "grid": ""}, {"sort", "grid"}),
        ({"utilisation": 0.5, "grid": "usx"}, {"grid"}),  # not in the catalog: closest named
    ],
)
def test_post_compare_bad_input_is_422_at_its_key_paths(client, body, paths):
    answer = client.post("/v1/compare", json=body)
    assert answer.status_code == 422
    doc = answer.get_json()
    assert set(doc) == {"code", "status", "message", "errors"}
    assert {e["path"] for e in doc["errors"]} == paths


def test_post_compare_takes_strict_json_only(client):
    assert client.post("/v1/compare", data="u=0.5", content_type="text/plain").status_code == 415
    nan = client.post("/v1/compare", data='{"utilisation": NaN}', content_type="application/json")
    assert nan.status_code == 400
    spec = client.get("/openapi.json").get_json()
    operation = spec["paths"]["/v1/compare"]["post"]
    assert {"200", "415", "422"} <= set(operation["responses"])
    assert "utilisation" in spec["components"]["schemas"]["Compare"]["required"]


def test_read_prices_and_compare_share_the_overlay(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text(
        "instance,pricing,usd_per_hour,as_of,source\ncloud/one,spot,0.5,2026-01-01,q\n",
        encoding="utf-8",
    )
    catalog = apply_prices(_catalog(), read_prices(path))
    result = compare(REQUEST, catalog, uncertainty={}, counts=(1,))
    spot = next(o for o in result.options if o.id == "cloud/one" and o.pricing == "spot")
    assert spot.cost_per_reference_gpu_hour.p50 == pytest.approx(0.5, rel=REL)
    assert spot.price_source == "p.csv: q (as of 2026-01-01)"


def test_the_wording_is_written_once_for_every_door(capsys):
    """The sentences the CLI prints are the ones the JSON (and so the page) carries."""
    result = compare(REQUEST, _catalog(), uncertainty={})
    words = ComparisonSchema().dump(result)["wording"]
    assert words["summary"][0].startswith("Cheapest owned: 1 x ")
    assert words["summary"][2].startswith("Break-even utilisation between them: ")
    assert words["heading"].startswith("Cost per reference GPU-hour at ")
    from rich.console import Console

    from cli.tables import print_compare

    out = io.StringIO()
    print_compare(result, Console(file=out, width=200, color_system=None))
    text = out.getvalue()
    assert words["heading"] in text
    assert all(line in text for line in words["summary"])
