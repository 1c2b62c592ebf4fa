"""The SQLite dialect of the run store: one database file, one connection per thread.

* Each thread gets its own connection (``threading.local``; connections are never shared between
  threads), and a process that inherits a store through ``fork`` (gunicorn workers, batch worker
  processes) opens fresh ones instead of reusing its parent's.
* Connections use WAL journaling, a busy timeout, ``foreign_keys=ON`` and ``synchronous=NORMAL``;
  every write runs in a ``BEGIN IMMEDIATE`` transaction, so concurrent writers serialise instead
  of losing rows.
* The schema version is ``PRAGMA user_version``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

from .location import StoreError

__all__ = ["SQLiteDialect"]

_log = logging.getLogger(__name__)

# Connections inherited from a parent process through fork(). SQLite forbids using them in the
# child; keeping a reference here means they are never used, nor closed by garbage collection.
_INHERITED_CONNECTIONS: list[sqlite3.Connection] = []


class SQLiteDialect:
    """A SQLite database file at ``path``; ``timeout`` [s] is the busy timeout."""

    errors = (sqlite3.Error,)
    types = {"key": "", "int64": "INTEGER", "float": "REAL"}

    def __init__(self, path: Path, *, timeout: float) -> None:
        self._path = path
        self._timeout = timeout
        self._local = threading.local()  # .conn, .pid: this thread's connection and its process
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder of run database {path}: {exc}") from exc

    @staticmethod
    def sql(query: str) -> str:
        """SQLite takes ``?`` placeholders as they are."""
        return query

    def _open(self) -> sqlite3.Connection:
        # isolation_level=None: autocommit; transactions are opened explicitly. The timeout is
        # also the busy timeout (PRAGMA busy_timeout).
        conn = sqlite3.connect(self._path, timeout=self._timeout, isolation_level=None)
        try:
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error:
            conn.close()
            raise
        return conn

    @contextlib.contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection, opened on first use (and again after a fork)."""
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
    def reader(self) -> Iterator[sqlite3.Connection]:
        """A new connection, closed after use: it sees the file as every other process does,
        not what this thread's connection has cached."""
        conn = self._open()
        try:
            yield conn
        finally:
            conn.close()

    @contextlib.contextmanager
    def setup_connection(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection, after switching the file to WAL journaling."""
        with self.connection() as conn:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                _log.warning(
                    "run database %s: WAL journaling unavailable (journal_mode=%s); "
                    "concurrent access will be slower",
                    self._path,
                    mode,
                )
            yield conn

    @contextlib.contextmanager
    def transaction(self, conn: sqlite3.Connection, *, exclusive: bool = False) -> Iterator[None]:
        """``BEGIN IMMEDIATE``: takes the write lock up front (waiting up to the busy timeout),
        so writers, migrations included, serialise whatever ``exclusive`` says."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.rollback()
            raise

    @staticmethod
    def schema_version(conn: sqlite3.Connection) -> int:
        """``PRAGMA user_version``."""
        return int(conn.execute("PRAGMA user_version").fetchone()[0])

    @staticmethod
    def set_schema_version(conn: sqlite3.Connection, version: int) -> None:
        """Set ``PRAGMA user_version`` (it takes no parameters; ``version`` is an int)."""
        conn.execute(f"PRAGMA user_version={int(version):d}")

    def close(self) -> None:
        """Close the calling thread's connection; other threads' ones are released with the
        thread-local table, i.e. as soon as no operation is using them."""
        local, self._local = self._local, threading.local()
        conn = getattr(local, "conn", None)
        if conn is not None and local.pid == os.getpid():
            conn.close()
