"""Latency targets (``max_tpot_ms``, ``max_ttft_ms``) beside the per-user floor: which measured
rows still apply, the estimate at the targets (the docs' worked example, Llama 3.1 8B at fp8 on
one L40S), the error of a side that cannot meet them, plans, and ``compare --model`` leaving out
and counting the options that cannot, on the command line and over HTTP.

Decimal units: 1 GB = 1e9 bytes, 1 TFLOPS = 1e12 FLOP/s. Hand arithmetic is in the comments.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest

import pricing.estimated
import scenarios
from api import create_app
from cli import main
from pricing import CatalogError, ServingPoint, apply_serving, load_catalog, tokens_per_s
from pricing.calibration import published
from pricing.errors import ServingUnavailableError
from pricing.estimate import Calibration, Targets, TargetsUnmetError
from pricing.estimated import conditions, serving_estimate
from scenarios.compare import CompareRequest, ComparisonSchema, compare, option_count, wording
from tests.test_compare_model import MODEL
from tests.test_compare_model import _catalog as model_catalog

REL = 1e-9
#: The worked example's calibration: the reference form's constants.
EXAMPLE = Calibration(eta_b=0.45, eta_f=0.48, o_dec_s=0.0, o_pre_s=0.037)
#: The roofline itself, for the small test catalog: every efficiency 1, no fixed times.
IDEAL = Calibration(eta_b=1.0, eta_f=1.0, o_dec_s=0.0, o_pre_s=0.0)


def _use(monkeypatch, cal: Calibration, **sigmas: float) -> None:
    fit = dataclasses.replace(published(), calibration=cal, **sigmas)
    monkeypatch.setattr(pricing.estimated, "published", lambda: fit)  # a scenario's sides
    monkeypatch.setattr(pricing.calibration, "published", lambda: fit)  # compare's speeds


@pytest.fixture
def example(monkeypatch):
    _use(monkeypatch, EXAMPLE)


# Llama 3.1 8B at fp8 on one L40S (864 GB/s, 362 TFLOPS fp16, fp8 tensor cores: 724e12), the
# example's constants: W = 8.03e9 B, kv = 2 x 32 x 8 x 128 x 1 = 65,536 B per token, L = 1,500
#   t_dec(n) = (8.03e9 + n x 1,500 x 65,536) / (0.45 x 864e9) = (8.03e9 + 98,304,000 n) / 3.888e11
#   (memory-bound: the compute time 2 x 8.03e9 n / (0.48 x 724e12) = 4.6213e-5 n s is smaller)
#   t_pre = 2 x 8.03e9 x 1,000 / 3.4752e14 + 0.037 = 0.0832132 s
T_PRE = 2 * 8.03e9 * 1000 / (0.48 * 724e12) + 0.037


def _t_dec(n: int) -> float:
    return (8.03e9 + n * 1500 * 65_536) / (0.45 * 864e9)


def _l40s(targets: Targets, catalog=None):
    """Llama 3.1 8B at fp8 on one L40S, 1,000 + 1,000 tokens, estimated at ``targets``."""
    cat = catalog or load_catalog()
    model, gpu = cat.model("llama-3.1-8b"), cat.gpu("l40s")
    return serving_estimate(model, gpu, 1, "fp8", 1000, 1000, targets)


def _per_gpu(n: int) -> float:
    """tokens/s per GPU at batch n: n x 2,000 / (n t_pre + 1,000 t_dec(n))."""
    return n * 2000 / (n * T_PRE + 1000 * _t_dec(n))


def test_the_worked_example_under_a_tpot_ceiling(example):
    # max_tpot_ms 25: t_dec(17) = (8.03e9 + 1.671168e9) / 3.888e11 = 24.9516 ms <= 25, while
    # t_dec(18) = 9.799472e9 / 3.888e11 = 25.2044 ms; so n = 17, T = 17 x 0.0832132 + 24.9516
    # = 26.36619 s and 34,000 / 26.36619 = 1,289.530 tokens/s per GPU
    assert _t_dec(17) * 1e3 == pytest.approx(24.95, abs=5e-3) and _t_dec(18) > 0.025
    e = _l40s(Targets(None, 25))
    assert (e.point.batch, e.point.gpus_per_replica, e.point.bound) == (17, 1, "memory")
    assert e.value == pytest.approx(_per_gpu(17), rel=1e-12)
    assert e.value == pytest.approx(1289.530, rel=1e-6)
    assert e.point.tpot_ms == pytest.approx(24.9516, abs=5e-5)
    # TTFT = t_pre + t_dec(17) = 83.2132 + 24.9516 = 108.165 ms
    assert e.point.ttft_ms == pytest.approx(108.165, abs=5e-4)
    assert e.origin == "estimated" and e.caveats == () and not e.shape_differs
    assert conditions(e.point) == (
        "1 GPU per replica, batch 17, 24.95 ms per output token, 108.2 ms to first token"
    )


def test_a_ttft_ceiling_and_the_tightest_target_binds(example):
    # max_ttft_ms 110: t_pre + t_dec(n) <= 0.110 -> t_dec(n) <= 26.7868 ms; t_dec(24) =
    # (8.03e9 + 2.359296e9) / 3.888e11 = 26.7214 ms, t_dec(25) = 26.9743 ms: n = 24,
    # 48,000 / (24 x 0.0832132 + 26.7214) = 48,000 / 28.71856 = 1,671.39 tokens/s per GPU
    ttft = _l40s(Targets(None, None, 110))
    assert ttft.point.batch == 24 and ttft.point.ttft_ms == pytest.approx(109.935, abs=5e-4)
    assert ttft.value == pytest.approx(_per_gpu(24), rel=1e-12)
    assert ttft.value == pytest.approx(1671.39, abs=5e-3)
    # the floor of 30 tokens/s per user alone allows n = 37 (the docs' example); with
    # max_tpot_ms 25 as well, n = 17 binds
    both = _l40s(Targets(30, 25, 110))
    assert both.point.batch == 17
    floor = _l40s(Targets(30))
    assert floor.point.batch == 37 and floor.value == pytest.approx(2236.51, rel=1e-6)


def test_a_build_that_cannot_meet_a_target_says_the_best_it_can_do(example):
    # batch 1: t_dec(1) = (8.03e9 + 98,304,000) / 3.888e11 = 20.906 ms > 5 ms
    with pytest.raises(TargetsUnmetError) as caught:
        _l40s(Targets(None, 5))
    assert caught.value.best.tpot_ms == pytest.approx(_t_dec(1) * 1e3, rel=1e-12)
    assert str(caught.value) == (
        "1 x NVIDIA L40S cannot serve llama-3.1-8b at fp8 within max_tpot_ms 5: its fastest "
        "is 20.9 ms per output token (estimated at batch 1, 1 GPU per replica)"
    )
    # TTFT at batch 1 = 83.2132 + 20.906 = 104.12 ms > 50; per user 1,000 / (0.0832132 +
    # 20.906) = 47.64 tokens/s < 60
    with pytest.raises(TargetsUnmetError, match=r"max_ttft_ms 50: its quickest first token "
                       r"takes 104\.1 ms; min_tokens_per_s_per_user 60: its fastest is 47\.6 "
                       "tokens/s per user"):  # fmt: skip
        _l40s(Targets(60, None, 50))


# ------------------------------------------------------------------------- measured rows


def _mine(tpot_ms: float | None, ttft_ms: float | None = None) -> ServingPoint:
    """A row of the user's serving file: Llama 3.1 8B at fp8 on one L40S, 3,000 tokens/s."""
    return ServingPoint(
        id="llama-3.1-8b/fp8/l40s/1000x1000/lab",
        model="llama-3.1-8b",
        precision="fp8",
        gpu="l40s",
        gpus_per_replica=1,
        framework="vLLM",
        input_tokens=1000,
        output_tokens=1000,
        concurrency=32,
        offline=False,
        tokens_per_s_per_gpu=3000.0,
        tokens_per_s_per_user=40.0,
        as_of="2026-11-01",
        source="lab",
        ttft_ms=ttft_ms,
        tpot_ms=tpot_ms,
        file="lab.csv",
    )


def test_a_measured_row_applies_under_a_latency_target_only_where_it_measured_it():
    cat = load_catalog()
    # the catalog's rows measure no TPOT
    with pytest.raises(ServingUnavailableError) as caught:
        tokens_per_s(cat, "llama-3.1-8b", "fp8", "l40s", 1000, 1000, gpus=1, max_tpot_ms=25)
    message = str(caught.value)
    assert "serving" not in message and "within 25 ms per output token" in message
    assert "its rows do not measure the time per output token (max_tpot_ms 25)" in message
    # the user's row measured 20 ms per token: it applies within 25 ms, not within 15
    mine = apply_serving(cat, [_mine(20.0, 300.0)])
    row = tokens_per_s(mine, "llama-3.1-8b", "fp8", "l40s", 1000, 1000, gpus=1, max_tpot_ms=25)
    assert (row.value, row.origin) == (3000.0, "yours")
    with pytest.raises(ServingUnavailableError, match=r"its least measured time per output "
                       r"token is 20 ms, above max_tpot_ms 15"):  # fmt: skip
        tokens_per_s(mine, "llama-3.1-8b", "fp8", "l40s", 1000, 1000, gpus=1, max_tpot_ms=15)
    with pytest.raises(ServingUnavailableError, match=r"time to first token is 300 ms, above "
                       r"max_ttft_ms 200"):  # fmt: skip
        tokens_per_s(mine, "llama-3.1-8b", "fp8", "l40s", 1000, 1000, gpus=1, max_ttft_ms=200)
    with pytest.raises(CatalogError, match=r"max_ttft_ms must be a positive number \[ms\]"):
        tokens_per_s(cat, "llama-3.1-8b", "fp8", "l40s", 1000, 1000, max_ttft_ms=-1)


# ----------------------------------------------------------------------- scenarios, plans


def _doc(**workload) -> dict:
    return {
        "version": 1,
        "name": "8b on an L40S",
        "horizon_months": 36,
        "simulation": {"samples": 20},
        "workload": {
            "kind": "inference",
            "model": "llama-3.1-8b",
            "precision": "fp8",
            "input_tokens": 1000,
            "output_tokens": 1000,
            **workload,
        },
        "buy": {"gpu": "l40s", "gpu_count": 1},
        "rent": {"instance": "runpod/1x_l40s_secure"},
    }


def _speeds(answer) -> dict[str, object]:
    return {a.key: a for a in answer.assumptions if a.key.endswith("tokens_per_s_per_gpu")}


def test_a_scenario_serves_at_the_estimate_within_its_targets(example):
    found = _speeds(scenarios.evaluate(_doc(max_tpot_ms=25)))
    for side in ("buy", "rent"):  # 1,289.530 tokens/s per GPU, as worked above
        note = found[f"{side}.tokens_per_s_per_gpu"]
        assert note.value == pytest.approx(1289.530, rel=1e-6)
        assert note.source.startswith("estimated: calibrated roofline, leave-one-out error ±")
        assert ": llama-3.1-8b at fp8 on l40s: 1,289.5 tokens/s per GPU from " in note.source
        assert "batch 17" in note.source
    # without targets the catalog's measured row applies, as before
    before = _speeds(scenarios.evaluate(_doc()))
    assert before["buy.tokens_per_s_per_gpu"].source.startswith("catalog: ")


def test_a_scenario_uses_your_row_where_it_measured_the_latency_and_meets_it(example):
    catalog = apply_serving(load_catalog(), [_mine(20.0)])
    found = _speeds(scenarios.evaluate(_doc(max_tpot_ms=25), catalog=catalog))
    assert found["buy.tokens_per_s_per_gpu"].value == 3000.0
    assert found["buy.tokens_per_s_per_gpu"].source.startswith("yours (lab.csv): ")
    # within 15 ms the row does not meet the target, and the estimate cannot either
    with pytest.raises(scenarios.ScenarioError, match=r"its fastest is 20\.9 ms per output"):
        scenarios.evaluate(_doc(max_tpot_ms=15), catalog=catalog)


def test_a_side_that_cannot_meet_the_targets_is_an_error_at_its_key(example):
    with pytest.raises(scenarios.ScenarioError) as caught:
        scenarios.evaluate(_doc(max_tpot_ms=5))
    assert [e["path"] for e in caught.value.errors] == [
        "buy.tokens_per_s_per_gpu",
        "rent.tokens_per_s_per_gpu",
    ]
    assert caught.value.errors[0]["message"] == (
        "1 x NVIDIA L40S cannot serve llama-3.1-8b at fp8 within max_tpot_ms 5: its fastest "
        "is 20.9 ms per output token (estimated at batch 1, 1 GPU per replica); give "
        "buy.tokens_per_s_per_gpu"
    )


@pytest.mark.parametrize(
    ("workload", "path", "says"),
    [
        ({"max_tpot_ms": 0}, "workload.max_tpot_ms", "must be > 0 [ms], got 0"),
        ({"max_ttft_ms": "fast"}, "workload.max_ttft_ms", "number"),
        ({"kind": "training", "max_tpot_ms": 25}, "workload.max_tpot_ms", "only for inference"),
    ],
)
def test_bad_targets_are_named_by_their_key_path(workload, path, says):
    doc = _doc(**workload)
    if workload.get("kind") == "training":
        doc["workload"] = {"kind": "training", "max_tpot_ms": 25}
        doc["buy"], doc["rent"] = {"gpu": "l40s"}, {"instance": "runpod/1x_l40s_secure"}
    with pytest.raises(scenarios.ScenarioError) as caught:
        scenarios.load_mapping(doc)
    problems = {e["path"]: e["message"] for e in caught.value.errors}
    assert path in problems and says in problems[path]


def test_the_resolved_document_keeps_the_targets_given_only():
    given = scenarios.load_mapping(_doc(max_ttft_ms=500)).document["workload"]
    assert given["max_ttft_ms"] == 500 and "max_tpot_ms" not in given


def _plan(**workload) -> dict:
    return {
        "version": 1,
        "kind": "plan",
        "name": "8b service",
        "horizon_months": 12,
        "simulation": {"samples": 20},
        "workload": _doc(**workload)["workload"],
        "demand": {"million_tokens_per_month": 2000},
        "own": {"gpu": "l40s", "gpu_count": 1, "servers": {"min": 0, "max": 2}},
        "burst": {"instance": "runpod/1x_l40s_secure"},
    }


def test_a_plan_serves_its_demand_within_the_targets(example):
    answer = scenarios.evaluate(_plan(max_tpot_ms=25))
    found = _speeds(answer)
    # own and burst serve at 1,289.530 tokens/s per GPU: 1,289.530 x 3,600 / 1e6 = 4.642309 M
    # tokens per GPU-hour, the capacity the demand is served with
    for side in ("own", "burst"):
        assert found[f"{side}.tokens_per_s_per_gpu"].value == pytest.approx(_per_gpu(17), rel=REL)
    with pytest.raises(scenarios.ScenarioError) as caught:
        scenarios.evaluate(_plan(max_tpot_ms=5))
    assert {e["path"] for e in caught.value.errors} == {
        "own.tokens_per_s_per_gpu",
        "burst.tokens_per_s_per_gpu",
    }


# ------------------------------------------------------------------------------- compare


def _latency_catalog():
    """``test_compare_model``'s catalog (ref 16 GB, fast 24 GB, small 8 GB; instances one =
    1 x ref, duo = 2 x fast, tiny = 1 x small; m-15b measured on fast and ref) with memory
    bandwidths (ref 1,000, fast 1,500, small 500 GB/s) and m-15b's architecture: 10 layers,
    1 KV head of 50 values (kv = 2 x 10 x 1 x 50 x 1 = 1,000 B per token at fp8)."""
    base = model_catalog()
    speeds = {"ref": 1000.0, "fast": 1500.0, "small": 500.0}
    gpus = {k: replace(g, bandwidth_gbs=speeds[k]) for k, g in base.gpus.items()}
    model = replace(base.models[MODEL], layers=10, kv_heads=1, head_dim=50, arch_source="test")
    return replace(
        base,
        gpus=MappingProxyType(gpus),
        models=MappingProxyType({**base.models, MODEL: model}),
    )


#: Half-used, one year, every input at its value (as in test_compare_model).
REQUEST = CompareRequest(utilisation=0.5, horizon_months=12, samples=4, model=MODEL)

# m-15b at fp8 on fast (200e12 FLOP/s: the test architecture has no fp8 tensor cores), the
# ideal roofline (eta 1, no fixed times), 1,000/1,000 tokens: W = 15e9 B, L = 1,500.
#   one fast: t_dec(n) = max((15e9 + 1.5e6 n) / 1.5e12, 3e10 n / 2e14) = max(0.01 + 1e-6 n,
#     1.5e-4 n) s; t_pre = 3e13 / 2e14 = 0.15 s
#   duo, G = 2: t_dec(n) = max(0.005 + 5e-7 n, 7.5e-5 n) s; t_pre = 3e13 / 4e14 = 0.075 s;
#     compute-bound from n = 67: tokens/s per GPU = 2,000 n / (2 (0.075 n + 0.075 n)) = 6,666.67
#     (G = 1 on the duo is the one-fast figure, lower)


def test_compare_ranks_the_options_at_their_operating_points_by_hand(monkeypatch):
    # an estimate without error (sigma 0), so that every draw's cost is the hand-computed one
    _use(monkeypatch, IDEAL, sigma=0.0, sigma_dense=0.0, sigma_moe=0.0)
    catalog = _latency_catalog()
    r = replace(REQUEST, max_tpot_ms=10.0505)
    result = compare(r, catalog, uncertainty={}, counts=(1,))
    # one fast: 0.01 + 1e-6 n <= 0.0100505 -> n = 50; T = 50 x 0.15 + 1,000 x 0.01005 = 17.55 s;
    # 100,000 / 17.55 = 5,698.006 tokens/s per GPU. Owned (test_compare_model's by-hand costs):
    # (1,000 + 350.96064) / (4,380 h x 5,698.006 x 3,600 / 1e6 M tokens per GPU-hour)
    # duo: 7.5e-5 n <= 0.0100505 -> n = 134 (compute-bound), 6,666.67 tokens/s per GPU = 24 M
    # tokens per GPU-hour, 48 an instance-hour: on demand 6 / 48 = 0.125, spot 2 / 48
    one_fast = 100_000 / 17.55
    expected = {
        ("fast", "purchase"): 1350.96064 / (4380 * one_fast * 3600 / 1e6),
        ("cloud/duo", "spot"): 2.0 / 48,
        ("cloud/duo", "on_demand"): 6.0 / 48,
    }
    kept = {(o.id, o.pricing): o for o in result.options if o.side != "api"}
    assert set(kept) == set(expected)
    for key, cost in expected.items():
        assert kept[key].cost.p50 == pytest.approx(cost, rel=REL)
    assert kept[("fast", "purchase")].tokens_per_s_per_gpu == pytest.approx(one_fast, rel=REL)
    duo = kept[("cloud/duo", "spot")]
    assert duo.tokens_per_s_per_gpu == pytest.approx(20_000 / 3, rel=REL)
    assert (duo.source.id, duo.source.origin) == ("calibrated roofline", "estimated")
    assert duo.source.conditions.startswith("2 GPUs per replica, batch 134, 10.05 ms per output")
    assert result.unserved.misses_targets_servers == 0 and result.request.max_tpot_ms == 10.0505


def test_compare_leaves_out_and_counts_the_options_that_cannot_meet_the_targets(monkeypatch):
    _use(monkeypatch, IDEAL)
    catalog = _latency_catalog()
    # within 8 ms: one fast reaches 10.001 ms at batch 1 (left out); the duo at G = 2 reaches
    # 5.0005 ms and serves at n = 106 (7.5e-5 x 106 = 7.95 ms), 6,666.67 tokens/s per GPU
    eight = compare(replace(REQUEST, max_tpot_ms=8), catalog, uncertainty={}, counts=(1,))
    u = eight.unserved
    assert (u.misses_targets_servers, u.misses_targets_instances) == (1, 0)
    # the best of the one left out, at batch 1: TPOT 10.001 ms, TTFT 150 + 10.001 ms, per
    # user 1,000 / (0.15 + 10.001) = 98.5125 tokens/s
    assert u.misses_targets_best.tpot_ms == pytest.approx(10.001, rel=REL)
    assert u.misses_targets_best.ttft_ms == pytest.approx(160.001, rel=REL)
    assert u.misses_targets_best.tokens_per_s_per_user == pytest.approx(1000 / 10.151, rel=REL)
    assert {o.id for o in eight.options if o.side != "api"} == {"cloud/duo"}
    # within 4 ms neither: the best TPOT is the duo's 5.0005 ms and TTFT 75 + 5.0005 ms
    four = compare(replace(REQUEST, max_tpot_ms=4), catalog, uncertainty={}, counts=(1,))
    u = four.unserved
    assert (u.misses_targets_servers, u.misses_targets_instances) == (1, 1)  # duo's 2 pricings
    assert u.misses_targets_best.tpot_ms == pytest.approx(5.0005, rel=REL)
    assert u.misses_targets_best.ttft_ms == pytest.approx(80.0005, rel=REL)
    assert {o.side for o in four.options} == {"api"}
    # by model, owned servers are built only at the GPU counts of the catalog's platform tiers:
    # this catalog's one tier builds 1-GPU servers, and neither one fast (10.001 ms) nor one
    # ref (15e9 / 1e12 = 15 ms) meets 4 ms at batch 1: the two API offers are left, 2
    assert option_count(replace(REQUEST, max_tpot_ms=4), catalog) == 2
    assert wording(four).left_out.endswith(
        "1 server and 1 instance cannot serve within 4 ms per output token (the best any of "
        "them reaches: 5 ms per output token)."
    )
    assert "within 4 ms per output token" in wording(four).heading
    doc = ComparisonSchema().dump(four)
    assert doc["left_out"]["misses_targets_instances"] == 1
    assert doc["left_out"]["misses_targets_best"]["ttft_ms"] == pytest.approx(80.0005, rel=REL)
    assert doc["request"]["max_tpot_ms"] == 4 and "max_ttft_ms" not in doc["request"]


def test_compare_by_model_latency_flags_on_the_command_line(capsys):
    assert main(["compare", "-u", "0.5", "--max-tpot-ms", "25"]) == 2
    assert "--max-tpot-ms: only with a model" in capsys.readouterr().err
    assert main(["compare", "-u", "0.5", "--model", "llama-3.1-8b", "--max-ttft-ms", "0"]) == 2
    assert "--max-ttft-ms: " in capsys.readouterr().err


@pytest.fixture
def client(tmp_path: Path):
    app = create_app({"TESTING": True, "DB": str(tmp_path / "runs.sqlite3"), "API_KEYS": ""})
    return app.test_client()


@pytest.mark.parametrize(
    ("body", "paths"),
    [
        ({"model": "llama-3.1-8b", "max_tpot_ms": 0}, {"max_tpot_ms"}),
        ({"model": "llama-3.1-8b", "max_ttft_ms": "soon"}, {"max_ttft_ms"}),
        ({"max_tpot_ms": 25, "max_ttft_ms": 500}, {"max_tpot_ms", "max_ttft_ms"}),
    ],
)
def test_post_compare_bad_targets_are_422_at_their_key_paths(client, body, paths):
    answer = client.post("/v1/compare", json={"utilisation": 0.5, **body})
    assert answer.status_code == 422
    doc = answer.get_json()
    assert set(doc) == {"code", "status", "message", "errors"}
    assert {e["path"] for e in doc["errors"]} == paths


def test_post_compare_with_targets_echoes_them(client):
    body = {"utilisation": 0.5, "model": "llama-3.1-8b", "samples": 10, "max_tpot_ms": 40}
    answer = client.post("/v1/compare", json=body)
    assert answer.status_code == 200
    doc = answer.get_json()
    assert doc["request"]["max_tpot_ms"] == 40
    assert all(o["source"]["origin"] in ("estimated", "published") for o in doc["options"])
    spec = client.get("/openapi.json").get_json()
    assert {"max_tpot_ms", "max_ttft_ms"} <= set(
        spec["components"]["schemas"]["Compare"]["properties"]
    )


@pytest.mark.parametrize(
    ("workload", "path", "says"),
    [
        ({"max_tpot_ms": -5}, "workload.max_tpot_ms", "must be > 0 [ms]"),
        ({"max_ttft_ms": 0.5}, "buy.tokens_per_s_per_gpu", "its quickest first token takes"),
    ],
)
def test_post_evaluate_bad_or_unmet_targets_are_422_at_their_key_paths(
    client, workload, path, says
):
    answer = client.post("/v1/evaluate", json=_doc(**workload))
    assert answer.status_code == 422
    doc = answer.get_json()
    assert set(doc) == {"code", "status", "message", "errors"}
    found = {e["path"]: e["message"] for e in doc["errors"]}
    assert says in found[path]
