"""Jobs admitted, queued and bounded server-wide: the unfinished jobs of a key (or, on an open
service, of an address) are capped with 429, the jobs running on one server are capped in the
run store whatever process claims them, a queued job shows its place in the queue, and every
run its phase beside its progress."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from api.runs.jobs import JobRunner
from api.service import get_store
from scenarios.store import QueueFull, RunStore
from tests.test_api import assert_error, make_app
from tests.test_api_jobs import ASYNC, _job
from tests.test_plan import PLAN


@pytest.fixture
def store(store_location: str) -> Iterator[RunStore]:
    with RunStore(store_location) as s:
        yield s


def test_unfinished_jobs_are_capped_per_owner_and_per_address(store: RunStore) -> None:
    for i in range(2):
        _job(store, i, owner="key-a", max_unfinished=2)
        _job(store, i, client="10.0.0.1", max_unfinished=2)
    with pytest.raises(QueueFull) as refused:
        _job(store, 9, owner="key-a", max_unfinished=2)
    assert (refused.value.unfinished, refused.value.limit) == (2, 2)
    with pytest.raises(QueueFull):
        _job(store, 9, client="10.0.0.1", max_unfinished=2)
    # another key, another address, and a key whatever its address: each its own count
    _job(store, 9, owner="key-b", max_unfinished=2)
    _job(store, 9, client="10.0.0.2", max_unfinished=2)
    _job(store, 9, owner="key-c", client="10.0.0.1", max_unfinished=2)
    # a running job still counts; a finished one does not
    claim = store.claim_job("w1")
    with pytest.raises(QueueFull):
        _job(store, 9, owner="key-a", max_unfinished=2)
    store.fail_job(claim.run_id, "w1", {"code": 500})
    _job(store, 9, owner="key-a", max_unfinished=2)


def test_racing_posts_of_one_key_admit_no_more_than_the_cap(store: RunStore) -> None:
    admitted, refused = [], []

    def post(i: int) -> None:
        try:
            admitted.append(_job(store, i, owner="k", max_unfinished=3).id)
        except QueueFull:
            refused.append(i)

    threads = [threading.Thread(target=post, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (len(admitted), len(refused)) == (3, 9)


def test_no_more_jobs_run_on_a_server_than_its_concurrency(store: RunStore) -> None:
    ids = [_job(store, i).id for i in range(4)]
    # two processes of server "a" (a limit of 1 between them), one of server "b"
    first = store.claim_job("a:1:x", "a:", 1)
    assert first.run_id == ids[0]
    assert store.claim_job("a:2:y", "a:", 1) is None  # another process of the same server
    assert store.claim_job("b:1:z", "b:", 1).run_id == ids[1]  # another server
    assert store.claim_job("a:2:y", "a:", 2).run_id == ids[2]  # a limit of 2
    store.fail_job(first.run_id, "a:1:x", {"code": 500})
    assert store.claim_job("a:1:x", "a:", 2).run_id == ids[3]
    with pytest.raises(ValueError, match="not named after its server"):
        store.claim_job("w", "a:", 1)


def test_racing_processes_of_one_server_run_no_more_than_its_concurrency(
    store: RunStore,
) -> None:
    for i in range(10):
        _job(store, i)
    claimed: list[str] = []

    def claim(worker: str) -> None:
        if (found := store.claim_job(worker, "s:", 2)) is not None:
            claimed.append(found.run_id)

    threads = [threading.Thread(target=claim, args=(f"s:{i}:t",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(claimed) == 2


def test_a_queued_job_knows_its_place(store: RunStore) -> None:
    ids = [_job(store, i).id for i in range(3)]
    assert [store.queue_position(i) for i in ids] == [1, 2, 3]
    claim = store.claim_job("w1")
    assert [store.queue_position(i) for i in ids] == [None, 1, 2]
    store.requeue_job(claim.run_id, "w1")  # taken back: first in line again
    assert [store.queue_position(i) for i in ids] == [1, 2, 3]
    assert store.queue_position("no-such-run") is None


def test_a_full_queue_is_answered_429_with_retry_after(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(JobRunner, "wake", lambda self: None)  # the jobs stay queued
    client = make_app(tmp_path, MAX_QUEUED_JOBS=2).test_client()
    first, second = (client.post("/v1/runs", json=PLAN, headers=ASYNC) for _ in range(2))
    assert (first.status_code, second.status_code) == (202, 202)
    run = client.get(first.headers["Location"]).get_json()
    assert (run["status"], run["phase"], run["queue_position"]) == ("queued", "queued", 1)
    assert client.get(second.headers["Location"]).get_json()["queue_position"] == 2
    refused = client.post("/v1/runs", json=PLAN, headers=ASYNC)
    body = assert_error(refused, 429)
    assert refused.headers["Retry-After"] == "10"
    assert "this client address already has 2 jobs queued or running" in body["message"]
    assert "COSTMODEL_MAX_QUEUED_JOBS (2)" in body["message"]
    assert client.get("/v1/runs").get_json()["total"] == 2  # nothing stored for it
    # another address has its own queue
    other = client.post(
        "/v1/runs", json=PLAN, headers=ASYNC, environ_base={"REMOTE_ADDR": "10.1.2.3"}
    )
    assert other.status_code == 202


def test_a_job_reports_its_phase_with_its_progress(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # progress 1.0 while running read as done (the statistics and the writing follow the
    # draws), and a job taken back and claimed again read running/0.0 without a word why
    monkeypatch.setattr(JobRunner, "wake", lambda self: None)
    app = make_app(tmp_path)
    client = app.test_client()
    location = client.post("/v1/runs", json=PLAN, headers=ASYNC).headers["Location"]
    store = get_store(app)

    def seen() -> tuple[str, float, str, Any]:
        run = client.get(location).get_json()
        return run["status"], run["progress"], run["phase"], run["queue_position"]

    assert seen() == ("queued", 0.0, "queued", 1)
    claim = store.claim_job("w1")
    assert seen() == ("running", 0.0, "starting", None)
    store.set_progress(claim.run_id, "w1", 0.5)
    assert seen() == ("running", 0.5, "drawing", None)
    store.set_progress(claim.run_id, "w1", 1.0)
    assert seen() == ("running", 1.0, "summarising", None)
    store.requeue_job(claim.run_id, "w1")  # its process stopped
    assert seen() == ("queued", 0.0, "queued", 1)
    store.claim_job("w2")
    assert seen() == ("running", 0.0, "starting", None)
    listed = client.get("/v1/runs").get_json()["items"][0]
    assert (listed["status"], listed["phase"]) == ("running", "starting")
