"""Inference scenarios: tokens as the unit of work, the hosted API as a third side, and their
errors at their key paths. The worked inference example of the model guide is reproduced
through a scenario document to 1e-6 relative."""

from __future__ import annotations

import copy

import pytest

import scenarios
from present import to_dict
from scenarios import ScenarioError
from tests.test_api_side import TABLE

REL = 1e-6
LEVELS = [0.0, 0.1, 0.25, 0.5, 1.0]
#: The worked example: 8 GPUs at 25,000 USD, 2,500 tokens/s each, against an 8-GPU instance
#: at 24 USD/h and an API at 0.60 in / 0.80 out USD per M tokens; every input fixed.
WORKED = {
    "version": 1,
    "name": "worked inference example",
    "horizon_months": 36,
    "discount_rate": 0.08,
    "utilisation": LEVELS,
    "simulation": {"samples": 1},
    "workload": {
        "kind": "inference",
        "model": "llama-3.3-70b",
        "precision": "fp8",
        "input_tokens": 1000,
        "output_tokens": 1000,
    },
    "buy": {
        "gpu": "h100-sxm5-80gb",
        "gpu_count": 8,
        "gpu_price_usd": 25_000,
        "platform_price_usd": 50_000,
        "setup_usd": 5_000,
        "gpu_power_w": 700,
        "gpu_idle_w": 100,
        "platform_power_w": 2_000,
        "electricity_usd_per_kwh": 0.10,
        "pue": 1.3,
        "hosting_usd_per_kw_month": 150,
        "maintenance_rate": 0.05,
        "gpu_annual_failure_rate": 0.05,
        "admin_usd_per_month": 500,
        "resale_annual_decay": 0.30,
        "tokens_per_s_per_gpu": 2500,
    },
    "rent": {
        "instance": {
            "name": "8-GPU instance",
            "gpu": "h100-sxm5-80gb",
            "gpu_count": 8,
            "on_demand_usd_per_hour": 24,
        },
        "price_annual_change": -0.15,
        "tokens_per_s_per_gpu": 2500,
    },
    "api": {"input_usd_per_mtok": 0.60, "output_usd_per_mtok": 0.80, "price_annual_change": -0.30},
}


def _doc(**changes) -> dict:
    """The worked document with ``changes`` by dotted key path (``None`` removes a key)."""
    doc = copy.deepcopy(WORKED)
    for path, value in changes.items():
        *heads, last = path.split("__")
        node = doc
        for head in heads:
            node = node.setdefault(head, {})
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value
    return doc


def _errors(doc: dict) -> dict[str, str]:
    with pytest.raises(ScenarioError) as exc:
        scenarios.evaluate(doc)
    return {e["path"]: e["message"] for e in exc.value.errors}


def test_the_worked_inference_example_through_a_document():
    result = to_dict(scenarios.evaluate(WORKED))
    assert result["cost_per_unit"]["unit"] == "million_tokens"
    assert "cost_per_reference_gpu_hour" not in result  # a training name, for training only
    for j, u in enumerate(LEVELS):
        buy, rent, api, per_mtok = TABLE[u]
        assert result["buy_tco"]["p50"][j] == pytest.approx(buy, rel=REL)
        assert result["rent_tco"]["p50"][j] == pytest.approx(rent, rel=REL, abs=1e-9)
        assert result["api_tco"]["p50"][j] == pytest.approx(api, rel=REL, abs=1e-9)
        costs = [result["cost_per_unit"][side]["p50"][j] for side in ("buy", "rent", "api")]
        if per_mtok is None:
            assert costs == [None, None, None]
        else:
            assert costs == pytest.approx(per_mtok, abs=5e-7)
    assert result["breakeven_utilisation"]["p50"] == pytest.approx(0.7051127, rel=REL)
    assert result["breakeven_vs_api"]["p50"] == pytest.approx(0.4191689, rel=REL)
    # no payback against renting at u = 0.5 within 36 months
    assert result["payback_months"]["p50"][3] is None
    assert result["payback_months"]["prob_never"][3] == 1.0
    # at u = 0.5 renting (225,757) beats the API (374,782) and buying (315,374)
    assert [result["cheapest_share"][s][3] for s in ("buy", "rent", "api")] == [0.0, 1.0, 0.0]
    assert result["verdict"].startswith("At 50 % utilisation renting is the cheapest option")
    assert "with renting at 70.5 %" in result["verdict"]
    assert "with the API at 41.9 %" in result["verdict"]


def test_tokens_as_relative_throughput_on_the_training_path_give_the_same_tco():
    # 2,500 tokens/s per GPU is 2,500 * 3,600 / 1e6 = 9 M tokens per GPU-hour: a training
    # scenario whose relative throughput is 9 (and scaling 1) does the same work in the same
    # hours, so its buy and rent TCO are the inference scenario's.
    training = _doc(workload={"precision": "fp16"}, api=None)
    for side in ("buy", "rent"):
        del training[side]["tokens_per_s_per_gpu"]
        training[side] |= {"relative_throughput": 9.0, "scaling_efficiency": 1.0}
    tokens = scenarios.evaluate(WORKED)
    hours = scenarios.evaluate(training)
    assert hours.unit == "reference_gpu_hour" and tokens.unit == "million_tokens"
    for side in ("buy_tco", "rent_tco"):
        got, want = getattr(tokens, side).p50, getattr(hours, side).p50
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_the_catalog_fills_serving_throughput_with_its_source():
    doc = _doc(buy__tokens_per_s_per_gpu=None, rent__tokens_per_s_per_gpu=None)
    result = scenarios.evaluate(doc)
    notes = {a.key: a for a in result.assumptions}
    # the measured row nearest 1000/1000 on an H100 at fp8: 1024/1024 with vLLM (offline rows at
    # 1000/1000 pool with it only when no interactivity floor is given)
    buy = notes["buy.tokens_per_s_per_gpu"]
    assert buy.origin == "catalog" and "h100-sxm5-80gb" in buy.source
    assert notes["buy.scaling_efficiency"].value == 1.0
    assert notes["buy.scaling_efficiency"].origin == "default"
    assert notes["api.input_usd_per_mtok"].origin == "given"


def test_a_catalog_api_offer_fills_its_prices_with_their_date():
    doc = _doc(api={"model": "together/llama-3.3-70b-instruct-turbo"})
    notes = {a.key: a for a in scenarios.evaluate(doc).assumptions}
    price = notes["api.input_usd_per_mtok"]
    assert price.origin == "catalog" and "together/llama-3.3-70b-instruct-turbo" in price.source
    assert "as of 20" in price.source


def test_weights_beyond_the_servers_memory_are_a_warning():
    # Llama 3.3 70B at fp16: 70.6 B parameters * 2 bytes = 141 GB, above 90 % of one 80 GB GPU
    doc = _doc(buy__gpu_count=1, workload__precision="fp16")
    codes = {w.code: w for w in scenarios.evaluate(doc).warnings}
    assert codes["model_does_not_fit"].side == "buy"
    assert "does not fit" in codes["model_does_not_fit"].message
    fits = {w.code for w in scenarios.evaluate(WORKED).warnings}  # 8 x 80 GB hold 71 GB
    assert "model_does_not_fit" not in fits


@pytest.mark.parametrize(
    ("changes", "path", "words"),
    [
        ({"workload__model": "llama-3.3-7b"}, "workload.model", "llama-3.3-70b"),
        ({"workload__precision": "int8"}, "workload.precision", "fp16, fp8, fp4"),
        ({"workload__input_tokens": -1}, "workload.input_tokens", ">= 0"),
        ({"workload__output_tokens": None}, "workload.output_tokens", "required"),
        ({"workload__reference_gpu": "v100-sxm2-16gb"}, "workload.reference_gpu", "training"),
        ({"api__model": "together/llama-70b"}, "api.model", "together/"),
        ({"api__input_usd_per_mtok": None}, "api.input_usd_per_mtok", "required"),
        ({"buy__relative_throughput": 9.0}, "buy.relative_throughput", "tokens_per_s_per_gpu"),
    ],
)
def test_bad_inference_input_is_refused_at_its_key_path(changes, path, words):
    errors = _errors(_doc(**changes))
    assert path in errors, errors
    assert words in errors[path]


def test_an_api_block_needs_inference_work():
    doc = scenarios.load_file(
        __import__("pathlib").Path(__file__).parents[1] / "scenarios/examples/worked-example.yaml"
    ).document
    errors = _errors({**doc, "api": WORKED["api"]})
    assert "inference" in errors["api"]


def test_tokens_per_second_on_a_training_side_are_refused():
    training = _doc(workload={"precision": "fp16"}, api=None)
    errors = _errors(training)
    assert "relative_throughput" in errors["buy.tokens_per_s_per_gpu"]


def test_a_gpu_without_serving_rows_names_the_gpus_that_have_them():
    doc = _doc(buy__gpu="rtx-2080-ti", buy__gpu_count=4, buy__tokens_per_s_per_gpu=None)
    message = _errors(doc)["buy.tokens_per_s_per_gpu"]
    assert "h100-sxm5-80gb" in message and "give buy.tokens_per_s_per_gpu" in message


def test_an_inline_model_needs_every_throughput_given():
    doc = _doc(workload__model={"name": "my 13B", "params_b": 13}, rent__tokens_per_s_per_gpu=None)
    message = _errors(doc)["rent.tokens_per_s_per_gpu"]
    assert "inline model" in message
    scenarios.evaluate(_doc(workload__model={"name": "my 13B", "params_b": 13}))  # given: runs


#: The worked serving plan: the worked example's server as `own` (0 to 4 of them), its 8-GPU
#: instance reserved for a year at 16 USD/h (0 to 2), the rest to its API; 20,000 M tokens in
#: month 1 growing 100 % a year, the busiest hour 1.6 times the mean.
PLAN = {
    "version": 1,
    "kind": "plan",
    "name": "worked serving plan",
    "horizon_months": 36,
    "discount_rate": 0.08,
    "simulation": {"samples": 1},
    "workload": WORKED["workload"],
    "demand": {"million_tokens_per_month": 20_000, "annual_growth": 1.0, "peak_to_mean": 1.6},
    "own": {**WORKED["buy"], "servers": {"min": 0, "max": 4}},
    "reserve": {
        "instance": {**WORKED["rent"]["instance"], "reserved_1y_usd_per_hour": 16},
        "pricing": "reserved_1y",
        "tokens_per_s_per_gpu": 2500,
        "instances": {"min": 0, "max": 2},
    },
    "burst": {"api": WORKED["api"]},
}


def _plan(**changes) -> dict:
    doc = copy.deepcopy(PLAN)
    for path, value in changes.items():
        head, _, key = path.partition("__")
        if value is None:
            doc[head].pop(key)
        else:
            doc[head][key] = value
    return doc


def test_the_worked_serving_plan_through_a_document():
    from tests.test_plan_load import TABLE as PLAN_TABLE

    result = scenarios.evaluate(PLAN)
    costs = {(c.servers, c.instances): c for c in result.candidates}
    for mix, (cost, share, util) in PLAN_TABLE.items():
        assert costs[mix].cost.mean == pytest.approx(cost, rel=REL)
        assert costs[mix].share_owned == pytest.approx(share, abs=5e-7)
        assert costs[mix].owned_utilisation == pytest.approx(util, abs=5e-7)
    assert (result.best.servers, result.best.instances) == (1, 0)
    assert result.verdict.startswith("Own 1 server and send the rest to the API")
    flat = scenarios.evaluate(_plan(demand__peak_to_mean=1.0))
    assert flat.best.cost.mean == pytest.approx(510137.0925, rel=REL)
    keys = {a.key for a in result.assumptions}
    assert {"burst.api.input_usd_per_mtok", "demand.million_tokens_per_month"} <= keys


@pytest.mark.parametrize(
    ("changes", "path", "words"),
    [
        (
            {"demand__reference_gpu_hours_per_month": 100},
            "demand.reference_gpu_hours_per_month",
            "training",
        ),
        ({"demand__million_tokens_per_month": None}, "demand.million_tokens_per_month", "required"),
        ({"burst__pricing": "spot"}, "burst.api", "only api"),
        ({"demand__peak_to_mean": 2.5}, "demand.peak_to_mean", "2"),
    ],
)
def test_bad_serving_plans_are_refused_at_their_key_paths(changes, path, words):
    errors = _errors(_plan(**changes))
    assert path in errors, errors
    assert words in errors[path]


def test_only_serving_plans_burst_to_an_api():
    training = _plan(demand__million_tokens_per_month=None, demand__reference_gpu_hours_per_month=1)
    training["workload"] = {"precision": "fp16"}
    errors = _errors(training)
    assert "inference" in errors["burst.api"]
