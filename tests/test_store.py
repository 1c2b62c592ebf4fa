"""Tests for scenarios.store: the run store's rules, on SQLite and on PostgreSQL."""

from __future__ import annotations

import multiprocessing
import queue
import re
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scenarios.store import (
    MIGRATIONS,
    RunRecord,
    RunStore,
    StoreError,
    parse_location,
    runstore,
    sqlite,
)
from scenarios.store import location as location_mod
from tests import backends

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


def _is_postgres(location: str) -> bool:
    return location.startswith("postgresql://")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "runs.sqlite3"


@pytest.fixture
def store(store_location: str) -> Iterator[RunStore]:
    """A new store on each backend."""
    with RunStore(store_location) as s:
        yield s


@pytest.fixture
def sqlite_store(db_path: Path) -> Iterator[RunStore]:
    """A new SQLite store, for the rules only SQLite has."""
    with RunStore(db_path) as s:
        yield s


@pytest.fixture
def ticking_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every insert one second newer than the previous one."""
    start = datetime(2026, 11, 29, 12, 0, 0, 123456, tzinfo=UTC)
    ticks = iter(range(1_000_000))
    monkeypatch.setattr(
        runstore,
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


def test_json_stored_compact(store: RunStore, store_location: str) -> None:
    rec = _add(store, result={"a": [1, 2.5], "b": None})
    rows = backends.query(store_location, "SELECT result_json FROM runs WHERE id = ?", (rec.id,))
    assert rows == [('{"a":[1,2.5],"b":null}',)]


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
    monkeypatch.setattr(runstore, "_utcnow", lambda: "2026-11-29T12:00:00.000000+00:00")
    ids = [_add(store, i).id for i in range(10)]
    listed = [r.id for r in store.list()]
    assert listed == sorted(ids, reverse=True)  # byte order, whatever the database's locale
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


def test_an_id_collision_draws_a_new_id(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The unique id index refuses a colliding id (odds 2**-128); add() retries with another."""
    taken = _add(store, 1)
    drawn = iter([taken.id, "a-fresh-id-of-22-chars"])
    monkeypatch.setattr(runstore.secrets, "token_urlsafe", lambda n: next(drawn))
    assert _add(store, 2).id == "a-fresh-id-of-22-chars"
    assert store.get(taken.id) == taken
    assert store.count() == 2


def test_repeated_id_collisions_raise(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = _add(store, 1)
    monkeypatch.setattr(runstore.secrets, "token_urlsafe", lambda n: taken.id)
    with pytest.raises(StoreError, match="repeated id conflicts"):
        _add(store, 2)
    assert store.count() == 1


# ---------------------------------------------------------------- concurrency


WRITERS, RUNS = 64, 1_000


def test_64_writers_store_1000_runs_none_lost_or_duplicated(
    store: RunStore, record_property: pytest.RecordProperty
) -> None:
    """64 threads store 1,000 runs at once. Every other run has a cache key and is stored by two
    writers racing each other: each run is stored exactly once, and both racers get its row."""
    keyed = set(range(0, RUNS, 2))
    work = {
        w: [i for i in range(RUNS) if i % WRITERS == w or (i in keyed and (i + 1) % WRITERS == w)]
        for w in range(WRITERS)
    }
    barrier = threading.Barrier(WRITERS)

    def write(w: int) -> list[tuple[int, str]]:
        barrier.wait(timeout=60)
        return [
            (i, _add(store, i, owner="o", cache_key=f"key-{i}" if i in keyed else None).id)
            for i in work[w]
        ]

    started = time.perf_counter()
    with ThreadPoolExecutor(WRITERS) as pool:
        returned = [pair for chunk in pool.map(write, range(WRITERS)) for pair in chunk]
    seconds = time.perf_counter() - started

    ids_of: dict[int, set[str]] = {}
    for i, run_id in returned:
        ids_of.setdefault(i, set()).add(run_id)
    assert len(returned) == RUNS + len(keyed)  # every call answered
    assert all(len(ids) == 1 for ids in ids_of.values())  # racers of one key got one row
    ids = {run_id for _, run_id in returned}
    listed = store.list(owner="o", limit=RUNS + 10)
    stored, duplicates = len(listed), len(listed) - len({r.id for r in listed})
    record_property("runs_stored", stored)
    record_property("duplicates", duplicates)
    record_property("seconds", round(seconds, 2))
    assert (stored, duplicates) == (RUNS, 0)
    assert store.count(owner="o") == RUNS
    assert {r.id for r in listed} == ids  # none lost
    assert sorted(r.seed for r in listed) == list(range(RUNS))


def _process_worker(
    path: str, worker: int, n: int, barrier: threading.Barrier, queue: multiprocessing.Queue
) -> None:
    """Child-process body for the spawn test: add ``n`` runs and report their ids."""
    s = RunStore(path)
    barrier.wait()
    ids = [_add(s, worker * 1000 + i, owner="p").id for i in range(n)]
    s.close()
    queue.put(ids)


def test_processes_add_concurrently(store_location: str) -> None:
    n_procs, per_proc = 4, 25
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(n_procs, timeout=120)  # children import the package first: be patient
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_process_worker, args=(store_location, w, per_proc, barrier, results))
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
    with RunStore(store_location) as s:
        assert s.count(owner="p") == total
        assert {r.id for r in s.list(owner="p", limit=total + 10)} == set(ids)
        assert all(s.get(i, owner="p") is not None for i in ids)


def _inherited() -> int:
    """Connections (SQLite) and pools (PostgreSQL) this process set aside after a fork."""
    count = len(sqlite._INHERITED_CONNECTIONS)
    if "scenarios.store.postgres" in sys.modules:
        count += len(sys.modules["scenarios.store.postgres"]._INHERITED_POOLS)
    return count


def _fork_worker(store: RunStore, worker: int, n: int, results: multiprocessing.Queue) -> None:
    """Child-process body for the fork test: use the store object inherited from the parent."""
    ids = [_add(store, worker * 1000 + i).id for i in range(n)]
    results.put((ids, _inherited()))


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="platform has no fork"
)
def test_forked_children_do_not_reuse_parent_connection(store: RunStore) -> None:
    first = _add(store, 0)  # the parent now holds an open connection (SQLite) or pool
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
    assert store.count() == 21  # the parent's connections still work and see them all
    assert store.get(first.id) == first


def test_each_thread_has_its_own_sqlite_connection(sqlite_store: RunStore) -> None:
    def conn_id() -> int:
        with sqlite_store._dialect.connection() as conn:
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


def _version(location: str) -> int:
    """The schema version recorded in the database, read without the store."""
    if _is_postgres(location):
        return backends.query(location, "SELECT version FROM costmodel_schema_version")[0][0]
    return backends.query(location, "PRAGMA user_version")[0][0]


def _set_version(location: str, version: int) -> None:
    if _is_postgres(location):
        backends.query(location, "CREATE TABLE costmodel_schema_version (version INTEGER)")
        backends.query(location, "INSERT INTO costmodel_schema_version VALUES (?)", (version,))
    else:
        backends.query(location, f"PRAGMA user_version = {version:d}")


def _schema_objects(location: str) -> set[str]:
    if _is_postgres(location):
        sql = (
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() UNION "
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
        )
    else:
        sql = "SELECT name FROM sqlite_master"
    return {row[0] for row in backends.query(location, sql)}


def test_migrates_an_empty_database(store_location: str) -> None:
    if not _is_postgres(store_location):
        _set_version(store_location, 0)  # an empty SQLite file at version 0
    assert _schema_objects(store_location) == set()
    with RunStore(store_location) as s:
        assert _version(store_location) == s.schema_version == len(MIGRATIONS) >= 1
        assert {"runs", "runs_owner_created", "runs_owner_cache_key"} <= _schema_objects(
            store_location
        )
        rec = _add(s, 1)
        assert s.get(rec.id) == rec


def test_reopen_keeps_data_and_version(store_location: str) -> None:
    with RunStore(store_location) as s:
        rec = _add(s, 1, owner="o", cache_key="k")
    with RunStore(store_location) as s:
        assert s.get(rec.id, owner="o") == rec
        assert _add(s, 2, owner="o", cache_key="k").id == rec.id
    assert _version(store_location) == len(MIGRATIONS)


def test_stores_opened_at_once_migrate_once(store_location: str) -> None:
    with ThreadPoolExecutor(8) as pool:
        stores = list(pool.map(lambda _: RunStore(store_location), range(8)))
    for s in stores:
        s.close()
    assert _version(store_location) == len(MIGRATIONS)


def test_newer_database_raises(store_location: str) -> None:
    _set_version(store_location, 99)
    with pytest.raises(StoreError, match=r"schema version 99.*supports at most version \d"):
        RunStore(store_location)


def test_not_a_database_raises(db_path: Path) -> None:
    db_path.write_bytes(b"this is not a sqlite database, just some text" * 100)
    with pytest.raises(StoreError, match="runs.sqlite3"):
        RunStore(db_path)


def test_wal_mode_and_pragmas(sqlite_store: RunStore, db_path: Path) -> None:
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with sqlite_store._dialect.connection() as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30000
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL


def test_closed_store_raises(store: RunStore) -> None:
    store.close()
    store.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        store.count()


@pytest.mark.parametrize("location", [":memory:", "sqlite:///:memory:"])
def test_memory_database_rejected(location: str) -> None:
    with pytest.raises(StoreError, match="in-memory"):
        RunStore(location)


# ---------------------------------------------------------------- path resolution


def test_path_from_env_creates_parents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "a" / "b" / "env.sqlite3"
    monkeypatch.setenv("COSTMODEL_DB", str(target))
    with RunStore() as s:
        assert s.location == str(target)
    assert target.exists()


def test_argument_overrides_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTMODEL_DB", str(tmp_path / "env.sqlite3"))
    with RunStore(tmp_path / "arg.sqlite3") as s:
        assert s.location == str(tmp_path / "arg.sqlite3")
    assert not (tmp_path / "env.sqlite3").exists()


def test_default_path_in_user_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COSTMODEL_DB", raising=False)
    data_dir = tmp_path / "data" / "costmodel"
    monkeypatch.setattr(location_mod.platformdirs, "user_data_dir", lambda *a, **k: str(data_dir))
    with RunStore() as s:
        assert s.location == str(data_dir / "runs.sqlite3")
    assert (data_dir / "runs.sqlite3").exists()


# ---------------------------------------------------------------- locations


@pytest.mark.parametrize(
    ("given", "kind", "target"),
    [
        ("runs.sqlite3", "sqlite", "runs.sqlite3"),
        ("/var/lib/costmodel/runs.sqlite3", "sqlite", "/var/lib/costmodel/runs.sqlite3"),
        ("C:\\costmodel\\runs.sqlite3", "sqlite", "C:\\costmodel\\runs.sqlite3"),
        ("sqlite:///runs.sqlite3", "sqlite", "runs.sqlite3"),
        ("sqlite:////var/lib/runs.sqlite3", "sqlite", "/var/lib/runs.sqlite3"),
        (
            "postgresql://u@db.example/costmodel",
            "postgresql",
            "postgresql://u@db.example/costmodel",
        ),
        ("postgres://u@db.example:6432/c?sslmode=require", "postgresql", None),
    ],
)
def test_supported_locations(given: str, kind: str, target: str | None) -> None:
    place = parse_location(given)
    assert place.kind == kind
    assert place.target == (given if target is None else target)


@pytest.mark.parametrize(
    "given",
    [
        "mysql://u@db.example/costmodel",
        "postgresql+psycopg://u@db.example/costmodel",
        "sqlite://db.example/runs.sqlite3",
        "file:runs.sqlite3",
        "https://db.example/runs",
        "sqlite:///",
    ],
)
def test_unsupported_location_is_an_error_before_anything_is_created(
    given: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old defect: postgresql://... made a SQLite file in a folder named 'postgresql:'."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match=r"file path .*sqlite:///PATH.*postgresql://") as info:
        RunStore(given)
    assert "unsupported" in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_a_password_never_appears_in_messages() -> None:
    for given in ("mysql://user:s3cret@db.example/c", "mysql://db.example/c?password=s3cret"):
        with pytest.raises(StoreError) as info:
            RunStore(given)
        assert "s3cret" not in str(info.value) and "***" in str(info.value)
    port = backends.free_port()  # nothing listens there
    with pytest.raises(StoreError, match="unavailable") as info:
        RunStore(f"postgresql://user:s3cret@127.0.0.1:{port}/costmodel", timeout=2)
    assert "s3cret" not in str(info.value)


def test_postgres_without_the_driver_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg now raises ImportError
    with pytest.raises(StoreError, match=r'pip install "gpu-costmodel\[postgres\]"'):
        RunStore("postgresql://u@db.example/costmodel")


# ---------------------------------------------------------------- a store that fails


@pytest.mark.parametrize("damage", backends.SQLITE_DAMAGES)
def test_a_damaged_sqlite_file_never_acknowledges_a_lost_run(db_path: Path, damage: str) -> None:
    """The file is damaged under an open store: add() either returns a run that a new connection
    reads back, or raises StoreError; it never returns a run nobody else can see."""
    with RunStore(db_path) as s:
        _add(s, 0)
        backends.damage_sqlite(db_path, damage)
        acknowledged = []
        for i in range(1, 6):
            try:
                acknowledged.append(_add(s, i).id)
            except StoreError as exc:
                assert "runs.sqlite3" in str(exc)
    for run_id in acknowledged:
        rows = backends.query(str(db_path), "SELECT id FROM runs WHERE id = ?", (run_id,))
        assert rows == [(run_id,)]
    if damage != "overwrite":  # there the WAL still holds every page: runs are safe
        assert acknowledged == []


def test_postgres_dropped_table_is_a_store_error(postgres_url: str) -> None:
    with RunStore(postgres_url) as s:
        rec = _add(s, 1)
        backends.query(postgres_url, "DROP TABLE runs")
        for call in (lambda: _add(s, 2), lambda: s.get(rec.id), s.count, s.list):
            with pytest.raises(StoreError, match="unavailable.*runs"):
                call()


def test_postgres_unreachable_at_open_fails_at_once() -> None:
    port = backends.free_port()
    started = time.monotonic()
    with pytest.raises(StoreError, match=f"127.0.0.1:{port}.* is unavailable"):
        RunStore(f"postgresql://postgres@127.0.0.1:{port}/postgres")
    assert time.monotonic() - started < 5  # refused at once; no wait for a pool


def _eventually(call, seconds: float = 30.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while True:
        try:
            return call()
        except StoreError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


#: How long the store waits for a pooled connection in the outage test [s].
_OUTAGE_TIMEOUT_S = 0.25


def test_postgres_outage_is_a_store_error_then_the_pool_recovers() -> None:
    try:
        cluster = backends.Cluster()
    except backends.Unavailable as exc:
        backends.unavailable(str(exc))
    try:
        cluster.start()
        # a quarter of a second for a pooled connection: each call below waits that long
        with RunStore(cluster.url, timeout=_OUTAGE_TIMEOUT_S) as s:
            first = _eventually(lambda: _add(s, 1))  # however slow the first connection
            cluster.stop()
            started = time.monotonic()
            for call in (lambda: _add(s, 2), lambda: s.get(first.id), s.count):
                with pytest.raises(StoreError, match="unavailable"):
                    call()
            # each waits about its timeout
            assert time.monotonic() - started < 3 * _OUTAGE_TIMEOUT_S + 5
            cluster.start()
            assert _eventually(lambda: s.get(first.id)) == first
            _add(s, 3)
            assert s.count() == 2
    finally:
        cluster.remove()


# ---------------------------------------------------------------- idempotency keys, write probe


def test_an_idempotency_key_stores_one_run(store: RunStore) -> None:
    first = _add(store, 1, idempotency_key="k", request_hash="h1")
    assert _add(store, 2, idempotency_key="k", request_hash="h1") == first  # nothing written
    assert store.count() == 1
    assert store.find_idempotent("k") == ("h1", first)
    assert store.find_idempotent("other") is None
    with pytest.raises(runstore.KeyReused, match=first.id):
        _add(store, 3, idempotency_key="k", request_hash="h2")
    assert store.count() == 1


def test_idempotency_keys_belong_to_their_owner(store: RunStore) -> None:
    mine = _add(store, 1, owner="a", idempotency_key="k", request_hash="h")
    theirs = _add(store, 1, owner="b", idempotency_key="k", request_hash="h")
    anonymous = _add(store, 1, idempotency_key="k", request_hash="h")
    assert len({mine.id, theirs.id, anonymous.id}) == 3
    assert store.find_idempotent("k", owner="a") == ("h", mine)
    assert store.find_idempotent("k") == ("h", anonymous)


def test_an_idempotency_key_needs_its_request_hash(store: RunStore) -> None:
    with pytest.raises(ValueError, match="go together"):
        _add(store, 1, idempotency_key="k")
    with pytest.raises(ValueError, match="go together"):
        _add(store, 1, request_hash="h")


def test_threads_racing_on_one_idempotency_key_store_one_row(store: RunStore) -> None:
    with ThreadPoolExecutor(8) as pool:
        ids = set(
            pool.map(
                lambda i: _add(store, i, idempotency_key="race", request_hash="h").id, range(16)
            )
        )
    assert len(ids) == 1 and store.count() == 1


def test_a_version_1_store_is_migrated_with_its_runs(store_location: str) -> None:
    backends.query(store_location, "SELECT 1")  # the database exists
    types = (
        {"key": ' COLLATE "C"', "int64": "BIGINT"}
        if _is_postgres(store_location)
        else {
            "key": "",
            "int64": "INTEGER",
        }
    )
    for statement in MIGRATIONS[0]:
        backends.query(store_location, statement.format_map(types))
    _set_version(store_location, 1)
    backends.query(
        store_location,
        f"INSERT INTO runs ({runstore.COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        ("old-run", None, "old", None, "{}", "{}", 1, 10, "2026.1", "2026-01-01", "2026-01-01"),
    )
    with RunStore(store_location) as s:
        assert _version(store_location) == len(MIGRATIONS)  # every step, in one opening
        assert s.get("old-run").name == "old"
        assert _add(s, 1, idempotency_key="k", request_hash="h").id != "old-run"
        assert s.count() == 2


def test_the_write_probe_writes_and_leaves_nothing(store: RunStore, store_location: str) -> None:
    kept = _add(store, 1)
    for _ in range(3):
        store.check_writable()
    assert [r.id for r in store.list()] == [kept.id]
    assert backends.query(store_location, "SELECT COUNT(*) FROM runs")[0][0] == 1


def test_the_write_probe_fails_when_writes_fail(store: RunStore, store_location: str) -> None:
    from tests.test_api import refuse_writes

    _add(store, 1)
    refuse_writes(store_location)
    store.count()  # reads still answer
    with pytest.raises(StoreError, match="full|No space"):
        store.check_writable()
    with pytest.raises(StoreError, match="full|No space"):
        _add(store, 2)
