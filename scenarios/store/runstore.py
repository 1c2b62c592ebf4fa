"""The run store's operations, written once over a small dialect (SQLite or PostgreSQL).

SQL here uses ``?`` placeholders; a dialect rewrites them for its driver. Every driver error
becomes a :class:`StoreError`, so callers handle one exception for "the store does not answer".
A run is acknowledged (returned by :meth:`RunStore.add`) only once its row is committed and read
back through a connection other than the one that wrote it.
"""

from __future__ import annotations

import builtins
import contextlib
import logging
import os
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from . import jobs, pricehistory
from .location import ENV_VAR, MaybeStored, StoreError, parse_location
from .records import COLUMNS, SELECTED, NewRun, RunRecord, check_int, check_opt_str, dumps
from .sqlite import SQLiteDialect

__all__ = ["DEFAULT_POOL_SIZE", "MIGRATIONS", "KeyReused", "RunStore"]

_log = logging.getLogger(__name__)

#: PostgreSQL connections each process keeps at most (SQLite has one per thread).
DEFAULT_POOL_SIZE = 4
#: How long an operation waits for the database [s]: SQLite's busy timeout; PostgreSQL's wait
#: for a pooled connection and its connect timeout.
DEFAULT_TIMEOUT_S = 30.0
_ID_BYTES = 16  # 128 random bits -> 22 URL-safe characters
_MAX_INSERT_ATTEMPTS = 3

# Schema migrations: step i (0-based) upgrades version i -> i + 1, all of its statements in one
# transaction. Statements are templates filled from the dialect's ``types``: {key} makes a text
# column compare byte by byte (PostgreSQL: COLLATE "C"; SQLite already does), {int64} is a
# 64-bit integer type, {float} a double. Append new steps; never edit a released one.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """
        CREATE TABLE runs (
            id              TEXT{key} PRIMARY KEY,
            owner           TEXT NULL,
            name            TEXT,
            cache_key       TEXT NULL,
            scenario_json   TEXT NOT NULL,
            result_json     TEXT NOT NULL,
            seed            {int64} NOT NULL,
            samples         {int64} NOT NULL,
            catalog_version TEXT NOT NULL,
            created_at      TEXT{key} NOT NULL,
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
    pricehistory.MIGRATION,
    (
        # The Idempotency-Key of the request that stored a run, and the hash of that request:
        # one run per (owner, key), so a retried request stores nothing twice.
        "ALTER TABLE runs ADD COLUMN idempotency_key TEXT{key} NULL",
        "ALTER TABLE runs ADD COLUMN request_hash TEXT NULL",
        """
        CREATE UNIQUE INDEX runs_owner_idempotency_key
        ON runs (COALESCE(owner, ''), idempotency_key) WHERE idempotency_key IS NOT NULL
        """,
    ),
    jobs.MIGRATION,
    jobs.CLIENT_MIGRATION,
)

SCHEMA_VERSION: int = len(MIGRATIONS)

# Any unique index may refuse the row: (owner, cache_key) or (owner, idempotency_key) taken, or
# (odds 2**-128) the id.
_INSERT = (
    f"INSERT INTO runs ({COLUMNS}, idempotency_key, request_hash, status, progress, "
    "request_json, client) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING"
)


class KeyReused(ValueError):
    """An idempotency key that already stored a run was sent with another request."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"the idempotency key already stored run {run_id} for another request")
        self.run_id = run_id


class Dialect(Protocol):
    """What a backend gives :class:`RunStore`. Connections have DB-API ``execute`` returning a
    cursor with ``fetchone``, ``fetchall`` and ``rowcount``, and run in autocommit mode outside
    :meth:`transaction`."""

    #: Driver exceptions; each means the store cannot answer.
    errors: tuple[type[Exception], ...]
    #: Fills the {key}, {int64} and {float} fields of :data:`MIGRATIONS`.
    types: Mapping[str, str]

    def sql(self, query: str) -> str:
        """``query`` with its ``?`` placeholders in the driver's style."""
        ...

    def connection(self) -> AbstractContextManager[Any]:
        """A connection of this thread (SQLite) or from this process's pool (PostgreSQL)."""
        ...

    def reader(self) -> AbstractContextManager[Any]:
        """A connection that shares no cached state with the writer's, to read back a commit."""
        ...

    def setup_connection(self) -> AbstractContextManager[Any]:
        """The connection that checks and migrates the schema when the store opens."""
        ...

    def transaction(self, conn: Any, *, exclusive: bool = False) -> AbstractContextManager[None]:
        """A transaction that commits on success and rolls back on any exception; writers are
        serialised where needed, and ``exclusive`` ones with each other (migrations, and the
        admissions and claims of jobs that count the jobs of others first)."""
        ...

    def schema_version(self, conn: Any) -> int:
        """The schema version of the database (0 when empty)."""
        ...

    def set_schema_version(self, conn: Any, version: int) -> None:
        """Record ``version`` inside the current transaction."""
        ...

    def close(self) -> None:
        """Release this process's connections (never a parent's, inherited through fork)."""
        ...


def _utcnow() -> str:
    """Current time as an ISO-8601 UTC string with microseconds (patched in tests)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _owner_clause(owner: str | None) -> tuple[str, tuple[Any, ...]]:
    """SQL condition and parameters selecting the runs visible to ``owner``."""
    owner = check_opt_str(owner, "owner")
    if owner is None:
        return "owner IS NULL", ()
    return "owner = ?", (owner,)


class RunStore(jobs.JobQueue):
    """Evaluated runs in SQLite or PostgreSQL, safe for concurrent threads and processes; runs
    evaluated after they are stored (jobs) are queued and claimed through :class:`JobQueue`.

    Parameters
    ----------
    location:
        A SQLite file path, ``sqlite:///PATH`` or a ``postgresql://`` URL (see
        :func:`scenarios.store.parse_location`); ``None`` uses ``$COSTMODEL_DB`` or
        ``runs.sqlite3`` in the per-user data folder. Parent folders of a SQLite file are
        created.
    pool_size:
        PostgreSQL: connections each process keeps at most [count]. SQLite ignores it.
    timeout:
        How long an operation waits for the database [s] before it fails with
        :class:`StoreError` (SQLite: busy timeout; PostgreSQL: a free pooled connection, and
        connecting).

    Raises
    ------
    StoreError
        The location is unsupported, the PostgreSQL driver is not installed, the database cannot
        be reached or read, a migration failed, or the database was written by a newer version
        of costmodel.
    """

    def __init__(
        self,
        location: str | os.PathLike[str] | None = None,
        *,
        pool_size: int = DEFAULT_POOL_SIZE,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        place = parse_location(location)
        pool_size = check_int(pool_size, "pool_size", 1)
        if not timeout > 0:
            raise ValueError(f"timeout must be positive [s], got {timeout!r}")
        self._shown = place.shown
        self._closed = False
        self._dialect: Dialect
        if place.kind == "postgresql":
            from .postgres import PostgresDialect  # the driver is an optional extra

            self._dialect = PostgresDialect(place.target, pool_size=pool_size, timeout=timeout)
        else:
            self._dialect = SQLiteDialect(Path(place.target), timeout=timeout)
        try:
            self._migrate()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ plumbing

    @property
    def location(self) -> str:
        """The database file or URL, with any password replaced by ``***``."""
        return self._shown

    @property
    def schema_version(self) -> int:
        """The schema version this code writes (the number of :data:`MIGRATIONS`)."""
        return SCHEMA_VERSION

    @contextlib.contextmanager
    def _use(self, opener: AbstractContextManager[Any]) -> Iterator[Any]:
        """The connection ``opener`` gives, with driver errors raised as :class:`StoreError`."""
        if self._closed:
            raise StoreError(f"run store {self._shown} is closed")
        try:
            with opener as conn:
                yield conn
        except self._dialect.errors as exc:
            raise StoreError(f"run store {self._shown} is unavailable: {exc}") from exc

    def _execute(self, conn: Any, query: str, params: tuple[Any, ...] = ()) -> Any:
        return conn.execute(self._dialect.sql(query), params)

    @staticmethod
    def _now() -> str:
        """The time to write into a row (:func:`_utcnow`, looked up when called)."""
        return _utcnow()

    def _checked_version(self, conn: Any) -> int:
        version = self._dialect.schema_version(conn)
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"run store {self._shown} has schema version {version}, but this version of "
                f"costmodel supports at most version {SCHEMA_VERSION}; upgrade costmodel or point "
                f"{ENV_VAR} at another database"
            )
        return version

    def _migrate(self) -> None:
        """Apply pending migrations; concurrent openers wait for each other, not repeat them."""
        dialect = self._dialect
        with self._use(dialect.setup_connection()) as conn:
            start = self._checked_version(conn)
            if start == SCHEMA_VERSION:
                return
            with dialect.transaction(conn, exclusive=True):
                # Re-read under the lock: another process may have migrated meanwhile.
                start = self._checked_version(conn)
                for target in range(start + 1, SCHEMA_VERSION + 1):
                    try:
                        for statement in MIGRATIONS[target - 1]:
                            conn.execute(statement.format_map(dialect.types))
                        dialect.set_schema_version(conn, target)
                    except dialect.errors as exc:
                        raise StoreError(
                            f"migrating run store {self._shown} to schema version {target} "
                            f"failed: {exc}"
                        ) from exc
        if start < SCHEMA_VERSION:
            _log.info(
                "run store %s migrated from version %d to %d", self._shown, start, SCHEMA_VERSION
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
        idempotency_key: str | None = None,
        request_hash: str | None = None,
    ) -> RunRecord:
        """Store an evaluated run and return it once it is committed and read back.

        ``seed`` and ``samples`` [count] are integers (``samples >= 1``). ``name`` defaults to
        ``scenario["name"]`` when that is a string. When a run with the same ``(owner,
        cache_key)`` already exists it is returned unchanged and nothing is written; concurrent
        callers racing on one key all receive the same single row. ``idempotency_key`` (with
        ``request_hash``, what identifies the request) works the same way per ``(owner,
        idempotency_key)``, and raises :class:`KeyReused` when the run under it was stored for
        another ``request_hash``.

        Raises ``ValueError`` before touching the database when an argument is invalid or the
        scenario/result is not strict JSON (e.g. contains NaN), and :class:`StoreError` when the
        database fails or the new row cannot be read back after the commit.
        """
        if not isinstance(scenario, Mapping):
            raise ValueError(f"scenario must be a mapping, got {type(scenario).__name__}")
        if not isinstance(result, Mapping):
            raise ValueError(f"result must be a mapping, got {type(result).__name__}")
        if name is None and isinstance(scenario.get("name"), str):
            name = scenario["name"]
        fields = NewRun.checked(
            name, seed, samples, catalog_version, owner, idempotency_key, request_hash
        )
        cache_key = check_opt_str(cache_key, "cache_key")
        stored = (dumps(scenario, "scenario"), dumps(result, "result"))
        return self._insert(fields, cache_key, stored, ("done", 1.0, None, None))

    def _insert(
        self,
        fields: NewRun,
        cache_key: str | None,
        stored: tuple[str, str],
        state: tuple[str, float, str | None, str | None],
        admit: Callable[[Any], None] | None = None,
    ) -> RunRecord:
        """Insert a run of ``fields`` with its scenario and result JSON (``stored``) and its
        ``(status, progress, request JSON, client)``; or return the run already stored under
        its cache or idempotency key. ``admit``, given the connection, may refuse the insert
        by raising; it runs inside the insert's transaction, serialised with every other
        admission (PostgreSQL: under an advisory lock)."""
        dialect = self._dialect
        owner, key, request_hash = fields.owner, fields.idempotency_key, fields.request_hash
        for _attempt in range(_MAX_INSERT_ATTEMPTS):
            now = _utcnow()
            row = (secrets.token_urlsafe(_ID_BYTES), owner, fields.name, cache_key, *stored,
                   fields.seed, fields.samples, fields.catalog_version, now, now)  # fmt: skip
            sent = False
            try:
                with (
                    self._use(dialect.connection()) as conn,
                    dialect.transaction(conn, exclusive=admit is not None),
                ):
                    if admit is not None:
                        admit(conn)
                    insert = (*row, key, request_hash, *state)
                    inserted = self._execute(conn, _INSERT, insert).rowcount == 1
                    sent, existing = inserted, None
                    if not inserted:
                        existing = self._taken(conn, owner, cache_key, key, request_hash)
            except StoreError as exc:
                if not sent:
                    raise
                existing = self._landed(row[0], exc)  # the commit may have landed all the same
            if existing is not None:
                return existing
            if inserted:
                self._confirm(row[0])
                return RunRecord.from_row((*row, *state[:2], None))
            # Nothing inserted and no run under the key: the random id collided; draw another.
        raise StoreError(f"could not insert a run into {self._shown} after repeated id conflicts")

    def _landed(self, run_id: str, failure: StoreError) -> RunRecord:
        """The run ``run_id`` whose write failed with ``failure``, when its commit landed all
        the same (looked up through a new connection); else ``failure`` again, or
        :class:`MaybeStored` when the store cannot be asked."""
        try:
            with self._use(self._dialect.reader()) as conn:
                row = self._execute(
                    conn, f"SELECT {SELECTED} FROM runs WHERE id = ?", (run_id,)
                ).fetchone()
        except StoreError:
            raise MaybeStored(
                f"{failure}; the run may have been stored as {run_id} before the failure",
                run_id,
            ) from failure
        if row is None:
            raise failure
        _log.warning("run %s was stored although its commit reported: %s", run_id, failure)
        return RunRecord.from_row(row)

    def _taken(
        self,
        conn: Any,
        owner: str | None,
        cache_key: str | None,
        idempotency_key: str | None,
        request_hash: str | None,
    ) -> RunRecord | None:
        """The run that refused an insert: the one stored under the idempotency key
        (:class:`KeyReused` when it was stored for another request), else under the cache key;
        ``None`` when neither (the random id collided)."""
        found = None
        if idempotency_key is not None:
            found = self._by_idempotency_key(conn, idempotency_key, owner)
        if found is not None:
            stored_hash, record = found
            if stored_hash != request_hash:
                raise KeyReused(record.id)
            return record
        return self._find(conn, cache_key, owner) if cache_key else None

    def _by_idempotency_key(
        self, conn: Any, key: str, owner: str | None
    ) -> tuple[str, RunRecord] | None:
        # Same expression as the unique index runs_owner_idempotency_key, so the lookup uses it.
        row = self._execute(
            conn,
            f"SELECT request_hash, {SELECTED} FROM runs "
            "WHERE COALESCE(owner, '') = ? AND idempotency_key = ?",
            (owner or "", key),
        ).fetchone()
        return None if row is None else (row[0], RunRecord.from_row(row[1:]))

    def find_idempotent(
        self, idempotency_key: str, owner: str | None = None
    ) -> tuple[str, RunRecord] | None:
        """The request hash and the run stored under ``idempotency_key`` for ``owner``, or
        ``None``: what a retried request is answered with."""
        owner = check_opt_str(owner, "owner")
        if not isinstance(idempotency_key, str) or not idempotency_key:
            return None
        with self._use(self._dialect.connection()) as conn:
            return self._by_idempotency_key(conn, idempotency_key, owner)

    def check_writable(self) -> None:
        """Write a row and remove it again in one committed transaction, or raise
        :class:`StoreError`: a database that still answers reads may refuse every write (a full
        disk, a read-only file or server). Nothing is left behind."""
        now = _utcnow()
        probe = "probe." + secrets.token_hex(8)
        row = (probe, None, None, None, "{}", "{}", 0, 1, "probe", now, now,
               None, None, "done", 1.0, None, None)  # fmt: skip
        dialect = self._dialect
        with self._use(dialect.connection()) as conn, dialect.transaction(conn):
            if self._execute(conn, _INSERT, row).rowcount != 1:
                raise StoreError(f"run store {self._shown} did not take a write")
            self._execute(conn, "DELETE FROM runs WHERE id = ?", (probe,))

    def _confirm(self, run_id: str) -> None:
        """Read the committed run back through another connection, or raise StoreError: a
        database file truncated or replaced under an open connection accepts writes that no
        other connection will ever see."""
        with self._use(self._dialect.reader()) as conn:
            found = self._execute(conn, "SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone()
        if found is None:
            raise StoreError(
                f"run {run_id} was committed to {self._shown} but cannot be read back; the "
                "database was changed or replaced while in use"
            )

    def get(self, run_id: str, owner: str | None = None) -> RunRecord | None:
        """The run with id ``run_id`` visible to ``owner``, or ``None``.

        A run stored with an owner is returned only to that owner; a run stored without one only
        when ``owner`` is ``None``.
        """
        where, params = _owner_clause(owner)
        if not isinstance(run_id, str) or not run_id:
            return None
        with self._use(self._dialect.connection()) as conn:
            row = self._execute(
                conn, f"SELECT {SELECTED} FROM runs WHERE id = ? AND {where}", (run_id, *params)
            ).fetchone()
        return None if row is None else RunRecord.from_row(row)

    def find(self, cache_key: str, owner: str | None = None) -> RunRecord | None:
        """The run stored under ``cache_key`` for ``owner`` (``None``: anonymous runs), or
        ``None``. Used by the batch runner to resume."""
        owner = check_opt_str(owner, "owner")
        if not isinstance(cache_key, str) or not cache_key:
            return None
        with self._use(self._dialect.connection()) as conn:
            return self._find(conn, cache_key, owner)

    def _find(self, conn: Any, cache_key: str, owner: str | None) -> RunRecord | None:
        # Same expression as the unique index runs_owner_cache_key, so the lookup uses it; owners
        # are never "" (rejected by check_opt_str), so '' stands only for "no owner".
        row = self._execute(
            conn,
            f"SELECT {SELECTED} FROM runs WHERE COALESCE(owner, '') = ? AND cache_key = ?",
            (owner or "", cache_key),
        ).fetchone()
        return None if row is None else RunRecord.from_row(row)

    def list(self, owner: str | None = None, limit: int = 20, offset: int = 0) -> list[RunRecord]:
        """Runs visible to ``owner``, newest first (ties broken by descending id, compared byte
        by byte), at most ``limit`` of them after skipping ``offset``."""
        limit = check_int(limit, "limit", 0)
        offset = check_int(offset, "offset", 0)
        where, params = _owner_clause(owner)
        with self._use(self._dialect.connection()) as conn:
            rows = self._execute(
                conn,
                f"SELECT {SELECTED} FROM runs WHERE {where} "
                "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                (*params, limit, offset),
            ).fetchall()
        return builtins.list(map(RunRecord.from_row, rows))

    def count(self, owner: str | None = None) -> int:
        """Number of runs visible to ``owner``."""
        where, params = _owner_clause(owner)
        with self._use(self._dialect.connection()) as conn:
            row = self._execute(conn, f"SELECT COUNT(*) FROM runs WHERE {where}", params)
            return int(row.fetchone()[0])

    def add_prices(self, entries: Iterable[Any]) -> str:
        """Keep the prices of one import (records with ``id``, ``pricing``, ``value``,
        ``as_of`` and ``source``, as :class:`pricing.PriceEntry`) in the price history, in one
        transaction; returns the import's id.

        Raises ``ValueError`` for a price the history cannot keep (not positive, no ISO date,
        no source) and :class:`StoreError` when the database fails.
        """
        import_id = secrets.token_urlsafe(_ID_BYTES)
        rows = pricehistory.rows(entries, import_id, _utcnow())
        dialect = self._dialect
        with self._use(dialect.connection()) as conn, dialect.transaction(conn):
            for row in rows:
                self._execute(conn, pricehistory.INSERT, row)
        return import_id

    def price_history(
        self, item: str, pricing: str | None = None
    ) -> builtins.list[pricehistory.PriceObservation]:
        """Every kept price of catalog id ``item`` (lowercase), of one ``pricing`` or all,
        oldest first (by ``as_of``, then by import time)."""
        where, params = "item = ?", (item.casefold(),)
        if pricing is not None:
            where, params = f"{where} AND pricing = ?", (*params, pricing)
        with self._use(self._dialect.connection()) as conn:
            found = self._execute(
                conn,
                f"SELECT {pricehistory.COLUMNS} FROM price_history WHERE {where} "
                "ORDER BY pricing, as_of, imported_at",
                params,
            ).fetchall()
        return builtins.list(map(pricehistory.PriceObservation.from_row, found))

    def close(self) -> None:
        """Close the store; later operations raise :class:`StoreError`. Idempotent.

        SQLite: the calling thread's connection is closed now, other threads' ones as soon as no
        operation uses them. PostgreSQL: this process's pool is closed."""
        self._closed = True
        self._dialect.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore({self._shown!r})"
