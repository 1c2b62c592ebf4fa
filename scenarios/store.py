"""SQLite-backed store of evaluated runs.

The REST API uses it for ``POST /v1/runs`` and ``GET /v1/runs/<id>``; the batch runner uses
:meth:`RunStore.find` to skip scenarios whose cache key already has a stored result.

Storage rules:

* The database file comes from the ``path`` argument, else the ``COSTMODEL_DB`` environment
  variable, else ``<platformdirs user data dir>/costmodel/runs.sqlite3``.
* Each thread gets its own connection (``threading.local``; connections are never shared between
  threads), and a process that inherits a store through ``fork`` (gunicorn workers, batch worker
  processes) opens fresh ones instead of reusing its parent's. Connections use WAL journaling, a
  30 s busy timeout, ``foreign_keys=ON`` and ``synchronous=NORMAL``; every write runs in a
  ``BEGIN IMMEDIATE`` transaction, so concurrent writers serialise instead of losing rows.
* The schema is versioned with ``PRAGMA user_version``; :data:`_MIGRATIONS` holds the steps in
  order. Opening an older database upgrades it; opening a newer one raises :class:`StoreError`.
* Timestamps are ISO-8601 UTC strings with microseconds (``2026-11-29T17:50:00.123456+00:00``),
  so text order is time order.
* Owners are opaque strings (the API passes a hash of the API key, never the key). A run stored
  with an owner is visible only to that owner; a run stored without one only to ``owner=None``.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import logging
import os
import secrets
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import platformdirs

__all__ = ["RunStore", "RunRecord", "StoreError"]

_log = logging.getLogger(__name__)

_ENV_VAR = "COSTMODEL_DB"
_DEFAULT_FILENAME = "runs.sqlite3"
_BUSY_TIMEOUT_S = 30.0
_ID_BYTES = 16  # 128 random bits -> 22 URL-safe characters
_MAX_INSERT_ATTEMPTS = 3
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

# Connections inherited from a parent process through fork(). SQLite forbids using them in the
# child; keeping a reference here means they are never used, nor closed by garbage collection.
_INHERITED_CONNECTIONS: list[sqlite3.Connection] = []

# Schema migrations: step i (0-based) upgrades user_version i -> i + 1. Each step is a tuple of
# single SQL statements executed inside one BEGIN IMMEDIATE transaction (never executescript,
# which would commit early). Append new steps; never edit a released one.
_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """
        CREATE TABLE runs (
            id              TEXT PRIMARY KEY,
            owner           TEXT NULL,
            name            TEXT,
            cache_key       TEXT NULL,
            scenario_json   TEXT NOT NULL,
            result_json     TEXT NOT NULL,
            seed            INTEGER NOT NULL,
            samples         INTEGER NOT NULL,
            catalog_version TEXT NOT NULL,
            created_at      TEXT NOT NULL,
            updated_at      TEXT NOT NULL
        )
        """,
        "CREATE INDEX runs_owner_created ON runs (owner, created_at DESC, id DESC)",
        # COALESCE makes anonymous runs (owner NULL) unique by cache key too; NULLs would
        # otherwise never collide in a UNIQUE index.
        """
        CREATE UNIQUE INDEX runs_owner_cache_key ON runs (COALESCE(owner, ''), cache_key)
        WHERE cache_key IS NOT NULL
        """,
    ),
)

SCHEMA_VERSION: int = len(_MIGRATIONS)

_COLUMNS = (
    "id, owner, name, cache_key, scenario_json, result_json, seed, samples, "
    "catalog_version, created_at, updated_at"
)


class StoreError(ValueError):
    """The run database cannot be used: unreadable file, failed migration, newer schema, or the
    store was closed."""


@dataclass(frozen=True)
class RunRecord:
    """One stored, evaluated run.

    ``scenario`` is the resolved scenario mapping and ``result`` the result's JSON form; both
    are fresh dicts decoded from the database. ``created_at`` and ``updated_at`` are ISO-8601
    UTC timestamps with microseconds.
    """

    id: str
    owner: str | None
    name: str | None
    cache_key: str | None
    scenario: dict[str, Any] = field(hash=False, repr=False)
    result: dict[str, Any] = field(hash=False, repr=False)
    seed: int
    samples: int
    catalog_version: str
    created_at: str
    updated_at: str

    def summary(self) -> dict[str, Any]:
        """Return a small JSON-able listing entry without the (large) result.

        Keys: ``id``, ``name``, ``seed``, ``samples``, ``catalog_version``, ``created_at`` and,
        when the result has it, ``breakeven_p50`` (median break-even utilisation [-], ``None``
        meaning "never").
        """
        out: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "seed": self.seed,
            "samples": self.samples,
            "catalog_version": self.catalog_version,
            "created_at": self.created_at,
        }
        breakeven = self.result.get("breakeven_utilisation")
        if isinstance(breakeven, Mapping) and "p50" in breakeven:
            out["breakeven_p50"] = breakeven["p50"]
        return out


def _utcnow() -> str:
    """Current time as an ISO-8601 UTC string with microseconds (patched in tests)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _default_path() -> Path:
    """``COSTMODEL_DB`` if set and non-empty, else the per-user data directory."""
    env = os.environ.get(_ENV_VAR, "").strip()
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("costmodel", appauthor=False)) / _DEFAULT_FILENAME


def _dumps(value: Any, what: str) -> str:
    """Serialise to compact, strict JSON; NaN/Infinity or non-JSON types are a ValueError."""
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":"))
    except ValueError as exc:  # NaN / Infinity (also circular references)
        raise ValueError(
            f"{what} is not valid JSON (NaN or Infinity are not allowed): {exc}"
        ) from exc
    except TypeError as exc:
        raise ValueError(f"{what} is not JSON-serialisable: {exc}") from exc


def _check_int(value: Any, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an integer, got {value!r}")
    if not minimum <= value <= _INT64_MAX:
        raise ValueError(f"{what} must be in [{minimum}, {_INT64_MAX}], got {value}")
    return value


def _check_opt_str(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string or None, got {value!r}")
    return value


def _owner_clause(owner: str | None) -> tuple[str, tuple[Any, ...]]:
    """SQL condition and parameters selecting the runs visible to ``owner``."""
    owner = _check_opt_str(owner, "owner")
    if owner is None:
        return "owner IS NULL", ()
    return "owner = ?", (owner,)


def _record(row: tuple[Any, ...]) -> RunRecord:
    (
        run_id,
        owner,
        name,
        cache_key,
        scenario_json,
        result_json,
        seed,
        samples,
        catalog_version,
        created_at,
        updated_at,
    ) = row
    return RunRecord(
        id=run_id,
        owner=owner,
        name=name,
        cache_key=cache_key,
        scenario=json.loads(scenario_json),
        result=json.loads(result_json),
        seed=seed,
        samples=samples,
        catalog_version=catalog_version,
        created_at=created_at,
        updated_at=updated_at,
    )


class RunStore:
    """A SQLite file of evaluated runs, safe for concurrent threads and processes.

    Parameters
    ----------
    path:
        Database file. ``None`` uses ``$COSTMODEL_DB`` or the per-user data directory. Parent
        directories are created. ``":memory:"`` is not supported (each thread opens its own
        connection, which would see its own empty database).

    Raises
    ------
    StoreError
        The file is not a usable SQLite database, a migration failed, or the database was
        written by a newer version of costmodel.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        raw = _default_path() if path is None else Path(os.fspath(path)).expanduser()
        if str(raw) == ":memory:" or str(raw).startswith("file:"):
            raise StoreError(f"RunStore needs a database file path, got {str(raw)!r}")
        self._path = raw
        self._closed = False
        self._local = threading.local()  # .conn, .pid: this thread's connection and its process
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create directory for run database {raw}: {exc}") from exc
        try:
            self._initialise()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ plumbing

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    @property
    def schema_version(self) -> int:
        """The schema version this code writes (``PRAGMA user_version`` after migration)."""
        return SCHEMA_VERSION

    def _open(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError(f"run store {self._path} is closed")
        try:
            # isolation_level=None: autocommit; transactions are opened explicitly below.
            conn = sqlite3.connect(self._path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open run database {self._path}: {exc}") from exc
        try:
            conn.execute(f"PRAGMA busy_timeout={int(_BUSY_TIMEOUT_S * 1000)}")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"{self._path} is not a usable SQLite database: {exc}") from exc
        return conn

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection, opened on first use (and again after a fork)."""
        if self._closed:
            raise StoreError(f"run store {self._path} is closed")
        local = self._local
        conn: sqlite3.Connection | None = getattr(local, "conn", None)
        pid = os.getpid()
        if conn is not None and local.pid != pid:
            _INHERITED_CONNECTIONS.append(conn)
            conn = None
        if conn is None:
            conn = self._open()
            local.conn, local.pid = conn, pid
        yield conn

    @contextlib.contextmanager
    def _write(self, conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction: takes the write lock up front (waiting up to the
        busy timeout), commits on success, rolls back on any exception."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.rollback()
            raise
        conn.execute("COMMIT")

    def _initialise(self) -> None:
        """Switch the file to WAL and apply pending migrations."""
        with self._connection() as conn:
            try:
                mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    _log.warning(
                        "run database %s: WAL journaling unavailable (journal_mode=%s); "
                        "concurrent access will be slower",
                        self._path,
                        mode,
                    )
                self._migrate(conn)
            except StoreError:
                raise
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"cannot initialise run database {self._path}: {exc}") from exc

    def _check_version(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"run database {self._path} has schema version {version}, but this version of "
                f"costmodel supports at most version {SCHEMA_VERSION}; upgrade costmodel or point "
                f"{_ENV_VAR} at another file"
            )

    def _migrate(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        self._check_version(version)
        if version == SCHEMA_VERSION:
            return
        with self._write(conn):
            # Re-read under the write lock: another process may have migrated meanwhile.
            start = version = conn.execute("PRAGMA user_version").fetchone()[0]
            self._check_version(version)
            for target in range(version + 1, SCHEMA_VERSION + 1):
                try:
                    for statement in _MIGRATIONS[target - 1]:
                        conn.execute(statement)
                except sqlite3.DatabaseError as exc:
                    raise StoreError(
                        f"migrating run database {self._path} to schema version {target} "
                        f"failed: {exc}"
                    ) from exc
                # PRAGMA takes no parameters; target is an int from range().
                conn.execute(f"PRAGMA user_version={target:d}")
        if start < SCHEMA_VERSION:
            _log.info(
                "run database %s migrated from version %d to %d", self._path, start, SCHEMA_VERSION
            )

    # ------------------------------------------------------------------ public API

    def add(
        self,
        *,
        scenario: dict[str, Any],
        result: dict[str, Any],
        seed: int,
        samples: int,
        catalog_version: str,
        name: str | None = None,
        owner: str | None = None,
        cache_key: str | None = None,
    ) -> RunRecord:
        """Store an evaluated run and return it.

        ``seed`` and ``samples`` [count] are integers (``samples >= 1``). ``name`` defaults to
        ``scenario["name"]`` when that is a string. When a run with the same ``(owner,
        cache_key)`` already exists it is returned unchanged and nothing is written; concurrent
        callers racing on one key all receive the same single row.

        Raises ``ValueError`` before touching the database when an argument is invalid or the
        scenario/result is not strict JSON (e.g. contains NaN).
        """
        if not isinstance(scenario, Mapping):
            raise ValueError(f"scenario must be a mapping, got {type(scenario).__name__}")
        if not isinstance(result, Mapping):
            raise ValueError(f"result must be a mapping, got {type(result).__name__}")
        seed = _check_int(seed, "seed", _INT64_MIN)
        samples = _check_int(samples, "samples", 1)
        if not isinstance(catalog_version, str) or not catalog_version:
            raise ValueError(f"catalog_version must be a non-empty string, got {catalog_version!r}")
        owner = _check_opt_str(owner, "owner")
        cache_key = _check_opt_str(cache_key, "cache_key")
        if name is None and isinstance(scenario.get("name"), str):
            name = scenario["name"]
        if name is not None and not isinstance(name, str):
            raise ValueError(f"name must be a string or None, got {name!r}")
        scenario_json = _dumps(scenario, "scenario")
        result_json = _dumps(result, "result")

        with self._connection() as conn:
            for _attempt in range(_MAX_INSERT_ATTEMPTS):
                run_id = secrets.token_urlsafe(_ID_BYTES)
                try:
                    with self._write(conn):
                        if cache_key is not None:
                            existing = self._find(conn, cache_key, owner)
                            if existing is not None:
                                return existing
                        now = _utcnow()
                        row = (run_id, owner, name, cache_key, scenario_json, result_json, seed,
                               samples, catalog_version, now, now)  # fmt: skip
                        conn.execute(
                            f"INSERT INTO runs ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)", row
                        )
                except sqlite3.IntegrityError:
                    # Another writer stored the same (owner, cache_key) first, or (with odds of
                    # 2**-128) the random id collided: re-read, else retry with a new id.
                    if cache_key is not None:
                        existing = self._find(conn, cache_key, owner)
                        if existing is not None:
                            return existing
                    continue
                return _record(row)
        raise StoreError(f"could not insert run into {self._path} after repeated id conflicts")

    def get(self, run_id: str, owner: str | None = None) -> RunRecord | None:
        """The run with id ``run_id`` visible to ``owner``, or ``None``.

        A run stored with an owner is returned only to that owner; a run stored without one only
        when ``owner`` is ``None``.
        """
        where, params = _owner_clause(owner)
        if not isinstance(run_id, str) or not run_id:
            return None
        with self._connection() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM runs WHERE id = ? AND {where}", (run_id, *params)
            ).fetchone()
        return None if row is None else _record(row)

    def find(self, cache_key: str, owner: str | None = None) -> RunRecord | None:
        """The run stored under ``cache_key`` for ``owner`` (``None``: anonymous runs), or
        ``None``. Used by the batch runner to resume."""
        owner = _check_opt_str(owner, "owner")
        if not isinstance(cache_key, str) or not cache_key:
            return None
        with self._connection() as conn:
            return self._find(conn, cache_key, owner)

    @staticmethod
    def _find(conn: sqlite3.Connection, cache_key: str, owner: str | None) -> RunRecord | None:
        # Same expression as the unique index runs_owner_cache_key, so the lookup uses it; owners
        # are never "" (rejected by _check_opt_str), so '' stands only for "no owner".
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM runs WHERE COALESCE(owner, '') = ? AND cache_key = ?",
            (owner or "", cache_key),
        ).fetchone()
        return None if row is None else _record(row)

    def list(self, owner: str | None = None, limit: int = 20, offset: int = 0) -> list[RunRecord]:
        """Runs visible to ``owner``, newest first (ties broken by descending id), at most
        ``limit`` of them after skipping ``offset``."""
        limit = _check_int(limit, "limit", 0)
        offset = _check_int(offset, "offset", 0)
        where, params = _owner_clause(owner)
        with self._connection() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM runs WHERE {where} "
                "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                (*params, limit, offset),
            ).fetchall()
        return builtins.list(map(_record, rows))

    def count(self, owner: str | None = None) -> int:
        """Number of runs visible to ``owner``."""
        where, params = _owner_clause(owner)
        with self._connection() as conn:
            return int(
                conn.execute(f"SELECT COUNT(*) FROM runs WHERE {where}", params).fetchone()[0]
            )

    def close(self) -> None:
        """Close the store; later operations raise :class:`StoreError`. Idempotent.

        The calling thread's connection is closed now; other threads' connections are released
        with the thread-local table, i.e. as soon as no operation is using them."""
        self._closed = True
        local, self._local = self._local, threading.local()
        conn = getattr(local, "conn", None)
        if conn is not None and local.pid == os.getpid():
            conn.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore({str(self._path)!r})"
