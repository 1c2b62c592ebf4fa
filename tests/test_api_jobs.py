"""Runs as jobs: the job queue of the run store (claims, heartbeats, leases, on both backends),
and ``POST /v1/runs`` answering 202 for work above the synchronous limit or on ``Prefer:
respond-async``, the job run in a process of its own (or on a Dask cluster) and polled to the
result a synchronous run stores."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

import api.runs.jobs
from api.runs.jobs import JobRunner
from scenarios.store import MIGRATIONS, KeyReused, RunStore, StoreError, runstore
from tests import backends
from tests.test_api import ERROR_KEYS, WORKED, assert_error, close_store, make_app, scenario
from tests.test_plan import PLAN

ASYNC = {"Prefer": "respond-async"}
#: The worked example over 240 months: 200,000 draws are 24 chunks of the engine and
#: 200,000 x (240 x 3 + 4 x 13 + 250) = 204,400,000 units, within COSTMODEL_MAX_WORK
#: (500,000,000), so posted with ``Prefer: respond-async`` to be a job.
LONG = scenario(horizon_months=240, simulation={"samples": 200_000, "seed": 0})
#: Polling stops after this long without the state waited for [s] (a hang, not a slow machine).
PATIENCE_S = 120


def poll(client: FlaskClient, location: str, until: tuple[str, ...] = ("done", "failed")) -> Any:
    """GET ``location`` until the run's status is one of ``until``; the run then."""
    deadline = time.monotonic() + PATIENCE_S
    while True:
        run = client.get(location).get_json()
        if run["status"] in until:
            return run
        assert time.monotonic() < deadline, f"still {run['status']} after {PATIENCE_S} s"
        time.sleep(0.05)


close = close_store  # its job runner too


@pytest.fixture
def store(store_location: str) -> Iterator[RunStore]:
    with RunStore(store_location) as s:
        yield s


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[datetime]:
    """The store's clock, moved by the test: ``clock[0]`` is now."""
    now = [datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)]
    monkeypatch.setattr(runstore, "_utcnow", lambda: now[0].isoformat(timespec="microseconds"))
    return now


def _job(store: RunStore, i: int = 0, **kwargs: Any) -> Any:
    kwargs.setdefault("request", {"i": i})
    return store.add_job(seed=i, samples=10, catalog_version="2026.12.01", **kwargs)


def _column(location: str, column: str, run_id: str) -> Any:
    return backends.query(location, f"SELECT {column} FROM runs WHERE id = ?", (run_id,))[0][0]


# ------------------------------------------------------------------------ the store's queue


def test_a_job_is_queued_then_running_then_done(store: RunStore, store_location: str) -> None:
    queued = _job(store, name="big-plan")
    assert (queued.status, queued.progress, queued.result, queued.scenario) == (
        "queued",
        0.0,
        None,
        None,
    )
    assert store.get(queued.id) == queued
    claim = store.claim_job("w1")
    assert (claim.run_id, claim.request, claim.attempts) == (queued.id, {"i": 0}, 1)
    assert store.get(queued.id).status == "running"
    assert store.set_progress(queued.id, "w1", 0.25)
    assert not store.set_progress(queued.id, "w1", 0.1)  # progress never goes back
    assert store.get(queued.id).progress == 0.25
    assert store.finish_job(
        queued.id,
        "w1",
        scenario={"name": "big-plan"},
        result={"seed": 7},
        seed=7,
        samples=500,
        catalog_version="2026.12.01",
    )
    done = store.get(queued.id)
    assert (done.status, done.progress, done.result, done.seed, done.samples) == (
        "done",
        1.0,
        {"seed": 7},
        7,
        500,
    )
    for column in ("request_json", "claimed_by", "heartbeat_at"):
        assert _column(store_location, column, queued.id) is None
    assert store.claim_job("w1") is None


def test_racing_claimants_claim_each_job_once(store: RunStore) -> None:
    ids = {_job(store, i).id for i in range(24)}
    claimed: dict[str, list[str]] = {}
    lock = threading.Lock()

    def claim_all(worker: str) -> None:
        while (claim := store.claim_job(worker)) is not None:
            with lock:
                claimed.setdefault(claim.run_id, []).append(worker)

    threads = [threading.Thread(target=claim_all, args=(f"w{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(claimed) == ids
    assert all(len(workers) == 1 for workers in claimed.values())


def test_a_lost_claim_changes_nothing_and_a_stale_job_is_taken_back(
    store: RunStore, clock: list[datetime]
) -> None:
    run_id = _job(store).id
    assert store.claim_job("gone").attempts == 1
    clock[0] += timedelta(seconds=29)
    assert store.recover(30, 2, {"code": 503}) == (0, 0)  # within its lease
    clock[0] += timedelta(seconds=2)
    assert store.recover(30, 2, {"code": 503}) == (1, 0)  # 31 s without a heartbeat
    assert store.get(run_id).status == "queued"
    assert store.claim_job("next").attempts == 2
    # what the process that lost the job still writes changes nothing
    assert not store.set_progress(run_id, "gone", 0.5)
    assert not store.fail_job(run_id, "gone", {"code": 500})
    assert store.heartbeat("gone", [run_id]) == 0
    assert store.heartbeat("next", [run_id]) == 1
    clock[0] += timedelta(seconds=31)
    error = {"code": 503, "status": "Service Unavailable", "message": "stopped", "errors": []}
    assert store.recover(30, 2, error) == (0, 1)  # claimed twice already: failed
    failed = store.get(run_id)
    assert (failed.status, failed.error, failed.result) == ("failed", error, None)


def test_a_job_put_back_by_its_own_process_keeps_its_attempt(
    store: RunStore, store_location: str
) -> None:
    run_id = _job(store).id
    store.claim_job("w")
    assert store.requeue_job(run_id, "w", refund=True)
    assert _column(store_location, "attempts", run_id) == 0
    store.claim_job("w")
    assert store.requeue_job(run_id, "w")  # its process died: the attempt counts
    assert _column(store_location, "attempts", run_id) == 1
    assert not store.requeue_job(run_id, "w")  # queued: no longer w's


def test_an_idempotency_key_stores_one_job(store: RunStore) -> None:
    first = _job(store, idempotency_key="k", request_hash="h")
    assert _job(store, 1, idempotency_key="k", request_hash="h").id == first.id
    with pytest.raises(KeyReused):
        _job(store, 2, idempotency_key="k", request_hash="other")
    assert store.count() == 1


def test_a_version_3_store_is_migrated_with_its_runs_done(store_location: str) -> None:
    postgres = store_location.startswith("postgresql://")
    types = {
        "key": ' COLLATE "C"' if postgres else "",
        "int64": "BIGINT" if postgres else "INTEGER",
    }
    for step in MIGRATIONS[:3]:
        for statement in step:
            backends.query(store_location, statement.format_map(types))
    if postgres:
        backends.query(store_location, "CREATE TABLE costmodel_schema_version (version INTEGER)")
        backends.query(store_location, "INSERT INTO costmodel_schema_version VALUES (3)")
    else:
        backends.query(store_location, "PRAGMA user_version=3")
    backends.query(
        store_location,
        f"INSERT INTO runs ({runstore.COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        ("old", None, "old", None, "{}", '{"a": 1}', 1, 10, "2026.1", "2026-01-01", "2026-01-01"),
    )
    with RunStore(store_location) as s:
        old = s.get("old")
        assert (old.status, old.progress, old.error, old.result) == ("done", 1.0, None, {"a": 1})
        assert s.claim_job("w") is None


# ------------------------------------------------------------------------------- over HTTP


def test_a_job_answers_202_and_ends_with_the_synchronous_result(
    store_client: FlaskClient,
) -> None:
    sync = store_client.post("/v1/runs", json=WORKED)
    assert sync.status_code == 201
    posted = store_client.post("/v1/runs", json=WORKED, headers=ASYNC)
    assert posted.status_code == 202, posted.get_data(as_text=True)
    job = posted.get_json()
    location = posted.headers["Location"]
    assert location == f"/v1/runs/{job['id']}" and job["id"] != sync.get_json()["id"]
    assert posted.headers["Retry-After"] == "1"
    assert posted.headers["Preference-Applied"] == "respond-async"
    assert (job["status"], job["progress"], job["result"], job["scenario"], job["error"]) == (
        "queued",
        0.0,
        None,
        None,
        None,
    )
    run = poll(store_client, location)
    assert run["status"] == "done" and run["progress"] == 1.0 and run["error"] is None
    expected = store_client.get(sync.headers["Location"]).get_json()
    for key in ("result", "scenario", "seed", "samples", "catalog_version", "name"):
        assert run[key] == expected[key], key
    assert "Retry-After" not in store_client.get(location).headers
    listing = store_client.get("/v1/runs").get_json()
    assert [(r["status"], r["progress"]) for r in listing["items"]] == [("done", 1.0)] * 2
    report = store_client.get(f"{location}/report?format=json")
    assert report.status_code == 200
    assert json.loads(report.data) == run["result"]


def test_work_above_the_synchronous_limit_is_a_job(tmp_path: Path) -> None:
    # 10,000 draws x (36 months x 3 + 4 levels x 13 + 250) = 10,000 x 410 = 4,100,000 units
    app = make_app(tmp_path, MAX_WORK=1_000_000, MAX_JOB_WORK=6_000_000)
    client = app.test_client()
    try:
        body = assert_error(client.post("/v1/evaluate?samples=10000", json=WORKED), 422)
        assert "COSTMODEL_MAX_WORK" in body["errors"][0]["message"]
        assert "POST it to /v1/runs to have it run as a job" in body["message"]
        posted = client.post("/v1/runs?samples=10000", json=WORKED)
        assert posted.status_code == 202 and "Preference-Applied" not in posted.headers
        assert poll(client, posted.headers["Location"])["status"] == "done"
        # above the limit of a job: 422 naming it, nothing stored
        body = assert_error(client.post("/v1/runs?samples=20000", json=WORKED), 422)
        assert "8,200,000 exceeds the limit of 6,000,000" in body["message"]  # 20,000 x 410
        assert "(COSTMODEL_MAX_JOB_WORK)" in body["message"]
        assert "as a job" not in assert_error(client.post("/v1/evaluate?samples=20000",
                                                          json=WORKED), 422)["message"]  # fmt: skip
        assert client.get("/v1/runs").get_json()["total"] == 1
    finally:
        close(app)


def test_without_job_workers_a_run_is_answered_at_once_or_refused(tmp_path: Path) -> None:
    client = make_app(tmp_path, MAX_WORK=1_000_000, JOB_WORKERS=0).test_client()
    body = assert_error(client.post("/v1/runs?samples=10000", json=WORKED), 422)
    assert "as a job" not in body["message"]
    posted = client.post("/v1/runs?samples=500", json=WORKED, headers=ASYNC)
    assert posted.status_code == 201 and "Preference-Applied" not in posted.headers


def _written_progress(
    app: Flask, monkeypatch: pytest.MonkeyPatch, hold: threading.Event | None = None
) -> list[float]:
    """Every progress the job runner writes to the store, each share as it comes; with
    ``hold``, the runner waits after the first write until ``hold`` is set."""
    monkeypatch.setattr(api.runs.jobs, "PROGRESS_EVERY_S", 0.0)
    store = api.service.get_store(app)
    written: list[float] = []
    original = store.set_progress

    def spy(run_id: str, worker: str, progress: float) -> bool:
        kept = original(run_id, worker, progress)
        written.append(progress)
        if hold is not None and len(written) == 1:
            hold.wait(PATIENCE_S)
        return kept

    monkeypatch.setattr(store, "set_progress", spy)
    return written


def test_the_progress_of_a_job_rises_to_one(
    store_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 50,000 draws over 240 months: 12,000,000 elements in round(12e6 / 300,000) = 40 chunks
    # of equal size, 1,250 draws each, so the engine reports 1,250 / 50,000, ..., 50,000 / 50,000
    written = _written_progress(store_app, monkeypatch)
    client = store_app.test_client()
    posted = client.post("/v1/runs?samples=50000", json=LONG, headers=ASYNC)
    seen = [posted.get_json()["progress"]]
    run = poll(client, posted.headers["Location"])
    assert run["status"] == "done"
    assert written == pytest.approx([1250 * k / 50_000 for k in range(1, 41)])
    seen.append(run["progress"])
    assert seen == [0.0, 1.0]


def test_a_plan_job_shows_its_progress_before_it_is_done(
    store_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 20,000 draws over 240 months: chunks of 2,000,000 // 240 = 8,333 draws, two of them and
    # one of 3,334, so the plan engine reports 8,333 / 20,000, 16,666 / 20,000 and 1
    polled = threading.Event()  # the runner waits at the first share until it is polled
    written = _written_progress(store_app, monkeypatch, hold=polled)
    client = store_app.test_client()
    plan = {**PLAN, "horizon_months": 240, "own": {**PLAN["own"], "servers": {"min": 0, "max": 1}}}
    posted = client.post("/v1/runs?samples=20000", json=plan, headers=ASYNC)
    assert posted.status_code == 202, posted.get_data(as_text=True)
    location = posted.headers["Location"]
    deadline = time.monotonic() + PATIENCE_S
    try:  # poll until the run is past queued and past a progress of 0
        while (run := client.get(location).get_json())["status"] == "queued" or (
            run["status"] == "running" and run["progress"] == 0
        ):
            assert time.monotonic() < deadline, f"{run['status']} at 0 after {PATIENCE_S} s"
            time.sleep(0.05)
    finally:
        polled.set()
    assert (run["status"], run["progress"]) == ("running", pytest.approx(8333 / 20_000))
    run = poll(client, location)
    assert (run["status"], run["progress"]) == ("done", 1.0)
    assert written == pytest.approx([8333 / 20_000, 16_666 / 20_000, 1.0])


def test_polling_shows_progress_that_never_goes_back(store_client: FlaskClient) -> None:
    posted = store_client.post("/v1/runs", json=LONG, headers=ASYNC)
    assert posted.status_code == 202
    location = posted.headers["Location"]
    seen = []
    while (run := store_client.get(location).get_json())["status"] in ("queued", "running"):
        seen.append(run["progress"])
        time.sleep(0.05)
    assert run["status"] == "done"
    # a running job may read 1 between its last draws and its stored result (the summary)
    assert seen == sorted(seen) and all(0 <= p <= 1 for p in seen)


def _hold_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Queue jobs without running them until the monkeypatch is undone."""
    monkeypatch.setattr(JobRunner, "wake", lambda self: None)


def test_a_failed_job_holds_its_error_in_the_one_shape(
    store_app: Flask, store_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = store_app.test_client()
    kept = client.post("/v1/runs", json=WORKED).get_json()
    with monkeypatch.context() as held:
        _hold_jobs(held)
        posted = client.post("/v1/runs", json=WORKED, headers=ASYNC)
        run_id = posted.get_json()["id"]
        # the catalog resolves the document differently by the time the job runs
        request = json.loads(_column(store_location, "request_json", run_id))
        backends.query(
            store_location,
            "UPDATE runs SET request_json = ? WHERE id = ?",
            (json.dumps({**request, "key": "another-catalog"}), run_id),
        )
    run = poll(client, posted.headers["Location"])  # the GET wakes the runner
    assert run["status"] == "failed" and run["result"] is None and run["scenario"] is None
    error = run["error"]
    assert set(error) == ERROR_KEYS and error["code"] == 422
    assert error["status"] == "Unprocessable Entity"
    assert "resolved the scenario differently" in error["message"]
    assert error["errors"] == [{"path": "", "message": error["message"].split(": ", 1)[1]}]
    body = assert_error(client.get(f"/v1/runs/{run_id}/report"), 409)
    assert "failed" in body["message"]
    # a later failing request leaves the store as it was
    assert_error(client.post("/v1/runs", json={**WORKED, "buy": {"pue": 0.5}}), 422)
    assert client.get(f"/v1/runs/{kept['id']}").get_json()["result"] == kept["result"]
    assert client.get("/v1/runs").get_json()["total"] == 2


def test_a_retried_post_stores_one_job(store_client: FlaskClient) -> None:
    headers = {**ASYNC, "Idempotency-Key": "job-retry-1"}
    first = store_client.post("/v1/runs", json=WORKED, headers=headers)
    again = store_client.post("/v1/runs", json=WORKED, headers=headers)
    assert first.status_code == 202 and again.status_code in (201, 202)
    assert first.get_json()["id"] == again.get_json()["id"]
    poll(store_client, first.headers["Location"])
    done = store_client.post("/v1/runs", json=WORKED, headers=headers)
    assert done.status_code == 201 and done.get_json()["id"] == first.get_json()["id"]
    assert done.get_json()["result"]["buy_tco"]["p50"][0] == pytest.approx(7996.3813, rel=1e-6)
    other = store_client.post("/v1/runs?seed=9", json=WORKED, headers=headers)
    assert_error(other, 409)
    assert store_client.get("/v1/runs").get_json()["total"] == 1


def _job_processes() -> list[multiprocessing.Process]:
    return [p for p in multiprocessing.active_children() if p.name == "costmodel-job"]


def test_a_job_whose_process_is_killed_runs_again(
    store_client: FlaskClient, store_location: str
) -> None:
    posted = store_client.post("/v1/runs", json=LONG, headers=ASYNC)
    location = posted.headers["Location"]
    poll(store_client, location, until=("running",))
    deadline = time.monotonic() + PATIENCE_S
    while not (processes := _job_processes()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(processes[0].pid, signal.SIGKILL)
    run = poll(store_client, location)
    assert run["status"] == "done"
    assert _column(store_location, "attempts", run["id"]) == 2


def test_a_result_the_store_did_not_take_is_computed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(tmp_path, JOB_LEASE=1)
    store = api.service.get_store(app)
    stored = store.finish_job
    calls: list[str] = []

    def flaky(run_id: str, *args: Any, **kwargs: Any) -> bool:
        calls.append(run_id)
        if len(calls) == 1:
            raise StoreError("run store runs.sqlite3 is unavailable: disk I/O error")
        return stored(run_id, *args, **kwargs)

    monkeypatch.setattr(store, "finish_job", flaky)
    client = app.test_client()
    try:
        posted = client.post("/v1/runs", json=WORKED, headers=ASYNC)
        run = poll(client, posted.headers["Location"])
        assert run["status"] == "done" and len(calls) == 2
        assert _column(app.config["DB"], "attempts", run["id"]) == 2
    finally:
        close(app)


def test_a_job_left_running_by_a_stopped_server_is_taken_back(
    tmp_path: Path, store_location: str, clock: list[datetime], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(tmp_path, DB=store_location)
    with RunStore(store_location) as store, monkeypatch.context() as held:
        _hold_jobs(held)
        posted = app.test_client().post("/v1/runs", json=WORKED, headers=ASYNC)
        record = store.get(posted.get_json()["id"])
        store.claim_job("a-server-that-was-killed")  # its heartbeat: 12:00
    clock[0] += timedelta(seconds=31)  # past the lease of 30 s
    client = app.test_client()
    try:
        run = poll(client, f"/v1/runs/{record.id}")
        assert run["status"] == "done"
        assert run["result"]["buy_tco"]["p50"][0] == pytest.approx(7996.3813, rel=1e-6)
        assert _column(store_location, "attempts", record.id) == 2
    finally:
        close(app)


def test_a_closing_server_puts_its_jobs_back_for_another(
    tmp_path: Path, store_location: str
) -> None:
    first = make_app(tmp_path, DB=store_location)
    client = first.test_client()
    posted = client.post("/v1/runs", json=LONG, headers=ASYNC)
    poll(client, posted.headers["Location"], until=("running",))
    close(first)
    run_id = posted.get_json()["id"]
    assert _column(store_location, "status", run_id) == "queued"
    assert _column(store_location, "attempts", run_id) == 0
    second = make_app(tmp_path, DB=store_location)
    try:
        assert poll(second.test_client(), posted.headers["Location"])["status"] == "done"
    finally:
        close(second)


def test_jobs_run_on_a_dask_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(api.runs.jobs, "PROGRESS_EVERY_S", 0.0)
    with distributed.LocalCluster(
        n_workers=1, processes=False, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        app = make_app(tmp_path, DASK_SCHEDULER=cluster.scheduler_address)
        client = app.test_client()
        try:
            sync = client.post("/v1/runs?samples=50000", json=LONG).get_json()
            posted = client.post("/v1/runs?samples=50000", json=LONG, headers=ASYNC)
            run = poll(client, posted.headers["Location"])
            assert run["status"] == "done" and run["result"] == sync["result"]
        finally:
            close(app)
