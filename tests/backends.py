"""The two run-store backends for the tests: a SQLite file, or a throw-away PostgreSQL server.

Where the PostgreSQL server comes from, in order:

1. ``COSTMODEL_TEST_POSTGRES=postgresql://...``: an existing server (the user must be allowed to
   create schemas in that database);
2. ``initdb`` and ``pg_ctl`` on ``PATH`` or in ``/usr/lib/postgresql/*/bin``: a cluster in a
   temporary folder on a free loopback port with trust authentication, started once per test
   session and removed at its end. Run as root, the server runs as the ``postgres`` system user
   (PostgreSQL refuses to run as root).

Each test gets its own schema (``search_path`` set in the URL), dropped after it. Without a
server the PostgreSQL cases skip, saying why; with ``CI`` or ``COSTMODEL_REQUIRE_POSTGRES`` set
they fail instead, so CI cannot pass without testing both backends.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import socket
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import quote

import pytest

ENV_URL = "COSTMODEL_TEST_POSTGRES"
ENV_REQUIRE = "COSTMODEL_REQUIRE_POSTGRES"
_SERVER_USER = "postgres"
_START_TIMEOUT_S = 60


class Unavailable(Exception):
    """No PostgreSQL server can be had for the tests; the message says why."""


def required() -> bool:
    """Whether a missing PostgreSQL server is a failure (CI) rather than a skip."""
    return any(
        os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")
        for name in ("CI", ENV_REQUIRE)
    )


def unavailable(reason: str) -> NoReturn:
    """Skip the calling test, or fail it where PostgreSQL is required (CI)."""
    if required():
        pytest.fail(f"PostgreSQL is required here (CI or {ENV_REQUIRE} is set), but {reason}")
    pytest.skip(f"no PostgreSQL for the tests: {reason}")


def _bin_dir() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: PATH first, else the newest Debian install."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl", path=str(Path(found).parent)):
        return Path(found).parent
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    return Path(versions[-1]).parent if versions else None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Cluster:
    """A PostgreSQL cluster in a temporary folder, on ``127.0.0.1:port``, trust authentication.

    :meth:`start` and :meth:`stop` may alternate (to test an outage); :meth:`remove` stops it
    and deletes the folder.
    """

    def __init__(self) -> None:
        bin_dir = _bin_dir()
        if bin_dir is None:
            raise Unavailable(
                "PostgreSQL server binaries (initdb, pg_ctl) not found; install PostgreSQL "
                f"(Debian: apt-get install postgresql) or set {ENV_URL}"
            )
        self._bin = bin_dir
        self._owner: tuple[int, int] | None = None
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam(_SERVER_USER)
            except KeyError:
                raise Unavailable(
                    f"running as root and there is no {_SERVER_USER!r} user to run the server "
                    "(PostgreSQL refuses root)"
                ) from None
            self._owner = (user.pw_uid, user.pw_gid)
        self.dir = Path(tempfile.mkdtemp(prefix="costmodel-pg-"))
        if self._owner is not None:
            os.chown(self.dir, *self._owner)
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self._run_initdb()

    def _run(self, *args: str) -> None:
        command = [str(self._bin / args[0]), *args[1:]]
        if self._owner is not None:
            command = ["runuser", "-u", _SERVER_USER, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise Unavailable(f"{' '.join(args[:1])} failed: {done.stderr.strip()[-2000:]}")

    def _run_initdb(self) -> None:
        base = ("initdb", "-D", str(self.dir / "data"), "-A", "trust", "-U", "postgres")
        base += ("-E", "UTF8", "--no-sync", "--no-instructions")
        try:
            # An ICU locale whose order is not byte order, so the tests see that the store
            # compares ids and timestamps byte by byte on any database.
            self._run(*base, "--locale=C.UTF-8", "--locale-provider=icu", "--icu-locale=en-US")
        except Unavailable:
            shutil.rmtree(self.dir / "data", ignore_errors=True)
            self._run(*base)

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.dir} "
            "-c fsync=off -c max_connections=300"
        )
        self._run("pg_ctl", "-D", str(self.dir / "data"), "-l", str(self.dir / "server.log"),
                  "-w", "-t", str(_START_TIMEOUT_S), "-o", options, "start")  # fmt: skip

    def stop(self) -> None:
        """Stop the server (fast shutdown: open sessions are ended)."""
        self._run("pg_ctl", "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop")

    def remove(self) -> None:
        """Stop the server if it runs and delete the cluster's folder."""
        with contextlib.suppress(Unavailable):
            self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@contextlib.contextmanager
def server() -> Iterator[str]:
    """The base URL of a PostgreSQL server for this session; raises :class:`Unavailable`."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise Unavailable(f'psycopg is not installed: pip install -e ".[test]" ({exc})') from None
    url = os.environ.get(ENV_URL, "").strip()
    if url:
        yield url
        return
    cluster = Cluster()
    try:
        cluster.start()
        yield cluster.url
    finally:
        cluster.remove()


def with_schema(url: str, schema: str) -> str:
    """``url`` with its ``search_path`` set to ``schema`` (a libpq ``options`` parameter)."""
    return url + ("&" if "?" in url else "?") + "options=" + quote(f"-csearch_path={schema}")


@contextlib.contextmanager
def schema(url: str) -> Iterator[str]:
    """A new, empty schema on the server at ``url``; yields the URL that uses it, drops it after."""
    import psycopg

    name = f"test_{secrets.token_hex(6)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    try:
        yield with_schema(url, name)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {name} CASCADE")


def query(location: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` (``?`` placeholders) run directly on a store's database, bypassing
    :class:`scenarios.store.RunStore`."""
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as conn:
            cursor = conn.execute(sql.replace("?", "%s"), params)
            return cursor.fetchall() if cursor.description else []
    with contextlib.closing(sqlite3.connect(location)) as conn, conn:
        return conn.execute(sql, params).fetchall()


#: Ways to damage a SQLite run store under an open connection (see :func:`damage_sqlite`).
SQLITE_DAMAGES = ("truncate", "overwrite", "replace")


def damage_sqlite(path: Path, how: str) -> None:
    """Damage the SQLite file at ``path``: ``truncate`` empties it; ``overwrite`` writes garbage
    over its first 4 KiB, leaving its WAL, which still holds every page written since it was
    opened; ``replace`` deletes it with its WAL and shared-memory files and puts a file that is
    not a database in its place."""
    if how == "truncate":
        path.write_bytes(b"")
        return
    if how == "replace":
        for p in path.parent.glob(path.name + "*"):
            p.unlink()
    with path.open("r+b" if how == "overwrite" else "wb") as f:
        f.write(b"garbage!" * 512)
