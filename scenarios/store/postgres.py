"""The PostgreSQL dialect of the run store (psycopg 3 and psycopg_pool, the ``postgres`` extra).

* Each process has its own connection pool, made on first use: a gunicorn worker or any process
  forked after the store was opened makes a new one and leaves its parent's untouched (those
  sockets belong to the parent). Pooled connections are checked before use, so a server restart
  costs no failed request once the server answers again.
* Connections run in autocommit mode; writes run in explicit transactions. The unique index on
  ``(owner, cache_key)`` with ``INSERT ... ON CONFLICT DO NOTHING`` makes racing writers of one
  key store a single row.
* The schema version is the one row of the table ``costmodel_schema_version``; migrations hold a
  transaction-level advisory lock, so processes that open the store at once migrate it once.
* Text keys (``id``, ``created_at``) use ``COLLATE "C"``: byte order, as in SQLite, whatever
  the database's locale.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool

from .location import StoreError

__all__ = ["PostgresDialect"]

_VERSION_TABLE = "costmodel_schema_version"
_MIGRATION_LOCK_KEY = 0x636F73746D6F64  # pg_advisory_xact_lock key: ASCII "costmod"

# Pools inherited from a parent process through fork(). Their connections are the parent's
# sockets (a query from the child would interleave with the parent's) and their worker threads
# do not exist here: keeping a reference means they are never used, nor finalised by garbage
# collection. (psycopg itself never closes a connection in a process that did not open it.)
_INHERITED_POOLS: list[ConnectionPool] = []

# Guards pool creation; made anew in a forked child, where a parent's thread may have held it.
_pool_lock = threading.Lock()


def _new_pool_lock() -> None:
    global _pool_lock
    _pool_lock = threading.Lock()


os.register_at_fork(after_in_child=_new_pool_lock)


class PostgresDialect:
    """A PostgreSQL database at ``url`` (libpq URL); ``pool_size`` [count] connections per
    process at most; ``timeout`` [s] to connect and to wait for a pooled connection."""

    errors = (psycopg.Error,)
    types = {"key": ' COLLATE "C"', "int64": "BIGINT", "float": "DOUBLE PRECISION"}

    def __init__(self, url: str, *, pool_size: int, timeout: float) -> None:
        try:
            params = conninfo_to_dict(url)
        except psycopg.Error as exc:
            raise StoreError(f"invalid PostgreSQL URL: {exc}") from None
        self._url = url
        self._pool_size = pool_size
        self._timeout = timeout
        self._kwargs: dict[str, Any] = {"autocommit": True}
        if "connect_timeout" not in params:
            self._kwargs["connect_timeout"] = max(1, round(timeout))
        self._pool: ConnectionPool | None = None
        self._pid: int | None = None  # the process that made self._pool

    @staticmethod
    def sql(query: str) -> str:
        """psycopg takes ``%s`` placeholders (the store's SQL has no literal ``?`` or ``%``)."""
        return query.replace("?", "%s")

    def _process_pool(self) -> ConnectionPool:
        """This process's pool, made on first use here."""
        pid = os.getpid()
        pool = self._pool
        if pool is not None and self._pid == pid:
            return pool
        with _pool_lock:
            if self._pool is not None and self._pid == pid:  # made by another thread meanwhile
                return self._pool
            if self._pool is not None:
                _INHERITED_POOLS.append(self._pool)
            pool = ConnectionPool(
                self._url,
                kwargs=self._kwargs,
                min_size=1,
                max_size=self._pool_size,
                timeout=self._timeout,
                check=ConnectionPool.check_connection,
                name="costmodel-runs",
                open=True,
            )
            self._pool, self._pid = pool, pid
            return pool

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection of this process's pool, returned to it afterwards."""
        with self._process_pool().connection() as conn:
            yield conn

    def reader(self) -> contextlib.AbstractContextManager[psycopg.Connection[Any]]:
        """A pooled connection: in autocommit mode every statement sees every commit."""
        return self.connection()

    @contextlib.contextmanager
    def setup_connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection of its own, closed after use, so that an unreachable server fails at
        once rather than after the pool's timeout."""
        with psycopg.connect(self._url, **self._kwargs) as conn:
            yield conn

    @contextlib.contextmanager
    def transaction(
        self, conn: psycopg.Connection[Any], *, exclusive: bool = False
    ) -> Iterator[None]:
        """``BEGIN`` ... ``COMMIT`` (``ROLLBACK`` on any exception); ``exclusive`` also takes the
        store's advisory lock (of migrations, and of job admissions and claims, which count
        other transactions' rows) until the transaction ends."""
        with conn.transaction():
            if exclusive:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK_KEY,))
            yield

    @staticmethod
    def schema_version(conn: psycopg.Connection[Any]) -> int:
        """The recorded version, 0 for a database without the version table.

        The table is looked up in the catalog with a fresh snapshot, not with ``to_regclass``,
        whose name cache may still miss a table another migrator has just committed.
        """
        exists = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables "
            "WHERE schemaname = current_schema() AND tablename = %s)",
            (_VERSION_TABLE,),
        ).fetchone()[0]
        if not exists:
            return 0
        row = conn.execute(f"SELECT version FROM {_VERSION_TABLE}").fetchone()
        return 0 if row is None else int(row[0])

    @staticmethod
    def set_schema_version(conn: psycopg.Connection[Any], version: int) -> None:
        """Create the version table if needed and make ``version`` its only row."""
        conn.execute(f"CREATE TABLE IF NOT EXISTS {_VERSION_TABLE} (version INTEGER NOT NULL)")
        conn.execute(f"DELETE FROM {_VERSION_TABLE}")
        conn.execute(f"INSERT INTO {_VERSION_TABLE} (version) VALUES (%s)", (version,))

    def close(self) -> None:
        """Close this process's pool (a parent's pool is left alone)."""
        pool, self._pool = self._pool, None
        if pool is not None and self._pid == os.getpid():
            pool.close()
        self._pid = None
