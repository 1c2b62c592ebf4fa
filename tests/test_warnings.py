"""No numpy warning reaches a user: tiny utilisations are refused where they are typed, and a
run at the largest sample count is silent.

The suite turns every ``RuntimeWarning`` into an error (``filterwarnings`` in pyproject.toml);
these tests also do so themselves, so that they hold whatever the configuration.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import scenarios
from api import create_app
from cli import main
from costmodel.inputs import MAX_SAMPLES, MIN_UTILISATION
from scenarios.compare import compare, load_request
from scenarios.errors import ScenarioError

ROOT = Path(__file__).resolve().parents[1]
BENCHMARK = ROOT / "benchmarks" / "scenario-1m.yaml"
WORKED = ROOT / "scenarios" / "examples" / "worked-example.yaml"


@pytest.fixture(autouse=True)
def _warnings_fail():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


def _paths(exc: pytest.ExceptionInfo) -> dict[str, str]:
    return {e["path"]: e["message"] for e in exc.value.errors}


# --------------------------------------------------------------------------- tiny utilisations


def test_compare_refuses_a_subnormal_utilisation():
    # At u = 1e-310 the cost per hour of work, TCO / (u * 730 * H * T), overflowed to inf (an
    # overflow warning, then inf - inf in the percentiles, and "—" for every cost)
    with pytest.raises(ScenarioError) as err:
        load_request({"utilisation": 1e-310})
    message = _paths(err)["utilisation"]
    assert message == (
        "must be at least 1e-06 [-], got 1e-310: at a smaller busy share the cost per hour "
        "of work is too large to compute"
    )


@pytest.mark.parametrize("u", ["1e-310", "5e-7"])
def test_compare_on_the_command_line_names_the_floor(capsys, u):
    assert main(["compare", "--utilisation", u, "--samples", "20"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --utilisation: must be at least 1e-06 [-], got ")


def test_post_compare_refuses_it_at_its_key_path(tmp_path):
    app = create_app({"TESTING": True, "DB": str(tmp_path / "runs.sqlite3"), "API_KEYS": ""})
    answer = app.test_client().post("/v1/compare", json={"utilisation": 1e-310})
    assert answer.status_code == 422
    doc = answer.get_json()
    assert set(doc) == {"code", "status", "message", "errors"}
    assert [e["path"] for e in doc["errors"]] == ["utilisation"]


def test_compare_at_the_floor_is_finite_and_silent():
    # At u = 1e-6 owning costs about a million times its price per hour of work: large, finite
    result = compare(load_request({"utilisation": MIN_UTILISATION, "samples": 20}))
    costs = [o.cost_per_reference_gpu_hour for o in result.options]
    assert costs and all(0 < c.p10 <= c.p50 <= c.p90 < 1e300 for c in costs)


@pytest.mark.parametrize(
    ("levels", "path"),
    [
        ([1e-310, 0.5], "utilisation[0]"),
        ([0.5, 1e-7], "utilisation[1]"),
        ({"start": 1e-9, "stop": 0.5, "step": 0.1}, "utilisation.start"),
    ],
)
def test_a_scenario_refuses_a_tiny_level(levels, path):
    # summarise divided the TCO by u * 730 * H * T and overflowed (the cost per reference
    # GPU-hour); 0 stays valid (that cost is null there), as does 1e-6
    doc = scenarios.load_file(WORKED).document
    with pytest.raises(ScenarioError) as err:
        scenarios.evaluate({**doc, "utilisation": levels})
    assert _paths(err)[path].startswith("must be 0 or at least 1e-06 [-], got ")


def test_a_scenario_at_zero_and_at_the_floor_runs_silently():
    # cost per reference GPU-hour = TCO_buy(u) / (u * 730 * H * T) with one T for every level
    # (the worked example is fixed), so cost(u1) * u1 / (cost(u2) * u2) = TCO(u1) / TCO(u2)
    doc = scenarios.load_file(WORKED).document
    result = scenarios.evaluate({**doc, "utilisation": [0.0, MIN_UTILISATION, 0.5]})
    unit, tco = result.cost_per_unit["buy"].p50, result.buy_tco.p50
    assert unit[1] * MIN_UTILISATION / (unit[2] * 0.5) == pytest.approx(tco[1] / tco[2], rel=1e-9)
    assert unit[1] > 1e4 * unit[2]
    assert unit[0] != unit[0]  # NaN (null) at u = 0


# --------------------------------------------------------------------------- a million draws


def test_a_million_draws_run_without_a_warning():
    # the benchmark scenario as `costmodel run benchmarks/scenario-1m.yaml` runs it (about 5 s)
    result = scenarios.evaluate(BENCHMARK)
    assert result.samples == MAX_SAMPLES == 1_000_000
    assert 0 < result.breakeven_utilisation.p50 < 1


def test_the_engine_refuses_a_tiny_utilisation_too():
    from costmodel.inputs import InputError
    from tests.helpers import buy, model, rent

    with pytest.raises(InputError) as exc:
        model(buy(), rent(), utilisation=(0.0, 1e-310))
    assert exc.value.path == "utilisation" and "at least 1e-06" in exc.value.message
