"""Fixtures for the tests that run against both run-store backends (see tests/backends.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import backends


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """Base URL of the session's PostgreSQL server."""
    with contextlib.ExitStack() as stack:
        try:
            url = stack.enter_context(backends.server())
        except backends.Unavailable as exc:
            backends.unavailable(str(exc))
        yield url


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A URL of the session's server whose ``search_path`` is a new, empty schema."""
    with backends.schema(postgres_server) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a test's run store lives: a new SQLite file, or a new PostgreSQL schema."""
    if request.param == "sqlite":
        return str(tmp_path / "runs.sqlite3")
    return request.getfixturevalue("postgres_url")
