"""Fixtures for the tests that run against both run-store backends (see tests/backends.py),
and the HTTP app on each of them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


@pytest.fixture
def store_app(tmp_path: Path, store_location: str) -> Iterator[Any]:
    """The HTTP app (tests.test_api.make_app) on each run-store backend; its job runner and
    store are closed afterwards."""
    from tests.test_api import close_store, make_app

    app = make_app(tmp_path, DB=store_location)
    yield app
    close_store(app)


@pytest.fixture
def store_client(store_app: Any) -> Any:
    return store_app.test_client()
