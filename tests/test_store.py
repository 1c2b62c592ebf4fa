"""Tests for scenarios.store: the SQLite run store (storage rules)."""

from __future__ import annotations

import multiprocessing
import queue
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scenarios import store as store_mod
from scenarios.store import RunRecord, RunStore, StoreError

URL_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{20,}$")

RESULT = {
    "schema_version": 1,
    "utilisation": [0.0, 0.5, 1.0],
    "breakeven_utilisation": {
        "mean": 0.1,
        "p10": 0.05,
        "p50": 0.0714134,
        "p90": None,
        "prob_always": 0.0,
        "prob_never": 0.12,
    },
}
SCENARIO = {"name": "worked-example", "horizon_months": 36}


def _add(store: RunStore, i: int = 0, **kwargs: object) -> RunRecord:
    kwargs.setdefault("scenario", {**SCENARIO, "i": i})
    kwargs.setdefault("result", RESULT)
    kwargs.setdefault("seed", i)
    kwargs.setdefault("samples", 100)
    kwargs.setdefault("catalog_version", "2026.11.29")
    return store.add(**kwargs)  # type: ignore[arg-type]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "runs.sqlite3"


@pytest.fixture
def store(db_path: Path) -> Iterator[RunStore]:
    with RunStore(db_path) as s:
        yield s


@pytest.fixture
def ticking_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every insert one second newer than the previous one."""
    start = datetime(2026, 11, 29, 12, 0, 0, 123456, tzinfo=UTC)
    ticks = iter(range(1_000_000))
    monkeypatch.setattr(
        store_mod,
        "_utcnow",
        lambda: (start + timedelta(seconds=next(ticks))).isoformat(timespec="microseconds"),
    )


# ---------------------------------------------------------------- round trip


def test_add_get_round_trip(store: RunStore) -> None:
    rec = _add(store, 7, owner="owner-a", cache_key="k1", name="my run")
    assert URL_SAFE_ID.match(rec.id)
    got = store.get(rec.id, owner="owner-a")
    assert got == rec
    assert got.scenario == {**SCENARIO, "i": 7}
    assert got.result == RESULT
    assert (got.seed, got.samples, got.catalog_version) == (7, 100, "2026.11.29")
    assert (got.name, got.owner, got.cache_key) == ("my run", "owner-a", "k1")
    # ISO-8601 UTC with microseconds
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00", got.created_at)
    assert got.updated_at == got.created_at
    assert store.count(owner="owner-a") == 1
    assert [r.id for r in store.list(owner="owner-a")] == [rec.id]
    assert store.get("no-such-id", owner="owner-a") is None


def test_name_defaults_to_scenario_name(store: RunStore) -> None:
    assert _add(store).name == "worked-example"
    assert _add(store, scenario={"horizon_months": 12}).name is None


def test_summary_omits_result(store: RunStore) -> None:
    rec = _add(store, 3)
    assert rec.summary() == {
        "id": rec.id,
        "name": "worked-example",
        "seed": 3,
        "samples": 100,
        "catalog_version": "2026.11.29",
        "created_at": rec.created_at,
        "breakeven_p50": 0.0714134,
    }
    assert "breakeven_p50" not in _add(store, result={"warnings": []}).summary()
    never = _add(store, result={"breakeven_utilisation": {"p50": None}})
    assert never.summary()["breakeven_p50"] is None


def test_json_stored_compact(store: RunStore, db_path: Path) -> None:
    rec = _add(store, result={"a": [1, 2.5], "b": None})
    with sqlite3.connect(db_path) as conn:
        raw = conn.execute("SELECT result_json FROM runs WHERE id = ?", (rec.id,)).fetchone()[0]
    assert raw == '{"a":[1,2.5],"b":null}'


def test_list_newest_first_and_paginates(store: RunStore, ticking_clock: None) -> None:
    ids = [_add(store, i).id for i in range(7)]
    newest_first = ids[::-1]
    assert [r.id for r in store.list()] == newest_first
    assert [r.id for r in store.list(limit=3)] == newest_first[:3]
    assert [r.id for r in store.list(limit=3, offset=3)] == newest_first[3:6]
    assert [r.id for r in store.list(limit=3, offset=6)] == newest_first[6:]
    assert store.list(limit=3, offset=7) == []
    assert store.list(limit=0) == []
    assert store.count() == 7


def test_list_ties_broken_by_id(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_mod, "_utcnow", lambda: "2026-11-29T12:00:00.000000+00:00")
    ids = [_add(store, i).id for i in range(10)]
    listed = [r.id for r in store.list()]
    assert listed == sorted(ids, reverse=True)
    assert [r.id for r in store.list(limit=4, offset=4)] == listed[4:8]


def test_list_rejects_negative_paging(store: RunStore) -> None:
    with pytest.raises(ValueError, match="limit"):
        store.list(limit=-1)
    with pytest.raises(ValueError, match="offset"):
        store.list(offset=-1)


def test_ids_unique_and_url_safe(store: RunStore) -> None:
    ids = [_add(store, i).id for i in range(200)]
    assert len(set(ids)) == 200
    assert all(URL_SAFE_ID.match(i) for i in ids)


# ---------------------------------------------------------------- validation


def test_nan_rejected_before_touching_db(store: RunStore) -> None:
    store.close()  # any DB access would now raise StoreError instead
    with pytest.raises(ValueError, match="NaN") as excinfo:
        _add(store, result={"buy_tco": {"mean": [float("nan")]}})
    assert excinfo.type is ValueError


def test_nan_leaves_db_empty(store: RunStore) -> None:
    with pytest.raises(ValueError):
        _add(store, scenario={"pue": float("inf")})
    assert store.count() == 0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"samples": 0}, "samples"),
        ({"seed": True}, "seed"),
        ({"seed": 2**64}, "seed"),
        ({"catalog_version": ""}, "catalog_version"),
        ({"owner": ""}, "owner"),
        ({"cache_key": ""}, "cache_key"),
        ({"result": [1, 2]}, "result"),
        ({"result": {"x": object()}}, "JSON"),
    ],
)
def test_invalid_arguments(store: RunStore, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        _add(store, **kwargs)
    assert store.count() == 0


# ---------------------------------------------------------------- owners


def test_owner_isolation(store: RunStore) -> None:
    a = _add(store, 1, owner="hash-a")
    b = _add(store, 2, owner="hash-b")
    anon = _add(store, 3)

    assert store.get(a.id, owner="hash-a") == a
    assert store.get(a.id, owner="hash-b") is None
    assert store.get(a.id) is None
    assert store.get(b.id, owner="hash-a") is None
    assert store.get(anon.id) == anon
    assert store.get(anon.id, owner="hash-a") is None

    assert [r.id for r in store.list(owner="hash-a")] == [a.id]
    assert [r.id for r in store.list(owner="hash-b")] == [b.id]
    assert [r.id for r in store.list()] == [anon.id]
    assert (store.count(owner="hash-a"), store.count(owner="hash-b"), store.count()) == (1, 1, 1)
    assert store.count(owner="hash-c") == 0


# ---------------------------------------------------------------- cache keys


def test_same_owner_and_cache_key_returns_existing(store: RunStore) -> None:
    first = _add(store, 1, owner="o", cache_key="sha-1")
    second = _add(store, 2, owner="o", cache_key="sha-1")
    assert second.id == first.id
    assert second.seed == 1  # the stored run, not the new arguments
    assert store.count(owner="o") == 1
    assert store.find("sha-1", owner="o") == first
    assert store.find("sha-2", owner="o") is None


def test_anonymous_runs_unique_by_cache_key(store: RunStore) -> None:
    first = _add(store, 1, cache_key="sha-1")
    assert _add(store, 2, cache_key="sha-1").id == first.id
    assert store.count() == 1
    assert store.find("sha-1") == first
    # runs without a cache key are never deduplicated
    _add(store, 3)
    _add(store, 3)
    assert store.count() == 3


def test_different_owners_may_share_cache_key(store: RunStore) -> None:
    a = _add(store, 1, owner="a", cache_key="sha-1")
    b = _add(store, 1, owner="b", cache_key="sha-1")
    anon = _add(store, 1, cache_key="sha-1")
    assert len({a.id, b.id, anon.id}) == 3
    assert store.find("sha-1", owner="a") == a
    assert store.find("sha-1", owner="b") == b
    assert store.find("sha-1") == anon


def test_insert_race_resolved_by_integrity_error(
    store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer commits the same key between our check and insert: the unique index
    rejects the insert and add() returns the winner's row."""
    winner = _add(store, 1, owner="o", cache_key="k")
    real_find = RunStore._find
    calls = []

    def stale_first_find(conn, cache_key, owner):  # type: ignore[no-untyped-def]
        calls.append(cache_key)
        return None if len(calls) == 1 else real_find(conn, cache_key, owner)

    monkeypatch.setattr(RunStore, "_find", staticmethod(stale_first_find))
    assert _add(store, 2, owner="o", cache_key="k").id == winner.id
    assert len(calls) == 2
    assert store.count(owner="o") == 1


# ---------------------------------------------------------------- concurrency


def test_threads_add_concurrently(store: RunStore) -> None:
    n_threads, per_thread = 16, 25
    barrier = threading.Barrier(n_threads)

    def work(t: int) -> list[str]:
        barrier.wait()
        return [_add(store, t * 1000 + i, owner="o").id for i in range(per_thread)]

    with ThreadPoolExecutor(n_threads) as pool:
        ids = [i for chunk in pool.map(work, range(n_threads)) for i in chunk]

    total = n_threads * per_thread
    assert len(ids) == len(set(ids)) == total
    assert store.count(owner="o") == total
    listed = store.list(owner="o", limit=total + 10)
    assert {r.id for r in listed} == set(ids)
    assert sorted(r.seed for r in listed) == sorted(
        t * 1000 + i for t in range(n_threads) for i in range(per_thread)
    )
    assert all(store.get(i, owner="o") is not None for i in ids)


def _process_worker(
    path: str, worker: int, n: int, barrier: threading.Barrier, queue: multiprocessing.Queue
) -> None:
    """Child-process body for the spawn test: add ``n`` runs and report their ids."""
    s = RunStore(path)
    barrier.wait()
    ids = [_add(s, worker * 1000 + i, owner="p").id for i in range(n)]
    s.close()
    queue.put(ids)


def test_processes_add_concurrently(db_path: Path) -> None:
    n_procs, per_proc = 4, 25
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(n_procs, timeout=120)  # children import the package first: be patient
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_process_worker, args=(str(db_path), w, per_proc, barrier, results))
        for w in range(n_procs)
    ]
    for p in procs:
        p.start()
    chunks: list[list[str]] = []
    deadline = time.monotonic() + 240
    try:
        while len(chunks) < n_procs:
            try:
                chunks.append(results.get(timeout=0.5))
            except queue.Empty:
                failed = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
                if failed:
                    pytest.fail(f"worker process(es) failed with exit codes {failed}")
                if time.monotonic() > deadline:
                    pytest.fail("worker processes did not finish in time")
    finally:
        for p in procs:  # never leave a child behind (it would hang interpreter exit)
            p.join(timeout=30)
            if p.is_alive():
                p.terminate()
                p.join()
    assert [p.exitcode for p in procs] == [0] * n_procs

    ids = [i for chunk in chunks for i in chunk]
    total = n_procs * per_proc
    assert len(ids) == len(set(ids)) == total
    s = RunStore(db_path)
    assert s.count(owner="p") == total
    assert {r.id for r in s.list(owner="p", limit=total + 10)} == set(ids)
    assert all(s.get(i, owner="p") is not None for i in ids)


def _fork_worker(store: RunStore, worker: int, n: int, results: multiprocessing.Queue) -> None:
    """Child-process body for the fork test: use the store object inherited from the parent."""
    ids = [_add(store, worker * 1000 + i).id for i in range(n)]
    results.put((ids, len(store_mod._INHERITED_CONNECTIONS)))


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="platform has no fork"
)
def test_forked_children_do_not_reuse_parent_connection(store: RunStore) -> None:
    first = _add(store, 0)  # the parent thread now holds an open connection
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    procs = [ctx.Process(target=_fork_worker, args=(store, w, 10, results)) for w in (1, 2)]
    for p in procs:
        p.start()
    try:
        reports = [results.get(timeout=120) for _ in procs]
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.terminate()
                p.join()
    assert [p.exitcode for p in procs] == [0, 0]
    assert [n_inherited for _, n_inherited in reports] == [1, 1]  # set aside, not reused
    ids = {i for chunk, _ in reports for i in chunk}
    assert len(ids) == 20
    assert store.count() == 21  # the parent's cached connection still works and sees them all
    assert store.get(first.id) == first


def test_each_thread_has_its_own_connection(store: RunStore) -> None:
    def conn_id() -> int:
        with store._connection() as conn:
            return id(conn)

    mine = conn_id()
    assert conn_id() == mine  # reused within a thread
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(conn_id).result() != mine


@pytest.mark.parametrize("owner", [None, "o"])
def test_threads_racing_same_cache_key_store_one_row(store: RunStore, owner: str | None) -> None:
    n_threads = 16
    barrier = threading.Barrier(n_threads)

    def work(t: int) -> str:
        barrier.wait()
        return _add(store, t, owner=owner, cache_key="same-key").id

    with ThreadPoolExecutor(n_threads) as pool:
        ids = set(pool.map(work, range(n_threads)))

    assert len(ids) == 1
    assert store.count(owner=owner) == 1
    assert store.find("same-key", owner=owner).id == ids.pop()


# ---------------------------------------------------------------- schema & connection


def _user_version(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA user_version").fetchone()[0]


def test_migrates_empty_version_0_database(db_path: Path) -> None:
    with sqlite3.connect(db_path) as conn:
        conn.execute("PRAGMA user_version = 0")
        assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    s = RunStore(db_path)
    assert _user_version(db_path) == s.schema_version == len(store_mod._MIGRATIONS) >= 1
    with sqlite3.connect(db_path) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"runs", "runs_owner_created", "runs_owner_cache_key"} <= names
    rec = _add(s, 1)
    assert s.get(rec.id) == rec


def test_reopen_keeps_data_and_version(db_path: Path) -> None:
    with RunStore(db_path) as s:
        rec = _add(s, 1, owner="o", cache_key="k")
    with RunStore(db_path) as s:
        assert s.get(rec.id, owner="o") == rec
        assert _add(s, 2, owner="o", cache_key="k").id == rec.id
    assert _user_version(db_path) == len(store_mod._MIGRATIONS)


def test_newer_database_raises(db_path: Path) -> None:
    with sqlite3.connect(db_path) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError, match=r"schema version 99.*supports at most version \d"):
        RunStore(db_path)


def test_not_a_database_raises(db_path: Path) -> None:
    db_path.write_bytes(b"this is not a sqlite database, just some text" * 100)
    with pytest.raises(StoreError, match="runs.sqlite3"):
        RunStore(db_path)


def test_wal_mode_and_pragmas(store: RunStore, db_path: Path) -> None:
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with store._connection() as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30000
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL


def test_closed_store_raises(store: RunStore) -> None:
    store.close()
    store.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        store.count()


def test_memory_database_rejected() -> None:
    with pytest.raises(StoreError, match="file path"):
        RunStore(":memory:")


# ---------------------------------------------------------------- path resolution


def test_path_from_env_creates_parents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "a" / "b" / "env.sqlite3"
    monkeypatch.setenv("COSTMODEL_DB", str(target))
    s = RunStore()
    assert s.path == target
    assert target.exists()


def test_argument_overrides_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTMODEL_DB", str(tmp_path / "env.sqlite3"))
    s = RunStore(tmp_path / "arg.sqlite3")
    assert s.path == tmp_path / "arg.sqlite3"
    assert not (tmp_path / "env.sqlite3").exists()


def test_default_path_in_user_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COSTMODEL_DB", raising=False)
    data_dir = tmp_path / "data" / "costmodel"
    monkeypatch.setattr(store_mod.platformdirs, "user_data_dir", lambda *a, **k: str(data_dir))
    s = RunStore()
    assert s.path == data_dir / "runs.sqlite3"
    assert s.path.exists()
