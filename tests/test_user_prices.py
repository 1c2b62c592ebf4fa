"""Prices in the user's terms: a whole server's price, a price per GPU-hour, and the advice on a
price far from the catalog's (docs/scenario-format.md)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

import scenarios
from costmodel.distributions import Discrete, LogNormal, Normal, Pert, Uniform
from present import to_dict
from scenarios.errors import ScenarioError
from scenarios.userprices import _affine

EXAMPLES = Path(__file__).resolve().parents[1] / "scenarios" / "examples"


def _doc(buy: dict, rent: dict) -> dict:
    return {
        "version": 1,
        "name": "user prices",
        "utilisation": [0.25, 0.5, 1.0],
        "simulation": {"samples": 400, "seed": 7},
        "buy": buy,
        "rent": rent,
    }


def _numbers(doc: dict) -> dict:
    """The result's numbers, without the parts that record how the inputs were written."""
    out = to_dict(scenarios.evaluate(scenarios.load_mapping(doc)))
    return {k: v for k, v in out.items() if k in ("tco_buy", "tco_rent", "breakeven", "payback")}


H100 = {"gpu": "h100-sxm5-80gb", "gpu_count": 8, "gpu_price_usd": 25_000}
RENT = {"instance": "aws/p5.48xlarge"}


def test_a_server_price_is_its_gpus_and_its_platform():
    # 8 GPUs at 25,000 in a 300,000 server: the platform is 300,000 - 8 x 25,000 = 100,000
    rent = {"instance": "aws/p5.48xlarge"}
    server = scenarios.load_mapping(_doc({**H100, "server_price_usd": 300_000}, rent))
    split = scenarios.load_mapping(_doc({**H100, "platform_price_usd": 100_000}, rent))
    assert server.resolved.inputs.buy.platform_price_usd.value == 100_000
    assert _numbers(server.document) == _numbers(split.document)
    (note,) = [a for a in server.resolved.assumptions if a.key == "buy.platform_price_usd"]
    assert note.value == 100_000 and note.origin == "given"
    assert note.source == "scenario: buy.server_price_usd less 8 GPUs at 25,000.00 USD"
    # the resolved document gives the split, so that it loads again as the same scenario
    assert "server_price_usd" not in server.document["buy"]
    assert server.document["buy"]["platform_price_usd"] == 100_000


def test_a_server_priced_at_its_gpus_has_a_free_platform():
    # 6 x 29,266.81 = 175,600.86 on paper, but 175,600.86000000003 in floating point: the server
    # at 175,600.86 lies 2.9e-11 "below" its GPUs, within 1e-9 x 175,600.86 = 1.8e-4 USD, so it
    # is a tie and the platform is free (it was refused: "the platform would cost -0.00 USD")
    assert 6 * 29_266.81 > 175_600.86
    gpus = {"gpu": "h100-sxm5-80gb", "gpu_count": 6, "gpu_price_usd": 29_266.81}
    sc = scenarios.load_mapping(_doc({**gpus, "server_price_usd": 175_600.86}, RENT))
    assert sc.resolved.inputs.buy.platform_price_usd.value == 0.0
    # a server a cent below its GPUs is still refused
    with pytest.raises(ScenarioError, match="would cost -0.01 USD"):
        scenarios.load_mapping(_doc({**gpus, "server_price_usd": 175_600.85}, RENT))


def test_a_server_price_distribution_keeps_its_form():
    # pert(280k, 300k, 350k) - 8 x 25,000 = pert(80k, 100k, 150k)
    price = {"dist": "pert", "low": 280_000, "mode": 300_000, "high": 350_000}
    sc = scenarios.load_mapping(
        _doc({**H100, "server_price_usd": price}, {"instance": "aws/p5.48xlarge"})
    )
    assert sc.resolved.inputs.buy.platform_price_usd == Pert(80_000, 100_000, 150_000)


def test_a_price_per_gpu_hour_is_times_the_instance_gpus():
    # 2.50 per GPU-hour on an 8-GPU instance: 2.50 x 8 = 20.00 per instance-hour
    buy = {"gpu": "h100-sxm5-80gb", "gpu_count": 8}
    per_gpu = _doc(buy, {"instance": "aws/p5.48xlarge", "price_usd_per_gpu_hour": 2.5})
    per_instance = _doc(buy, {"instance": "aws/p5.48xlarge", "price_usd_per_hour": 20.0})
    sc = scenarios.load_mapping(per_gpu)
    assert sc.resolved.inputs.rent.price_usd_per_hour.value == 20.0
    assert _numbers(per_gpu) == _numbers(per_instance)
    (note,) = [a for a in sc.resolved.assumptions if a.key == "rent.price_usd_per_hour"]
    assert note.source == "scenario: rent.price_usd_per_gpu_hour x the instance's 8 GPUs"
    # uniform(2, 3) per GPU-hour: uniform(16, 24) per instance-hour
    uniform = {"dist": "uniform", "low": 2, "high": 3}
    ranged = _doc(buy, {"instance": "aws/p5.48xlarge", "price_usd_per_gpu_hour": uniform})
    rent = scenarios.load_mapping(ranged).resolved.inputs.rent
    assert rent.price_usd_per_hour == Uniform(16.0, 24.0)


def test_plans_take_both_terms():
    plan = yaml.safe_load((EXAMPLES / "plan-worked-example.yaml").read_text())
    other = copy.deepcopy(plan)
    # own: 2 GPUs at 1,500 and a 2,500 platform = a 5,500 server; burst: 1 GPU, per GPU-hour
    del other["own"]["platform_price_usd"]
    other["own"]["server_price_usd"] = 5_500
    other["burst"]["price_usd_per_gpu_hour"] = other["burst"].pop("price_usd_per_hour")
    other["reserve"]["price_usd_per_gpu_hour"] = other["reserve"].pop("price_usd_per_hour")
    a, b = (to_dict(scenarios.evaluate(doc)) for doc in (plan, other))
    assert a["candidates"] == b["candidates"] and a["best"] == b["best"]


@pytest.mark.parametrize(
    ("buy", "rent", "path", "says"),
    [
        ({**H100, "server_price_usd": 150_000}, {}, "buy.server_price_usd",
         "below its 8 GPUs at 25,000.00 USD: N x G = 200,000.00 USD, so the platform would cost "
         "-50,000.00 USD"),
        ({**H100, "server_price_usd": {"dist": "uniform", "low": 190_000, "high": 260_000}}, {},
         "buy.server_price_usd", "(as low as 190,000.00 USD) is below"),
        ({**H100, "server_price_usd": 300_000, "platform_price_usd": 1}, {}, "buy.server_price_usd",
         "give buy.server_price_usd or buy.platform_price_usd, not both"),
        ({**H100, "gpu_price_usd": {"dist": "uniform", "low": 2e4, "high": 3e4},
          "server_price_usd": 300_000}, {}, "buy.server_price_usd",
         "needs buy.gpu_price_usd as a number"),
        ({**H100, "server_price_usd": {"dist": "lognormal", "median": 3e5, "p90": 4e5,
                                       "high": 1e6}}, {},
         "buy.server_price_usd", "a lognormal server price cannot be split"),
        ({"gpu": "rtx-4090", "gpu_count": 1},
         {"price_usd_per_gpu_hour": 2, "price_usd_per_hour": 16}, "rent.price_usd_per_gpu_hour",
         "not both: one is the other times the instance's 8 GPUs"),
        ({"gpu": "rtx-4090", "gpu_count": 1}, {"price_usd_per_gpu_hour": -1},
         "rent.price_usd_per_gpu_hour", "values must lie in [0, 10,000] [USD/GPU-hour]"),
    ],
)  # fmt: skip
def test_prices_in_the_wrong_terms_are_errors_at_their_keys(buy, rent, path, says):
    doc = _doc(buy, {"instance": "aws/p5.48xlarge", **rent})
    with pytest.raises(ScenarioError) as info:
        scenarios.load_mapping(doc)
    errors = [e for e in info.value.errors if e["path"] == path]
    assert errors and says in errors[0]["message"], info.value.errors


def _far(buy: dict, rent: dict) -> list[str]:
    sc = scenarios.load_mapping(_doc(buy, rent))
    return [w.message for w in sc.warnings if w.code == "price_far_from_catalog"]


def test_a_price_far_from_the_catalog_says_what_the_other_reading_gives():
    # lambda/gpu_8x_h100_sxm5 is 31.92 per instance-hour on demand; 2.50 typed per instance-hour
    # is 1/12.8 of it, and read per GPU-hour 2.50 x 8 = 20.00 is within 2x of it
    buy = {"gpu": "h100-sxm5-80gb", "gpu_count": 8}
    (message,) = _far(buy, {"instance": "lambda/gpu_8x_h100_sxm5", "price_usd_per_hour": 2.5})
    assert message == (
        "rent.price_usd_per_hour gives 2.50, 1/12.8 of the catalog's 31.92 USD per instance-hour "
        "of lambda/gpu_8x_h100_sxm5 (on_demand); read as rent.price_usd_per_gpu_hour, 2.50 x 8 = "
        "20.00 is near it"
    )
    # 23.60 typed per GPU-hour: 23.60 x 8 = 188.80, 5.9 times the catalog; per instance-hour it
    # is near
    (message,) = _far(buy, {"instance": "lambda/gpu_8x_h100_sxm5", "price_usd_per_gpu_hour": 23.6})
    assert message.startswith("rent.price_usd_per_gpu_hour gives 23.60 x 8 = 188.80, 5.9 times")
    assert message.endswith("read as rent.price_usd_per_hour, 23.60 is near it")
    # within 2x: no advice (20.00 is 0.63 of 31.92)
    assert not _far(buy, {"instance": "lambda/gpu_8x_h100_sxm5", "price_usd_per_gpu_hour": 2.5})


def test_a_gpu_or_server_price_far_from_the_catalog():
    # 250,000 typed as one H100's price: 6.8 times the catalog's 36,718.75; read as the server's,
    # 250,000 / 8 = 31,250 a GPU is near it
    rent = {"instance": "aws/p5.48xlarge"}
    (message,) = _far({"gpu": "h100-sxm5-80gb", "gpu_count": 8, "gpu_price_usd": 250_000}, rent)
    assert message == (
        "buy.gpu_price_usd gives 250,000, 6.8 times the catalog's 36,718.75 USD for one "
        "h100-sxm5-80gb; read as buy.server_price_usd, 250,000 / 8 = 31,250 is near it"
    )
    # a 1,200,000 server of 8 GPUs at 25,000: catalog 8 x 36,718.75 + 32,010 (the 8-GPU
    # baseboard server) = 325,760 -> 3.7x
    (message,) = _far({**H100, "server_price_usd": 1_200_000}, rent)
    assert message.startswith("buy.server_price_usd gives 1,200,000, 3.7 times the catalog's")
    assert "check the price and its unit" in message
    # prices that the catalog fills in, or near it, get none
    assert not _far({"gpu": "h100-sxm5-80gb", "gpu_count": 8}, rent)
    assert not _far({**H100, "server_price_usd": 300_000}, rent)


def test_a_price_of_zero_is_no_price_in_other_terms():
    # a donated GPU, a free cloud credit: a ZeroDivisionError traceback ("1/{1 / ratio}"); no
    # reading in other terms makes 0 near the catalog, so there is nothing to advise
    rent = {"instance": "aws/p3.2xlarge"}
    assert not _far({"gpu": "rtx-3090", "gpu_count": 1, "gpu_price_usd": 0}, rent)
    assert not _far({"gpu": "rtx-3090", "gpu_count": 1}, {**rent, "price_usd_per_hour": 0})
    server = {"gpu": "h100-sxm5-80gb", "gpu_count": 8, "gpu_price_usd": 0, "server_price_usd": 0}
    assert not _far(server, {"instance": "aws/p5.48xlarge"})


def test_affine_maps_every_form():
    # 2X + 1 of each form, spreads scaled, shapes kept; a lognormal only scales
    assert _affine(Normal(10, 2, low=5), 2, 1) == Normal(21, 4, low=11)
    assert _affine(Pert(1, 2, 4, lam=3), 2, 1) == Pert(3, 5, 9, lam=3)
    assert _affine(Discrete((1, 2), (3, 1)), 2, 1) == Discrete((3, 5), (3, 1))
    assert _affine(Uniform(1, 2), 3, 0) == Uniform(3, 6)
    assert _affine(LogNormal(median=2, p90=3), 2, 0) == LogNormal(median=4, p90=6)
    with pytest.raises(ValueError, match="cannot be shifted"):
        _affine(LogNormal(median=2, p90=3), 1, -1)


def _plan(**demand) -> dict:
    plan = yaml.safe_load((EXAMPLES / "plan-worked-example.yaml").read_text())
    plan["demand"] = {"annual_growth": 0.5, **demand}
    return plan


def test_plan_demand_in_hours_of_a_named_gpu():
    # 1,000 H100 SXM5 hours a month at fp32 = 1,000 x 8.157 = 8,157 reference (V100) GPU-hours
    named = scenarios.load_mapping(_plan(gpu_hours_per_month=1000, gpu="h100-sxm5-80gb"))
    plain = scenarios.load_mapping(_plan(reference_gpu_hours_per_month=8157))
    assert named.inputs.demand.work_per_month.value == pytest.approx(8157, 1e-12)
    (note,) = [a for a in named.assumptions if a.key == "demand.reference_gpu_hours_per_month"]
    assert note.source == (
        "plan: demand.gpu_hours_per_month of h100-sxm5-80gb x its fp32 throughput 8.157 relative "
        "to v100-sxm2-16gb (measured fp32)"
    )
    assert named.document["demand"] == {**plain.document["demand"],
                                        "reference_gpu_hours_per_month": note.value}  # fmt: skip
    a, b = (to_dict(scenarios.evaluate(p))["best"] for p in (named, plain))
    assert a["servers"] == b["servers"] and a["instances"] == b["instances"]
    assert a["cost"]["mean"] == pytest.approx(b["cost"]["mean"], rel=1e-12)
    # a distribution keeps its form: triangular(500, 1,000, 2,000) H100-hours
    ranged = _plan(gpu_hours_per_month={"dist": "triangular", "low": 500, "mode": 1000,
                                        "high": 2000}, gpu="h100-sxm5-80gb")  # fmt: skip
    demand = scenarios.load_mapping(ranged).inputs.demand.work_per_month
    assert (demand.low, demand.mode, demand.high) == pytest.approx((4078.5, 8157, 16314))


@pytest.mark.parametrize(
    ("demand", "path", "says"),
    [
        ({"gpu_hours_per_month": 1000}, "demand.gpu_hours_per_month", "only with demand.gpu"),
        ({"reference_gpu_hours_per_month": 10, "gpu": "h100-sxm5-80gb"}, "demand.gpu",
         "only with demand.gpu_hours_per_month"),
        ({"reference_gpu_hours_per_month": 10, "gpu_hours_per_month": 5, "gpu": "t4"},
         "demand.gpu_hours_per_month", "not both"),
        ({"gpu_hours_per_month": 5, "gpu": "h100-sxm5"}, "demand.gpu",
         "unknown GPU id 'h100-sxm5'; closest: h100-sxm5-80gb"),
    ],
)  # fmt: skip
def test_plan_demand_of_a_named_gpu_errors_at_its_keys(demand, path, says):
    with pytest.raises(ScenarioError) as info:
        scenarios.load_mapping(_plan(**demand))
    errors = [e for e in info.value.errors if e["path"] == path]
    assert errors and says in errors[0]["message"], info.value.errors


def test_plan_demand_of_a_named_gpu_is_training_work():
    plan = yaml.safe_load((EXAMPLES / "plan-inference-70b-api-burst.yaml").read_text())
    plan["demand"].update(gpu_hours_per_month=1000, gpu="h100-sxm5-80gb")
    with pytest.raises(ScenarioError) as info:
        scenarios.load_mapping(plan)
    assert {"path": "demand.gpu_hours_per_month",
            "message": "only for training work (workload.kind: training)"} in [
        {k: e[k] for k in ("path", "message")} for e in info.value.errors]  # fmt: skip


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_documents_without_the_new_keys_are_as_before(path):
    """A document that gives none of the new keys resolves to one without them, so that its
    cache key and its shipped results stay as they were."""
    prices = {"server_price_usd", "price_usd_per_gpu_hour"}
    for doc in scenarios.load_files(path):
        for key in ("buy", "rent", "own", "reserve", "burst"):
            assert not prices & set(doc.document.get(key) or ()), (path.name, key)
        demand = doc.document.get("demand") or {}
        assert not {"gpu_hours_per_month", "gpu"} & set(demand), path.name
