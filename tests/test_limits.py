"""What a request may cost the HTTP API: the work it is counted for (plans, comparisons), the
candidates and result size of a plan, the bytes of the result cache, the deadline, gzip bodies,
and the limits as the OpenAPI document states them. Each 4xx names the setting that refused it.
"""

from __future__ import annotations

import copy
import dataclasses
import gzip
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from openapi_schema_validator import OAS30Validator

import api.deadline
import scenarios
from api import limits
from api.compare.resources import option_count
from api.service import ResultCache
from costmodel.fleet import block_rows
from costmodel.inputs import MIN_UTILISATION
from present import to_dict
from pricing import load_catalog
from scenarios.compare import CompareRequest, compare, option_counts
from tests.test_api import WORKED, assert_error, make_app
from tests.test_api_gunicorn import free_port, request

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "scenarios" / "examples"
PLAN = yaml.safe_load((EXAMPLES / "plan-worked-example.yaml").read_text("utf-8"))


def plan(servers: int, instances: int, months: int = 36) -> dict[str, Any]:
    """The worked plan with servers 0..``servers`` and reservations 0..``instances``."""
    doc = copy.deepcopy(PLAN)
    doc["own"]["servers"] = {"min": 0, "max": servers}
    doc["reserve"]["instances"] = {"min": 0, "max": instances}
    doc["horizon_months"] = months
    return doc


def errors_by_setting(body: dict[str, Any]) -> dict[str, str]:
    """Each problem's message by the COSTMODEL_ setting it names."""
    out = {}
    for e in body["errors"]:
        setting = e["message"].rsplit("(COSTMODEL_", 1)[1].rstrip(")")
        out[setting] = e["message"]
    return out


# ------------------------------------------------------------------------------------ plans


def test_the_reported_plan_is_refused_naming_its_limits(tmp_path):
    # The report: 1001 x 1001 candidates, 1 draw, 12 months was counted as 1 x 1,002,001 x 12
    # = 12,024,012 (2.4 % of the limit) and then took 98.7 s and 2.36 GB.
    # Its memory: the process 83,886,080 + a chunk 7 x 8 x 1 x 12 = 672 + 1 x 32
    # + 1,002,001 x (1 x 24 + 4,400) = 4,516,739,208 bytes > 1 GiB (2.36 GB measured when
    # every candidate's draws were held; the candidates' figures hold the most now).
    # A run of it would be a job (its work is within COSTMODEL_MAX_JOB_WORK): the rest refuse it.
    client = make_app(tmp_path).test_client()
    limits_of_route = {"/v1/plans": {"MAX_WORK"}, "/v1/runs": set()}
    for route, work in limits_of_route.items():
        body = assert_error(
            client.post(f"{route}?samples=1&seed=1", json=plan(1000, 1000, 12)), 422
        )
        problems = errors_by_setting(body)
        assert set(problems) == {"MAX_CANDIDATES", "MAX_RESULT_BYTES", "MAX_MEMORY"} | work
        assert "1,002,001 exceeds the limit of 10,201 candidates" in problems["MAX_CANDIDATES"]
        assert "4,516,739,208 exceeds the limit of 1,073,741,824" in problems["MAX_MEMORY"]
        assert {e["path"] for e in body["errors"]} == {"own.servers"}
    assert client.get("/v1/runs").get_json()["total"] == 0


def test_a_job_is_counted_the_memory_of_its_whole_process(tmp_path):
    # The probe's job: 4,000 draws of 101 x 101 candidates over 12 months peaked at 1,079 MiB
    # while every candidate's draws were held at once; evaluated block by block it peaks at
    # 120 MiB (benchmarks/bench_memory.py). Counted whole: 83,886,080 (the process)
    # + 7 x 8 x 4,000 x 12 = 2,688,000 (a chunk) + 4,000 x 32 = 128,000 (the draws' inputs)
    # + 524 x 4,000 x 24 = 50,304,000 (a block: 48 MiB // (24 x 4,000) = 524 candidates)
    # + 10,201 x 4,400 = 44,884,400 (the candidates' figures) = 181,890,480 bytes.
    assert limits.plan_memory(4_000, 101 * 101, 12) == 181_890_480
    client = make_app(tmp_path, MAX_MEMORY=181_890_479).test_client()
    body = assert_error(client.post("/v1/runs?samples=4000", json=plan(100, 100, 12)), 422)
    assert set(errors_by_setting(body)) == {"MAX_MEMORY"}
    assert "181,890,480 exceeds the limit of 181,890,479 bytes" in body["message"]


def test_a_scenario_is_held_to_the_memory_limit(tmp_path):
    # 200,000 draws x 101 levels x 240 months (measured peak 298 MiB; 20,200,000 payback
    # months, held as 2-byte codes, so 4 bytes a level and draw rather than 10):
    # 83,886,080 + 7 x 8 x 8,333 x 240 = 111,995,520 (a chunk of 2,000,000 // 240 draws)
    # + 20,000 x 240 x 8 = 38,400,000 + 200,000 x (256 + 101 x 4) = 132,000,000
    # = 366,281,600 bytes
    assert limits.scenario_memory(200_000, 101, 240) == 366_281_600
    client = make_app(tmp_path, MAX_MEMORY=366_281_599, MAX_WORK=10**12).test_client()
    doc = {**WORKED, "horizon_months": 240, "utilisation": [i / 100 for i in range(101)]}
    doc.pop("report_utilisation", None)
    body = assert_error(client.post("/v1/evaluate?samples=200000", json=doc), 422)
    assert set(errors_by_setting(body)) == {"MAX_MEMORY"}
    assert body["errors"][0]["path"] == "query.samples"
    assert "366,281,600 exceeds the limit of 366,281,599 bytes" in body["message"]
    assert "samples x (256 + levels x 4)" in body["message"]


def test_a_scenario_counts_payback_codes_beyond_a_million_levels_x_draws():
    # 10,000 draws x 100 levels = 1,000,000 payback months, held as they are (8 bytes):
    # 83,886,080 + 7 x 8 x 10,000 x 12 = 6,720,000 + 10,000 x 12 x 8 = 960,000
    # + 10,000 x (256 + 100 x 10) = 12,560,000, = 104,126,080 bytes; one level more, 1,010,000
    # of them, are held as 2-byte codes: + 10,000 x (256 + 101 x 4) = 6,600,000, = 98,166,080
    assert limits.scenario_memory(10_000, 100, 12) == 104_126_080
    assert limits.scenario_memory(10_000, 101, 12) == 98_166_080
    # an API side's paybacks alike: + 10,000 x (48 + 100 x 9) = 9,480,000 with the months
    # held, + 10,000 x (48 + 101 x 3) = 3,510,000 as codes
    assert limits.scenario_memory(10_000, 100, 12, sides=1) == 104_126_080 + 9_480_000
    assert limits.scenario_memory(10_000, 101, 12, sides=1) == 98_166_080 + 3_510_000


def test_a_scenario_counts_the_memory_of_its_api_side_and_carbon(tmp_path):
    # The same shape with an API side and an uncertain carbon price peaked at 701 MiB (552 MiB
    # with the API alone) while it was counted 465 MiB, as without them. Counted now:
    # 83,886,080 (the process) + 111,995,520 (a chunk)
    # + 20,000 x 240 x 8 x (1 + 3 + 1) = 192,000,000 (the cumulative cost, and with a carbon
    #   price 3 lines of priced emissions by month, and one for the API)
    # + 200,000 x (256 + 101 x 4 + 1 x (48 + 101 x 3) + 64) = 200,000 x 1,075 = 215,000,000
    #   (the payback months as 2-byte codes: 466 MiB measured now)
    # = 602,881,600 bytes (575 MiB)
    assert limits.scenario_memory(200_000, 101, 240, sides=1, priced=True) == 602_881_600
    doc = yaml.safe_load((EXAMPLES / "inference-8b-rtx6000ada-vs-api.yaml").read_text())
    doc.update(horizon_months=240, utilisation=[i / 100 for i in range(101)])
    doc["carbon"] = {"usd_per_tonne": {"dist": "triangular", "low": 50, "mode": 100, "high": 200}}
    doc["api"]["g_co2e_per_mtok"] = 300
    client = make_app(tmp_path, MAX_MEMORY=602_881_599, MAX_WORK=10**12).test_client()
    body = assert_error(client.post("/v1/evaluate?samples=200000", json=doc), 422)
    assert set(errors_by_setting(body)) == {"MAX_MEMORY"}
    assert "602,881,600 exceeds the limit of 602,881,599 bytes" in body["message"]
    assert "months x 8 x 5 for each of the first 20,000 samples" in body["message"]
    assert "samples x (256 + levels x 4 + 1 x (48 + levels x 3) + 64)" in body["message"]


def test_the_work_of_a_plan_counts_each_candidate_and_its_result(tmp_path):
    # With the candidate and size caps lifted, 1001 x 101 candidates at 1 draw and 12 months:
    # 1,000,000                                          =     1,000,000 answering a plan
    # 1 x (12 x 3 + 20 + 1,001 x 9 + 101,101 x 4)        =       413,469 evaluating
    # 1,001 x 1 x 15,000 (one chunk of draws)            =    15,015,000 the server counts' loop
    # 101,101 x 6,000                                    =   606,606,000 per candidate
    # ((2 x 101,101 + 2) x 414 + 12 x 75 + 65,536) x 4   =   335,115,568 writing the result
    #                                                     =   958,150,037 > 500,000,000
    client = make_app(tmp_path, MAX_CANDIDATES=10**7, MAX_RESULT_BYTES=10**12).test_client()
    body = assert_error(client.post("/v1/plans?samples=1", json=plan(1000, 100, 12)), 422)
    assert set(errors_by_setting(body)) == {"MAX_WORK"}
    assert "958,150,037 exceeds the limit of 500,000,000 units of work" in body["message"]
    shape = limits.PlanShape(101_101, 12, servers=1001, reserves=True)
    assert limits.plan_work(1, shape) == 958_150_037


def test_a_plan_within_the_limits_is_evaluated(tmp_path):
    client = make_app(tmp_path).test_client()
    response = client.post("/v1/plans?samples=1", json=plan(100, 100, 12))  # 10,201 candidates
    assert response.status_code == 200
    assert len(response.get_json()["candidates"]) == 101 * 101


def _longest(best, **carbon):
    """The candidate ``best`` with every number as long as a number can make it."""
    return dataclasses.replace(
        best,
        servers=1000,
        instances=1000,
        cost=type(best.cost)(*[-1.2345678901234567e-100] * 5),
        share_owned=0.12345678901234567,
        owned_utilisation=0.12345678901234567,
        prob_cheaper_than_cloud=0.12345678901234567,
        prob_cheaper_ci95=(0.12345678901234567, 0.12345678901234567),
        **carbon,
    )


def test_the_result_size_counted_bounds_the_result(tmp_path):
    result = scenarios.evaluate(plan(12, 4, 240))
    worst = _longest(result.best)
    # every candidate as long as a number can make it, and every one on the frontier too
    most = dataclasses.replace(result.result, candidates=(worst,) * 65, frontier=(worst,) * 65)
    longest = dataclasses.replace(result, result=most)
    for r in (result, longest):
        size = len(json.dumps(to_dict(r), separators=(",", ":")))
        assert size <= limits.plan_result_bytes(65, 240)


def _counted(client, doc: dict) -> dict[str, int]:
    body = assert_error(client.post("/v1/plans?samples=10", json=doc), 422)
    return {k: int(m.split(" ")[0].replace(",", "")) for k, m in errors_by_setting(body).items()}


def test_a_plan_counting_carbon_is_counted_what_carbon_adds(tmp_path):
    # 10 draws of 7 x 3 = 21 candidates over 36 months; the twin counts carbon (own.grid):
    # memory  21 x 10 x 8 + 21 x 800 (one block of the 21)           =  18,480 bytes more
    # result  (3 x 21 + 2) x (414 + 172) - (2 x 21 + 2) x 414
    #         = 38,090 - 18,216                                      =  19,874 bytes more
    # work    10 x (36 x 3 x 2.5 + 21 x 7.5) + 19,874 x 4
    #         = 10 x (270 + 157.5) + 79,496                          =  83,771 units more
    #         (three tables of emissions: the burst's, the servers', the reservations'; one
    #         pass over the draws, one chunk holding them all)
    client = make_app(tmp_path, MAX_MEMORY=1, MAX_RESULT_BYTES=1, MAX_WORK=1).test_client()
    twin = plan(6, 2)
    twin["own"]["grid"] = "DE"
    plain, carbon = _counted(client, plan(6, 2)), _counted(client, twin)
    added = {k: carbon[k] - plain[k] for k in plain}
    assert added == {"MAX_MEMORY": 18_480, "MAX_RESULT_BYTES": 19_874, "MAX_WORK": 83_771}
    body = assert_error(client.post("/v1/plans?samples=10", json=twin), 422)
    assert (
        "samples x min(candidates, a block of 157,286) x 32 + 5,200 per candidate"
        in errors_by_setting(body)["MAX_MEMORY"]
    )
    assert "months x 2.5 a table of emissions and pass" in errors_by_setting(body)["MAX_WORK"]


def test_the_result_size_counted_bounds_a_carbon_result():
    doc = plan(12, 4, 240)
    doc["own"]["grid"] = "DE"
    result = scenarios.evaluate(doc)
    carbon = type(result.best.carbon)(*[-1.2345678901234567e-100] * 5)
    worst = _longest(result.best, carbon=carbon)
    # 1000 candidates as long as a number can make them, on both frontiers too
    every = (worst,) * 1000
    most = dataclasses.replace(
        result.result, candidates=every, frontier=every, carbon_frontier=every
    )
    longest = dataclasses.replace(result, result=most)
    sizes = [len(json.dumps(to_dict(r), separators=(",", ":"))) for r in (result, longest)]
    assert max(sizes) <= limits.plan_result_bytes(1000, 240, carbon=True)
    assert sizes[1] > limits.plan_result_bytes(1000, 240)  # more than the count without carbon


def test_candidates_and_result_size_limits_are_settings(tmp_path):
    client = make_app(tmp_path, MAX_CANDIDATES=20).test_client()
    body = assert_error(client.post("/v1/plans", json=plan(6, 2)), 422)  # 21 candidates
    assert set(errors_by_setting(body)) == {"MAX_CANDIDATES"}
    client = make_app(tmp_path, MAX_RESULT_BYTES=70_000).test_client()
    body = assert_error(client.post("/v1/plans", json=plan(6, 2)), 422)
    assert set(errors_by_setting(body)) == {"MAX_RESULT_BYTES"}


# ------------------------------------------------------------------------------ comparisons


def test_the_reported_comparison_is_refused_naming_the_work_limit(tmp_path):
    # 200,000 draws x 324 options: about 8 s and 1.22 GB when reported (some 3 s now);
    # counted as 324 x (200,000 x 2 + 115,000) + 184 owned x 200,000 x 25
    # = 324 x 515,000 + 920,000,000 = 166,860,000 + 920,000,000 = 1,086,860,000
    client = make_app(tmp_path).test_client()
    request = {"utilisation": 1.0, "horizon_months": 240, "samples": 200_000}
    body = assert_error(client.post("/v1/compare", json=request), 422)
    assert set(errors_by_setting(body)) == {"MAX_WORK"}
    assert "1,086,860,000 exceeds the limit" in body["message"]
    assert "324 options x (samples x 2 + 115,000) + 184 owned x samples x 25" in body["message"]
    assert body["errors"][0]["path"] == "samples"


def test_the_work_of_a_comparison_counts_the_options_asked_for(tmp_path):
    client = make_app(tmp_path, MAX_WORK=6_000_000).test_client()
    # 1,000 draws x 2 + 115,000 = 117,000 an option, and 1,000 x 25 = 25,000 more an owned
    # one: the catalog's 324 options, 184 owned, count 324 x 117,000 + 184 x 25,000
    # = 42,508,000; the marketplace's instances of 80 GB or more and the owned options are 36,
    # 32 owned: 36 x 117,000 + 32 x 25,000 = 4,212,000 + 800,000 = 5,012,000
    body = assert_error(client.post("/v1/compare", json={"utilisation": 0.5, "samples": 1000}), 422)
    assert "324 options" in body["message"]
    narrow = {"utilisation": 0.5, "samples": 1000, "tier": "marketplace", "min_memory_gb": 80}
    assert client.post("/v1/compare", json=narrow).status_code == 200


@pytest.mark.parametrize(
    "options",
    [{}, {"tier": "neocloud"}, {"min_memory_gb": 48}, {"tier": "marketplace", "min_memory_gb": 80}],
)
def test_the_options_counted_are_the_options_compared(options):
    wanted = CompareRequest(utilisation=0.5, samples=10, **options)
    catalog = load_catalog()
    done = compare(wanted, catalog)
    assert option_count(wanted, catalog) == len(done.options) + len(done.ruled_out)
    owned = sum(o.side == "buy" for o in (*done.options, *done.ruled_out))
    assert option_counts(wanted, catalog) == (option_count(wanted, catalog), owned)
    assert 0 < owned < option_count(wanted, catalog)


# ---------------------------------------------------------------------------- result cache


def test_the_cache_is_bounded_by_bytes(tmp_path):
    one = len(make_app(tmp_path).test_client().post("/v1/evaluate", json=WORKED).get_data())
    client = make_app(tmp_path, RESULT_CACHE_BYTES=one + one // 2).test_client()
    cache = client.application.extensions["costmodel"]["cache"]
    assert client.post("/v1/evaluate", json=WORKED).headers["X-Cache"] == "miss"
    assert client.post("/v1/evaluate", json=WORKED).headers["X-Cache"] == "hit"
    assert client.post("/v1/evaluate?seed=2", json=WORKED).headers["X-Cache"] == "miss"
    assert cache.bytes <= one + one // 2  # the first result made room for the second
    assert client.post("/v1/evaluate", json=WORKED).headers["X-Cache"] == "miss"


def test_the_cache_keeps_the_most_recent_within_its_entries_and_bytes():
    cache = ResultCache(entries=3, size=100)
    for i in range(5):
        cache.put(b"x" * 30, f"doc{i}", f"body{i}")
    assert [cache.get(f"doc{i}") is not None for i in range(5)] == [False, False, True, True, True]
    assert cache.get("body4") == b"x" * 30 and cache.get("body1") is None
    assert cache.bytes == 90
    cache.put(b"y" * 101, "big")  # larger than the whole cache: not kept
    assert cache.get("big") is None and cache.bytes == 90
    cache.put(b"z" * 50, "doc5")  # 90 + 50 > 100: the two least recent go
    assert cache.bytes == 80 and cache.get("doc2") is None and cache.get("doc3") is None


# ---------------------------------------------------------------------------------- deadline


class _Clock:
    """A clock that stands still until told to jump [s]."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    fake = _Clock()
    monkeypatch.setattr(api.deadline, "_clock", fake)
    return fake


def _late_evaluation(monkeypatch: pytest.MonkeyPatch, clock: _Clock, seconds: float) -> None:
    """Evaluating takes ``seconds`` by the clock."""
    real = scenarios.evaluate

    def slow(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        clock.now += seconds
        return result

    monkeypatch.setattr(api.service, "evaluate", slow)


def test_a_request_past_its_deadline_is_503_and_stores_nothing(tmp_path, monkeypatch, clock):
    client = make_app(tmp_path, DEADLINE=20).test_client()
    _late_evaluation(monkeypatch, clock, 21.0)
    for route in ("/v1/evaluate", "/v1/plans", "/v1/runs"):
        body = PLAN if route == "/v1/plans" else WORKED
        response = client.post(route, json=body)
        error = assert_error(response, 503)
        assert "COSTMODEL_DEADLINE" in error["message"] and "nothing was stored" in error["message"]
        assert response.headers["Retry-After"].isdigit()
    assert client.get("/v1/runs").get_json()["total"] == 0
    _late_evaluation(monkeypatch, clock, 19.0)
    assert client.post("/v1/runs", json=WORKED).status_code == 201


#: The plan worked example's server, 0 or 1 of them (two candidates without the reserve).
ONE_SERVER = {**PLAN["own"], "servers": {"min": 0, "max": 1}}


@pytest.mark.parametrize(
    "route, body, what",
    [
        ("/v1/evaluate", {**WORKED, "horizon_months": 240}, "scenario"),
        ("/v1/plans", {**PLAN, "horizon_months": 240, "own": ONE_SERVER, "reserve": None}, "plan"),
    ],
)
def test_the_engine_stops_at_the_deadline_between_chunks(
    tmp_path, monkeypatch, clock, route, body, what
):
    # the clock jumps as the engine reports its first chunk of 2,000,000 // 240 = 8,333 of
    # the 50,000 draws: the rest is never computed
    calls = []

    def progress(phase: str):
        def check(done: float) -> None:
            calls.append(done)
            clock.now += 100.0
            api.deadline.check_deadline(phase)

        return check

    monkeypatch.setattr(api.service, "engine_progress", progress)
    client = make_app(tmp_path).test_client()
    doc = {**body, "simulation": {"samples": 50_000, "seed": 1}}
    error = assert_error(client.post(route, json=doc), 503)
    assert f"while evaluating the {what}" in error["message"]
    assert len(calls) == 1


def test_the_deadline_is_a_setting(tmp_path):
    with pytest.raises(ValueError, match="COSTMODEL_DEADLINE must be a positive number"):
        make_app(tmp_path, DEADLINE=0)
    assert make_app(tmp_path, DEADLINE="2.5").config["DEADLINE"] == 2.5


# ------------------------------------------------------------------------------------- gzip


def _post(client: Any, body: bytes, encoding: str) -> Any:
    headers = {"Content-Encoding": encoding, "Content-Type": "application/json"}
    return client.post("/v1/evaluate", data=body, headers=headers)


def test_a_gzip_body_is_decoded(tmp_path):
    client = make_app(tmp_path).test_client()
    plain = json.dumps(WORKED).encode()
    response = _post(client, gzip.compress(plain), "gzip")
    assert response.status_code == 200
    assert (
        response.get_json()["buy_tco"]
        == client.post("/v1/evaluate", json=WORKED).get_json()["buy_tco"]
    )
    compare_body = gzip.compress(json.dumps({"utilisation": 0.5, "samples": 10}).encode())
    headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
    assert client.post("/v1/compare", data=compare_body, headers=headers).status_code == 200


def test_a_plain_body_that_says_gzip_is_400(tmp_path):
    # it used to be read as it was, the header ignored
    client = make_app(tmp_path).test_client()
    error = assert_error(_post(client, json.dumps(WORKED).encode(), "gzip"), 400)
    assert error["errors"][0]["path"] == "headers.Content-Encoding"


def test_a_gzip_bomb_is_413_at_the_decoded_size(tmp_path):
    client = make_app(tmp_path, MAX_CONTENT_LENGTH=100_000).test_client()
    bomb = gzip.compress(b"[" + b" " * 50_000_000 + b"]")  # 49 KB that decode to 50 MB
    assert len(bomb) < 100_000
    error = assert_error(_post(client, bomb, "gzip"), 413)
    assert "decoded from gzip exceeds the limit of 100000 bytes" in error["message"]


@pytest.mark.parametrize("encoding", ["br", "deflate", "gzip, gzip", "compress"])
def test_other_encodings_are_415(tmp_path, encoding):
    client = make_app(tmp_path).test_client()
    error = assert_error(_post(client, json.dumps(WORKED).encode(), encoding), 415)
    assert "gzip" in error["message"]


# ------------------------------------------------------------------------- the OpenAPI limits


def _spec(tmp_path: Path, **config: Any) -> dict[str, Any]:
    return make_app(tmp_path, **config).test_client().get("/openapi.json").get_json()


def _props(spec: dict[str, Any], component: str) -> dict[str, Any]:
    return spec["components"]["schemas"][component]["properties"]


def test_the_spec_states_the_sample_and_horizon_limits_of_every_body(tmp_path):
    # Compare.samples said 1,000,000 while the server refuses above 200,000
    spec = _spec(tmp_path)
    assert _props(spec, "Compare")["samples"]["maximum"] == 200_000
    assert _props(spec, "Simulation")["samples"]["maximum"] == 200_000
    assert _props(spec, "Simulation")["max_samples"]["maximum"] == 200_000
    assert _props(spec, "Draws")["samples"]["maximum"] == 200_000
    spec = _spec(tmp_path, MAX_SAMPLES=5000, MAX_HORIZON=60, MAX_LEVELS=11)
    for component in ("Compare", "Simulation", "Draws"):
        assert _props(spec, component)["samples"]["maximum"] == 5000
    for component in ("Compare", "Scenario", "Plan"):
        assert _props(spec, component)["horizon_months"]["maximum"] == 60
    grid = _props(spec, "Scenario")["utilisation"]["oneOf"][0]
    assert grid["type"] == "array" and grid["maxItems"] == 11


def _validator(spec: dict[str, Any], component: str) -> OAS30Validator:
    schema = {**spec["components"]["schemas"][component], "components": spec["components"]}
    return OAS30Validator(schema)


def test_the_spec_refuses_what_the_server_refuses(tmp_path):
    spec = _spec(tmp_path)
    scenario = _validator(spec, "Scenario")
    assert scenario.is_valid(WORKED)
    unbounded = copy.deepcopy(WORKED)
    unbounded["buy"]["pue"] = {"dist": "lognormal", "median": 1.3, "p90": 1.5}
    assert not scenario.is_valid(unbounded)  # valid by the spec before, refused by the server
    client = make_app(tmp_path).test_client()
    assert client.post("/v1/evaluate", json=unbounded).status_code == 422
    bounded = copy.deepcopy(unbounded)
    bounded["buy"]["pue"].update(low=1.0, high=2.0)
    assert scenario.is_valid(bounded)
    assert client.post("/v1/evaluate", json=bounded).status_code == 200
    compare_spec = _validator(spec, "Compare")
    assert not compare_spec.is_valid({"utilisation": 0.5, "samples": 200_001})


def test_the_spec_bounds_discrete_weights_and_the_compare_model(tmp_path):
    # Both were unbounded in the spec and refused by the server: a negative weight, more
    # values than a document may hold, a model id the catalog does not have.
    spec = _spec(tmp_path)
    client = make_app(tmp_path).test_client()
    scenario = _validator(spec, "Scenario")
    refused = [([1.1, 1.2], [1, -1]), ([1.1] * 50_001, [1] * 50_001)]
    for values, weights in [([1.1, 1.2], [1, 0]), *refused]:
        doc = copy.deepcopy(WORKED)
        doc["buy"]["pue"] = {"dist": "discrete", "values": values, "weights": weights}
        status = client.post("/v1/evaluate", json=doc).status_code
        assert scenario.is_valid(doc) == (status == 200), (len(values), weights[:2], status)
    compare_spec = _validator(spec, "Compare")
    for model, ok in (("llama-3.3-70b", True), ("no-such-model", False), (None, True)):
        request = {"utilisation": 1.0, "model": model, "samples": 100}
        assert compare_spec.is_valid(request) is ok
        assert (client.post("/v1/compare", json=request).status_code == 200) is ok


def test_the_spec_states_the_utilisation_floor(tmp_path):
    # The server refuses a busy share above 0 and below 1e-6; the spec said (0, 1] for a
    # comparison and [0, 1] for a scenario's levels, so 5e-7 was valid by the spec.
    spec = _spec(tmp_path)
    client = make_app(tmp_path).test_client()
    utilisation = _props(spec, "Compare")["utilisation"]
    assert utilisation["minimum"] == MIN_UTILISATION and "exclusiveMinimum" not in utilisation
    compare_spec = _validator(spec, "Compare")
    for u in (-1, 0, 5e-7, MIN_UTILISATION, 0.5, 1, 1.5):
        request = {"utilisation": u, "samples": 20}
        status = client.post("/v1/compare", json=request).status_code
        assert compare_spec.is_valid(request) == (status == 200), (u, status)
    scenario = _validator(spec, "Scenario")
    grids = ([0, 5e-7], [0, MIN_UTILISATION, 0.5], {"start": 5e-7, "stop": 0.5, "step": 0.25})
    for levels in (*grids, {"start": 0, "stop": 0.5, "step": 0.25}):
        doc = {**WORKED, "utilisation": levels}
        status = client.post("/v1/evaluate", json=doc).status_code
        assert scenario.is_valid(doc) == (status == 200), (levels, status)


def test_a_retry_after_a_503_stores_the_run_once(tmp_path, monkeypatch, clock):
    client = make_app(tmp_path, DEADLINE=20).test_client()
    headers = {"Idempotency-Key": "4a7c1f0e-retry"}
    _late_evaluation(monkeypatch, clock, 21.0)
    assert_error(client.post("/v1/runs", json=WORKED, headers=headers), 503)
    _late_evaluation(monkeypatch, clock, 1.0)
    first = client.post("/v1/runs", json=WORKED, headers=headers)
    second = client.post("/v1/runs", json=WORKED, headers=headers)
    assert first.status_code == second.status_code == 201
    assert first.get_json()["id"] == second.get_json()["id"]
    assert client.get("/v1/runs").get_json()["total"] == 1


@pytest.fixture
def slow_server(tmp_path: Path) -> Iterator[int]:
    """gunicorn with one worker, an 8 s timeout and a 1 s deadline, every work limit lifted."""
    port = free_port()
    env = {
        **os.environ,
        "COSTMODEL_DB": str(tmp_path / "runs.sqlite3"),
        "COSTMODEL_API_KEYS": "",
        "COSTMODEL_DEADLINE": "1",
        "COSTMODEL_MAX_WORK": str(10**13),
        "COSTMODEL_MAX_SAMPLES": "400000",
        "PYTHONPATH": str(ROOT),
    }
    command = [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", "1",
               "--timeout", "8", "api:create_app()"]  # fmt: skip
    with (tmp_path / "gunicorn.log").open("wb") as log:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            started = time.monotonic()
            while not _answers(port):
                assert proc.poll() is None and time.monotonic() - started < 60, "no gunicorn"
                time.sleep(0.2)
            yield port
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def _answers(port: int) -> bool:
    try:
        return request(port, "GET", "/health", timeout=2)[0] == 200
    except OSError:
        return False


def test_gunicorn_answers_a_request_past_its_deadline_in_the_error_shape(slow_server):
    # 400,000 draws x 101 levels x 240 months of uncertain inputs: some 15 s of work. gunicorn
    # used to kill the worker at its timeout and answer with its own HTML 500.
    doc = yaml.safe_load((EXAMPLES / "lab-4x-rtx2080ti-vs-p3-8xlarge.yaml").read_text("utf-8"))
    doc.update(horizon_months=240, utilisation={"start": 0.0, "stop": 1.0, "step": 0.01})
    doc["simulation"] = {"samples": 400_000, "seed": 1}
    for route in ("/v1/evaluate", "/v1/runs"):
        status, headers, body = request(slow_server, "POST", route, doc, timeout=60)
        assert status == 503, body[:300]
        assert headers["Content-Type"] == "application/json"
        assert "COSTMODEL_DEADLINE" in json.loads(body)["message"]
    assert json.loads(request(slow_server, "GET", "/v1/runs")[2])["total"] == 0


def test_a_daily_peak_and_an_api_are_counted_as_the_work_they_add():
    # a plan under a daily peak sums each band month of each candidate with a capacity one by
    # one, 1.8 units a candidate-month, and its best plan's monthly split sets every month
    # against the band, 1.5 units a month whatever the candidates: 958,150,037 + 1 x 12 x 1.5
    # + 101,101 x 12 x 1.8 = 958,150,037 + 18 + 2,183,781.6 = 960,333,836.6; when one of them
    # is all-cloud (no band), 101,100 x 12 x 1.8 = 2,183,760: 960,333,815
    peaked = limits.PlanShape(101_101, 12, servers=1001, reserves=True, peaked=True)
    assert limits.plan_work(1, peaked) == 960_333_837
    with_cloud = dataclasses.replace(peaked, all_cloud=True)
    assert limits.plan_work(1, with_cloud) == 960_333_815
    # the months of a plan's draws whatever its candidates: 121,000 draws of one all-cloud
    # candidate over 240 months, carbon and a daily peak (5.64 s of CPU in the report; 0.80 s
    # now), two passes (2 x 3), one table of emissions (2.5), the split under the peak (1.5):
    # 1,000,000 + 121,000 x (240 x (2 x 3 + 1 x 1 x 2.5 + 1.5) + 20 + 9 + (4 + 7.5) + 0)
    # + 1 x 15 x 15,000 + 6,000 + ((3 + 2) x 586 + 240 x 75 + 65,536) x 4
    # = 1,000,000 + 121,000 x (2,400 + 29 + 11.5) + 225,000 + 6,000 + 345,864 = 296,877,364
    # units, 0.89 s (240 x 121,000 draw-months are 15 chunks: the months are built twice, for
    # the one block and the best plan's split; the emissions' sums once, the split needs none)
    lone = limits.PlanShape(1, 240, peaked=True, carbon=True, all_cloud=True)
    assert limits.plan_passes(121_000, lone) == 2
    assert limits.plan_work(121_000, lone) == 296_877_364
    # a scenario: 10,000 x (36 x 3 + 20 x 13 + 250) = 10,000 x 618 = 6,180,000; with a hosted
    # API its payback is a second pass over the months (36 x 2 more; its bands cost next to
    # nothing): 10,000 x (36 x 5 + 20 x 13 + 250) = 10,000 x 690 = 6,900,000
    assert limits.scenario_work(10_000, 20, 36) == 6_180_000
    assert limits.scenario_work(10_000, 20, 36, api=True) == 6_900_000


def test_a_plan_has_an_all_cloud_candidate_when_its_servers_and_reservations_start_at_0():
    # the all-cloud candidate has no capacity, so no band under a daily peak
    doc = plan(6, 2)
    doc["demand"]["peak_to_mean"] = 1.5
    shape = limits.PlanShape.of(scenarios.load_mapping(doc).inputs)
    assert (shape.candidates, shape.peaked, shape.all_cloud) == (21, True, True)
    doc["reserve"]["instances"]["min"] = 1
    shape = limits.PlanShape.of(scenarios.load_mapping(doc).inputs)
    assert (shape.candidates, shape.all_cloud) == (14, False)


def test_a_plan_rebuilding_its_months_counts_the_emissions_of_every_pass(tmp_path):
    # 108,822 draws of 21 x 5 = 105 candidates over 48 months counting carbon were counted
    # 500,000,000 units (1.50 s, answered at once) and took 3.74 s of CPU: 5.2 million
    # draw-months are three chunks, so each block of 14 candidates (50,331,648 // (32 x
    # 108,822)) builds the months and the three tables of emissions again, 8 blocks, then once
    # for the best candidates compared and once for the split: 10 passes, 9 with emissions.
    # 108,822 x (48 x (10 x 3 + 3 x 9 x 2.5) + 20 + 21 x 9 + 105 x (4 + 7.5))
    #   = 108,822 x (4,680 + 20 + 189 + 1,207.5) = 108,822 x 6,096.5 = 663,433,323
    # + 21 x 3 x 15,000 (each block's turn of the server counts over 3 chunks: 945,000)
    # + 1,000,000 + 105 x 6,000 + ((3 x 105 + 2) x 586 + 48 x 75 + 65,536) x 4 (1,019,592)
    #   = 667,027,915: a job, not answered at once
    shape = limits.PlanShape(105, 48, servers=21, reserves=True, carbon=True)
    assert block_rows(108_822, carbon=True) == 14
    assert limits.plan_passes(108_822, shape) == 10
    assert limits.plan_work(108_822, shape) == 667_027_915
    doc = plan(20, 4, 48)
    doc["own"]["grid"] = "DE"
    doc["carbon"] = {"usd_per_tonne": 100}
    client = make_app(tmp_path).test_client()
    body = assert_error(client.post("/v1/plans?samples=108822", json=doc), 422)
    assert set(errors_by_setting(body)) == {"MAX_WORK"}
    assert "667,027,915 exceeds the limit of 500,000,000" in body["message"]
