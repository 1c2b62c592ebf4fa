"""``compare`` by model: owned, rented and API options of serving one model ranked by cost per
M tokens, checked by hand on the three-GPU test catalog of ``test_compare`` with a model, its
serving rows and API offers; what is left out and counted, the command line, the HTTP door
and bad input."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest

from api import create_app
from cli import main
from pricing import ApiOffer, Model, ServingPoint, load_catalog
from scenarios.compare import (
    API_UNCERTAINTY,
    UNCERTAINTY,
    CompareRequest,
    ComparisonSchema,
    compare,
    load_request,
    option_count,
    wording,
)
from scenarios.errors import ScenarioError
from tests.test_compare import _catalog as training_catalog

REL = 1e-9
MODEL = "m-15b"


def _row(gpu: str, tokens_per_s: float, per_user: float | None) -> ServingPoint:
    return ServingPoint(
        id=f"{MODEL}/fp8/{gpu}/1000x1000/test",
        model=MODEL,
        precision="fp8",
        gpu=gpu,
        gpus_per_replica=1,
        framework="test",
        input_tokens=1000,
        output_tokens=1000,
        concurrency=8,
        offline=False,
        tokens_per_s_per_gpu=tokens_per_s,
        tokens_per_s_per_user=per_user,
        as_of="2026-02-01",
        source=f"bench of {gpu}",
    )


def _offer(name: str, model: str, p_in: float, p_out: float) -> ApiOffer:
    return ApiOffer(
        id=f"prov/{name}",
        provider="prov",
        name=name,
        model=model,
        input_usd_per_mtok=p_in,
        cached_input_usd_per_mtok=None,
        output_usd_per_mtok=p_out,
        as_of="2026-03-01",
        source=f"price list of {name}",
    )


def _catalog():
    """The training test catalog (GPUs ref 16 GB, fast 24 GB, small 8 GB; instances one = 1 x
    ref, duo = 2 x fast, tiny = 1 x small) with a 15-billion-parameter model measured at fp8 on
    fast (2,500 tokens/s per GPU, 30 per user) and ref (1,250, interactivity not measured), not
    on small; two API offers of it, one of another model and one of a proprietary model."""
    model = Model(MODEL, "M 15B", 15, None, ("fp8",), "test")
    other = Model("m-1b", "M 1B", 1, None, ("fp16",), "test")
    offers = (
        _offer("m-15b-dear", MODEL, 0.60, 0.80),
        _offer("m-15b-cheap", MODEL, 0.10, 0.50),
        _offer("m-1b", "m-1b", 0.01, 0.01),
        _offer("closed", "", 0.01, 0.01),
    )
    return replace(
        training_catalog(),
        models=MappingProxyType({model.id: model, other.id: other}),
        serving=(
            _row("fast", 2500.0, 30.0),
            _row("ref", 1250.0, None),
            ServingPoint(
                **{
                    **vars(_row("ref", 1.0, None)),
                    "model": "m-1b",
                    "precision": "fp16",
                    "id": "m-1b/fp16/ref/1000x1000/test",
                }
            ),
        ),  # fmt: skip
        api_offers=MappingProxyType({o.id: o for o in offers}),
    )


#: Half-used, one year, every input at its value: the numbers below are exact.
REQUEST = CompareRequest(utilisation=0.5, horizon_months=12, samples=4, model=MODEL)


def _by_hand() -> dict[tuple[str, str], float]:
    """The cost per M tokens [USD] of every option kept, worked by hand.

    No discounting or tax, 12 months of 730 h, u = 0.5, requests of 1,000 + 1,000 tokens.
    A GPU's work: tokens/s * 3600 / 1e6 M tokens an hour, serving scaling 1: fast 2,500 ->
    9 M tokens per GPU-hour.

    Owned fast x 1 (the 1-GPU tier: platform 1,000 USD, 100 W; defaults as in test_compare:
    electricity 0.1252 USD/kWh, PUE 1, resale -20 %/year):
      HW 5,000 -> resale 4,000, net 1,000; kW(u) = (40 + 100)/1000 + 0.5 * 360/1000 = 0.32;
      energy 0.32 * 730 * 0.1252 * 12 = 0.32 * 1,096.752 = 350.96064;
      work 0.5 * 730 * 12 * 9 = 39,420 M tokens -> (1,000 + 350.96064) / 39,420 = 0.0342710.
    Rented duo (2 x fast, 18 M tokens an instance-hour), on demand and spot, whatever u:
      6.0 / 18 = 0.333333; 2.0 / 18 = 0.111111.
    API offers, p_api = (1,000 p_in + 1,000 p_out) / 2,000, flat prices, whatever u:
      dear (0.60 + 0.80) / 2 = 0.70; cheap (0.10 + 0.50) / 2 = 0.30.
    Left out: ref x 1 and the instance one (1 x ref): 15 GB of fp8 weights > 0.9 * 16 GB =
    14.4 GB; small and tiny: no measurement; m-1b and the proprietary offer: another model.
    """
    return {
        ("fast", "purchase"): (1000 + 350.96064) / 39420,  # 0.0342710
        ("cloud/duo", "spot"): 2.0 / 18,  # 0.111111
        ("prov/m-15b-cheap", "per_token"): 0.30,
        ("cloud/duo", "on_demand"): 6.0 / 18,  # 0.333333
        ("prov/m-15b-dear", "per_token"): 0.70,
    }


def test_owned_rented_and_api_options_cost_per_m_tokens_by_hand():
    result = compare(REQUEST, _catalog(), uncertainty={}, counts=(1,))
    expected = _by_hand()
    assert [(o.id, o.pricing) for o in result.options] == sorted(expected, key=expected.get)
    for o in result.options:
        assert o.cost.p50 == pytest.approx(expected[(o.id, o.pricing)], rel=REL)
        assert o.cost.p10 == o.cost.p50 == o.cost.p90  # every input fixed
        assert o.unit == "million_tokens"
    assert result.unit == "million_tokens" and result.request.precision == "fp8"
    assert (result.cheapest_buy.id, result.cheapest_rent.pricing) == ("fast", "spot")
    assert result.cheapest_api.id == "prov/m-15b-cheap"
    api = result.cheapest_api
    assert (api.side, api.gpu, api.gpu_count, api.price_usd) == ("api", None, None, 0.30)
    assert api.price_source == "catalog: prov/m-15b-cheap (as of 2026-03-01)"
    assert (api.source.id, api.source.as_of, api.source.source) == (
        "prov/m-15b-cheap", "2026-03-01", "price list of m-15b-cheap",
    )  # fmt: skip
    fast = result.cheapest_buy
    assert fast.tokens_per_s_per_gpu == 2500.0
    assert (fast.source.id, fast.source.source) == (
        "m-15b/fp8/fast/1000x1000/test",
        "bench of fast",
    )


def test_an_api_costs_the_same_per_m_tokens_at_every_utilisation():
    # p_api = (3,000 * 0.10 + 1,000 * 0.50) / 4,000 = 0.20 for requests of 3,000 + 1,000 tokens
    for u in (0.05, 0.5, 1.0):
        r = replace(REQUEST, utilisation=u, input_tokens=3000, output_tokens=1000)
        result = compare(r, _catalog(), uncertainty={}, counts=(1,))
        cheap = next(o for o in result.options if o.id == "prov/m-15b-cheap")
        assert cheap.cost.p50 == pytest.approx(0.20, rel=REL)
        assert cheap.price_usd == pytest.approx(0.20, rel=REL)


def test_break_evens_against_the_cheapest_rented_and_api_by_hand():
    # Owned fast x 1 costs [1,000 + (0.14 + 0.36 u) * 1,096.752] / (8,760 * 9 * u) per M tokens:
    # 1,153.54528 + 394.83072 u = c * 78,840 u at u = 1,153.54528 / (78,840 c - 394.83072):
    # against spot duo (c = 2/18) 1,153.54528 / 8,365.16928 = 0.137899, against the cheap API
    # (c = 0.30) 1,153.54528 / 23,257.16928 = 0.0495994.
    result = compare(REQUEST, _catalog(), uncertainty={}, counts=(1,))
    rent, api = result.breakeven_utilisation, result.breakeven_vs_api
    assert rent.p50 == pytest.approx(1153.54528 / (78840 * 2 / 18 - 394.83072), rel=REL)
    assert api.p50 == pytest.approx(1153.54528 / (78840 * 0.30 - 394.83072), rel=REL)
    assert api.p10 == api.p90 == api.p50 and api.prob_never == 0
    words = wording(result).summary
    assert words[2] == "Cheapest API: prov/m-15b-cheap (per token), $0.300 per M tokens"
    assert words[4].startswith("Break-even utilisation of the cheapest owned against the ch")
    assert "5.0 %" in words[4] and "13.8 %" in words[3]


def test_options_without_a_measurement_or_room_for_the_weights_are_counted():
    catalog = _catalog()
    result = compare(REQUEST, catalog, uncertainty={}, counts=(1,))
    u = result.unserved
    assert (u.no_measurement_gpus, u.no_measurement_instances) == (1, 1)  # small, tiny
    assert (u.does_not_fit_servers, u.does_not_fit_instances) == (1, 1)  # ref x 1, one (2 prices)
    assert u.measured_gpus == ("fast", "ref")
    assert result.model.weights_gb == 15.0 and result.ruled_out == ()
    assert wording(result).left_out == (
        "1 GPU and 1 instance have no measurement of m-15b at fp8 (measured on fast, ref); "
        "1 server and 1 instance do not fit its 15 GB of weights in 90 % of their GPU memory."
    )
    # at 1, 2, 4 and 8 GPUs per server, those of 2 or more have no platform tier: ruled out
    every = compare(REQUEST, catalog, uncertainty={})
    assert len(every.options) == 5 and len(every.ruled_out) == 6  # fast and ref x 2, 4, 8
    assert option_count(REQUEST, catalog) == 11
    # a floor of 20 tokens/s per user: ref's row does not measure interactivity
    floor = compare(replace(REQUEST, min_tokens_per_s_per_user=20), catalog, uncertainty={},
                    counts=(1,))  # fmt: skip
    u = floor.unserved
    assert (u.no_measurement_gpus, u.no_measurement_instances, u.does_not_fit_servers) == (2, 2, 0)
    assert "no measurement of m-15b at fp8 serving at least 20 tokens/s per user" in (
        wording(floor).left_out
    )


def test_tier_and_memory_filters_come_before_the_counts():
    catalog = _catalog()
    neocloud = compare(replace(REQUEST, tier="neocloud"), catalog, uncertainty={}, counts=(1,))
    assert neocloud.unserved.no_measurement_instances == 0  # tiny is marketplace
    assert neocloud.unserved.does_not_fit_instances == 0  # one is hyperscaler
    assert {o.side for o in neocloud.options} == {"buy", "rent", "api"}  # APIs not filtered
    big = compare(replace(REQUEST, min_memory_gb=20), catalog, uncertainty={}, counts=(1,))
    # small x 1, ref x 1, one on demand and reserved, tiny on demand: 5 options
    assert big.left_out_by_min_memory == 5
    u = big.unserved
    assert (u.no_measurement_gpus, u.does_not_fit_servers, u.does_not_fit_instances) == (0, 0, 0)
    assert len(big.options) == 5  # the APIs are not filtered by memory either
    assert wording(big).left_out == ""


def test_an_owned_server_too_small_at_one_count_is_kept_at_another():
    # 15 GB at fp8 needs more than one ref (14.4 GB usable) but fits on two (28.8 GB); the
    # 2-GPU build has no platform tier in this catalog and is ruled out with the reason.
    result = compare(REQUEST, _catalog(), uncertainty={}, counts=(1, 2))
    assert result.unserved.does_not_fit_servers == 1
    assert {(r.id, r.gpu_count) for r in result.ruled_out} == {("fast", 2), ("ref", 2)}
    assert all("no platform tier" in r.reason for r in result.ruled_out)


def test_the_default_uncertainty_spreads_the_api_prices_too():
    result = compare(replace(REQUEST, samples=4000), _catalog(), counts=(1,))
    assert dict(result.uncertainty) == {**UNCERTAINTY, **API_UNCERTAINTY}
    dear = next(o for o in result.options if o.id == "prov/m-15b-dear")
    # the sum of two +-10 % triangulars around 0.30 and 0.40: P50 at 0.70, narrower than +-10 %
    assert dear.cost.p50 == pytest.approx(0.70, rel=0.005)
    assert 0.63 < dear.cost.p10 < dear.cost.p50 < dear.cost.p90 < 0.77
    again = compare(replace(REQUEST, samples=4000), _catalog(), counts=(1,))
    assert again.options == result.options  # same seed, same draws


def test_request_keys_of_a_comparison_by_model():
    with pytest.raises(ScenarioError) as err:
        load_request({"utilisation": 0.5, "input_tokens": 10, "min_tokens_per_s_per_user": 5})
    assert {e["path"] for e in err.value.errors} == {"input_tokens", "min_tokens_per_s_per_user"}
    with pytest.raises(ScenarioError) as err:
        load_request({"utilisation": 0.5, "precision": "fp8"})
    assert "training work is measured at fp32, fp16, int8" in err.value.errors[0]["message"]
    with pytest.raises(ScenarioError) as err:
        load_request({"utilisation": 0.5, "model": "x", "precision": "int8", "output_tokens": 0})
    assert {e["path"] for e in err.value.errors} == {"output_tokens"}  # fields first
    with pytest.raises(ScenarioError) as err:
        load_request({"utilisation": 0.5, "model": "x", "precision": "int8"})
    assert err.value.errors == [
        {"path": "precision", "message": "serving is measured at fp16, fp8, fp4, got 'int8'"}
    ]


@pytest.mark.parametrize(
    ("change", "path", "says"),
    [
        ({"model": "m-15"}, "model", "unknown model id 'm-15'; closest: m-15b"),
        ({"precision": "fp16"}, "precision", "the catalog serves m-15b at fp8, not fp16"),
    ],
)
def test_an_unknown_model_or_unmeasured_precision_names_the_choices(change, path, says):
    catalog = _catalog()
    for ask in (compare, option_count):
        with pytest.raises(ScenarioError) as err:
            ask(replace(REQUEST, **change), catalog)
        assert [e["path"] for e in err.value.errors] == [path]
        assert says in err.value.errors[0]["message"]


# ------------------------------------------------------------------------ the shipped catalog


def test_the_shipped_catalog_by_model_cites_every_option():
    catalog = load_catalog()
    request = CompareRequest(utilisation=0.5, model="llama-3.3-70b", precision="fp8", samples=200)
    result = compare(request, catalog)
    rows = {p.id: p for p in catalog.serving}
    priced = {g.id for g in catalog.gpus.values() if g.price_usd is not None}
    u = result.unserved
    assert u.no_measurement_gpus == len(priced - set(u.measured_gpus))
    assert u.no_measurement_instances == sum(
        1 for i in catalog.instances.values() if i.gpu not in u.measured_gpus
    )
    offers = {o.id for o in catalog.api_offers.values() if o.model == "llama-3.3-70b"}
    assert {o.id for o in result.options if o.side == "api"} == offers
    for o in result.options:
        if o.side == "api":
            assert o.source.as_of == catalog.api_offers[o.id].as_of
            continue
        row = rows[o.source.id]
        assert (row.model, row.precision, row.gpu) == ("llama-3.3-70b", "fp8", o.gpu)
        assert o.tokens_per_s_per_gpu == row.tokens_per_s_per_gpu
    p50 = [o.cost.p50 for o in result.options]
    assert p50 == sorted(p50)
    assert option_count(request, catalog) == len(result.options) + len(result.ruled_out)
    doc = ComparisonSchema().dump(result)
    assert set(doc) == {
        "request", "unit", "model", "catalog", "uncertainty", "options", "cheapest_buy",
        "cheapest_rent", "cheapest_api", "breakeven_utilisation", "breakeven_vs_api",
        "left_out_by_min_memory", "left_out", "ruled_out", "wording", "grid",
    }  # fmt: skip
    first = next(o for o in doc["options"] if o["side"] == "rent")
    assert "cost_per_unit" in first and "cost_per_reference_gpu_hour" not in first
    assert first["carbon_per_unit"]["p50"] > 0
    api = next(o for o in doc["options"] if o["side"] == "api")
    assert "gpu" not in api and "tokens_per_s_per_gpu" not in api
    assert "carbon_per_unit" not in api  # not published: absent, never zero
    json.dumps(doc, allow_nan=False)


def test_a_70b_model_at_fp16_does_not_fit_one_80_gb_gpu():
    # 70.56 B parameters x 2 bytes = 141.12 GB > 0.9 x 80 GB: one A100 80 GB does not hold it, two
    # would hold it, but its rows measure replicas of 4 and 8 GPUs, which do not hold for 2
    result = compare(CompareRequest(utilisation=0.5, model="llama-3.1-70b", samples=50))
    assert result.request.precision == "fp16"  # the first precision the catalog measures
    owned = {o.gpu_count for o in result.options if o.side == "buy" and o.gpu == "a100-sxm4-80gb"}
    assert owned == {4, 8} and result.unserved.does_not_fit_servers == 1
    ruled = {(r.id, r.gpu_count): r.reason for r in result.ruled_out}
    # its rows are measured on 4 and 8 GPUs per replica, which a 2-GPU build is no multiple of:
    # its throughput would be estimated, but an SXM module does not mount on the 2-GPU tier
    assert "an SXM module" in ruled[("a100-sxm4-80gb", 2)]


# ---------------------------------------------------------------------------- command line


def test_compare_by_model_prints_tokens(capsys):
    args = ["compare", "-u", "0.5", "--model", "llama-3.3-70b", "--samples", "100"]
    assert main([*args, "--precision", "fp8", "--top", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Cost per M tokens of Llama 3.3 70B Instruct (fp8) at 50 % util")
    assert "per M tokens" in out.split("Cheapest owned: ")[1].splitlines()[0]
    assert "Cheapest API: " in out and "have no measurement of llama-3.3-70b at fp8" in out
    assert (
        main([*args, "--format", "csv", "--input-tokens", "8192", "--output-tokens", "1024"]) == 0
    )
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["unit"] for r in rows} == {"million_tokens"}
    assert all(r["source_id"] for r in rows)
    assert {r["gpu"] for r in rows if r["side"] == "api"} == {""}
    assert main([*args, "--format", "json", "--min-tokens-per-s-per-user", "20"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["request"]["min_tokens_per_s_per_user"] == 20
    assert doc["wording"]["left_out"].startswith(f"{doc['left_out']['no_measurement_gpus']} GPUs")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--model", "llama-70b"], "--model: unknown model id 'llama-70b'; closest: llama-3.3-70b"),
        (["--model", "llama-3.3-70b", "--precision", "fp16"], "--precision: the catalog serve"),
        (["--input-tokens", "10"], "--input-tokens: only with a model"),
        (["--model", "llama-3.3-70b", "--output-tokens", "0"], "--output-tokens: must be >= 1"),
        (["--precision", "fp4"], "--precision: training work is measured at fp32, fp16, int8"),
    ],
)
def test_compare_by_model_bad_input_exits_2_naming_the_option(capsys, args, says):
    assert main(["compare", "-u", "0.5", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err and "Traceback" not in err


# ------------------------------------------------------------------------------------ HTTP


@pytest.fixture
def client(tmp_path: Path):
    app = create_app({"TESTING": True, "DB": str(tmp_path / "runs.sqlite3"), "API_KEYS": ""})
    return app.test_client()


def test_post_compare_by_model(client):
    body = {"utilisation": 0.5, "model": "LLAMA-3.3-70B", "samples": 100, "seed": 3}
    answer = client.post("/v1/compare", json=body)
    assert answer.status_code == 200
    doc = answer.get_json()
    assert doc["request"] == {
        "utilisation": 0.5, "precision": "fp8", "horizon_months": 36, "min_memory_gb": None,
        "tier": None, "samples": 100, "seed": 3, "model": "llama-3.3-70b", "input_tokens": 1000,
        "output_tokens": 1000, "min_tokens_per_s_per_user": None, "grid": "US", "sort": "cost",
    }  # fmt: skip
    same = ComparisonSchema().dump(compare(CompareRequest(**{**body, "model": "llama-3.3-70b"})))
    assert doc["options"] == json.loads(json.dumps(same["options"]))
    spec = client.get("/openapi.json").get_json()
    request = spec["components"]["schemas"]["Compare"]["properties"]
    assert {"model", "input_tokens", "output_tokens", "min_tokens_per_s_per_user"} <= set(request)


@pytest.mark.parametrize(
    ("body", "paths", "says"),
    [
        ({"model": "llama-3.3-70"}, {"model"}, "closest: llama-3.3-70b"),
        ({"model": "llama-3.3-70b", "precision": "fp16"}, {"precision"}, "at fp8, fp4"),
        ({"model": "llama-3.3-70b", "input_tokens": -1}, {"input_tokens"}, ">= 0"),
        ({"output_tokens": 100}, {"output_tokens"}, "only with a model"),
        ({"model": "", "min_tokens_per_s_per_user": 0}, {"model", "min_tokens_per_s_per_user"}, ""),
        ({"model": 7}, {"model"}, "string"),
    ],
)
def test_post_compare_by_model_bad_input_is_422_at_its_key_paths(client, body, paths, says):
    answer = client.post("/v1/compare", json={"utilisation": 0.5, **body})
    assert answer.status_code == 422
    doc = answer.get_json()
    assert set(doc) == {"code", "status", "message", "errors"}
    assert {e["path"] for e in doc["errors"]} == paths
    assert says in doc["message"]
