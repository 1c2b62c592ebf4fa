"""A 503 never hides a stored run: a write whose commit reports a failure after it landed is
looked up by its id (known before the write) and answered as stored; when the store cannot be
asked, the 503 says the run may exist and under which id."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from api.service import get_store
from scenarios.store import MaybeStored, RunStore, StoreError
from tests.test_api import WORKED, assert_error, make_app


def _commit_then_fail(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every write transaction of ``store`` commits, then reports a lost connection."""
    dialect = store._dialect
    real = dialect.transaction

    @contextlib.contextmanager
    def transaction(conn: Any, **kwargs: Any) -> Iterator[None]:
        with real(conn, **kwargs):
            yield
        raise sqlite3.OperationalError("connection lost during COMMIT")

    monkeypatch.setattr(dialect, "transaction", transaction)


def _no_reader(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    @contextlib.contextmanager
    def reader() -> Iterator[Any]:
        raise sqlite3.OperationalError("the database does not answer")
        yield

    monkeypatch.setattr(store._dialect, "reader", reader)


def _add(store: RunStore) -> Any:
    return store.add(scenario={"name": "s"}, result={}, seed=1, samples=10, catalog_version="v")


def test_a_commit_that_landed_is_answered_as_stored(tmp_path, monkeypatch) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as store:
        _commit_then_fail(store, monkeypatch)
        record = _add(store)
        monkeypatch.undo()
        assert store.get(record.id) == record
        assert store.count() == 1


def test_a_write_that_never_reached_the_store_is_an_error(tmp_path, monkeypatch) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as store:

        @contextlib.contextmanager
        def down() -> Iterator[Any]:
            raise sqlite3.OperationalError("unable to open database file")
            yield

        monkeypatch.setattr(store._dialect, "connection", down)
        with pytest.raises(StoreError) as failed:
            _add(store)
        assert not isinstance(failed.value, MaybeStored)  # nothing was sent: nothing may exist


def test_a_store_that_cannot_be_asked_names_the_run_that_may_exist(tmp_path, monkeypatch) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as store:
        _commit_then_fail(store, monkeypatch)
        _no_reader(store, monkeypatch)
        with pytest.raises(MaybeStored) as maybe:
            _add(store)
        monkeypatch.undo()
        assert store.get(maybe.value.run_id) is not None
        assert f"may have been stored as {maybe.value.run_id}" in str(maybe.value)


def test_post_runs_answers_what_is_true_after_a_failed_commit(tmp_path, monkeypatch) -> None:
    app = make_app(tmp_path)
    client = app.test_client()
    store = get_store(app)
    _commit_then_fail(store, monkeypatch)
    response = client.post("/v1/runs", json=WORKED)  # stored, though its commit said not
    assert response.status_code == 201
    run_id = response.get_json()["id"]
    _no_reader(store, monkeypatch)
    body = assert_error(client.post("/v1/runs?seed=5", json=WORKED), 503)
    monkeypatch.undo()
    maybe = body["message"].split("may be stored as ")[1].split(".")[0]
    assert f"GET /v1/runs/{maybe} before sending the request again" in body["message"]
    assert {r["id"] for r in client.get("/v1/runs").get_json()["items"]} == {run_id, maybe}
