"""Where the run store lives: ``COSTMODEL_DB`` (or ``--db``, or ``create_app(config={"DB": ...})``)
read once, checked before anything is opened.

Accepted forms:

* a file path, ``~`` expanded (``/var/lib/costmodel/runs.sqlite3``): SQLite, the default;
* ``sqlite:///`` followed by a path, as SQLAlchemy writes it: ``sqlite:///runs.sqlite3`` is
  relative to the working directory, ``sqlite:////var/lib/costmodel/runs.sqlite3`` absolute;
* ``postgresql://user[:password]@host[:port]/dbname[?param=value...]`` (also ``postgres://``), a
  libpq connection URL: PostgreSQL, which needs ``pip install "gpu-costmodel[postgres]"``.

Anything else that starts with a URL scheme (``mysql://``, ``file:``, ``sqlite://host/x``...) is a
:class:`StoreError` naming these forms, so a typo fails at start-up instead of creating a file in
a folder called ``mysql:``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import platformdirs

__all__ = ["ENV_VAR", "Location", "StoreError", "parse_location"]

#: Environment variable naming the run store when no location is given.
ENV_VAR = "COSTMODEL_DB"
_DEFAULT_FILENAME = "runs.sqlite3"
_POSTGRES_SCHEMES = ("postgresql", "postgres")
# A URL scheme: two or more characters, so that a Windows drive letter ("C:\\runs") stays a path.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):")
# A password in the user-info part of a URL, or as a query parameter.
_PASSWORDS = (
    (re.compile(r"(://[^/?#@:]*:)[^/?#@]*@"), r"\1***@"),
    (re.compile(r"([?&]password=)[^&#]*"), r"\1***"),
)
_DRIVER_HINT = 'pip install "gpu-costmodel[postgres]"'
_FORMS = (
    "a file path (SQLite, e.g. /var/lib/costmodel/runs.sqlite3), sqlite:///PATH, or "
    f"postgresql://USER@HOST[:PORT]/DBNAME (also postgres://; needs {_DRIVER_HINT})"
)


class StoreError(ValueError):
    """The run store cannot be used: an unsupported location, a missing driver, an unreadable
    or damaged database, a failed migration, a newer schema, a database that does not answer, or
    a closed store."""


class MaybeStored(StoreError):
    """A write of run ``run_id`` failed at its commit and the store could not be asked after
    whether the row is there: the run may exist under that id."""

    def __init__(self, message: str, run_id: str) -> None:
        super().__init__(message)
        self.run_id = run_id


@dataclass(frozen=True)
class Location:
    """A checked run-store location.

    ``kind`` is ``"sqlite"`` (``target`` is the database file) or ``"postgresql"`` (``target``
    is the connection URL as given). ``shown`` is ``target`` with any password replaced by
    ``***``, for messages and logs.
    """

    kind: Literal["sqlite", "postgresql"]
    target: str
    shown: str


def _default_target() -> str:
    """``COSTMODEL_DB`` if set and non-empty, else ``runs.sqlite3`` in the per-user data folder."""
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return env
    return str(Path(platformdirs.user_data_dir("costmodel", appauthor=False)) / _DEFAULT_FILENAME)


def _check_driver() -> None:
    """Import the PostgreSQL driver and pool, or say how to install them."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise StoreError(
            f"a PostgreSQL run store needs the psycopg driver and pool: {_DRIVER_HINT} ({exc})"
        ) from None


def parse_location(value: str | os.PathLike[str] | None = None) -> Location:
    """Check ``value`` (``None``: ``$COSTMODEL_DB``, else the per-user default file).

    Raises :class:`StoreError` for an unsupported URL scheme, an in-memory SQLite database
    (each thread and process would see its own), or a PostgreSQL URL without the driver
    installed. Nothing is opened or created.
    """
    text = (_default_target() if value is None else os.fspath(value)).strip()
    if not text:
        raise StoreError(f"the run store location is empty; use {_FORMS}")
    if text in (":memory:", "sqlite:///:memory:"):
        raise StoreError(
            "an in-memory SQLite run store is not supported (each thread would see its own "
            f"empty database); use {_FORMS}"
        )
    match = _SCHEME.match(text)
    if match is None:
        path = str(Path(text).expanduser())
        return Location("sqlite", path, path)
    scheme, rest = match.group(1).lower(), text[match.end() :]
    shown = text
    for pattern, replacement in _PASSWORDS:
        shown = pattern.sub(replacement, shown)
    if scheme in _POSTGRES_SCHEMES and rest.startswith("//"):
        _check_driver()
        return Location("postgresql", text, shown)
    if scheme == "sqlite" and rest.startswith("///"):
        path = rest[3:]
        if path and "?" not in path:
            path = str(Path(path).expanduser())
            return Location("sqlite", path, path)
    raise StoreError(f"unsupported run store location {shown!r}: use {_FORMS}")
