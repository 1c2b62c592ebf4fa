"""Fixtures shared by the test modules: the run-store backends (see tests/backends.py) and the
HTTP app on each of them, the headless Chromium of the browser tests (tests/browser.py), both
started once per test run, and reports without their charts."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import backends, browser


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """Base URL of the session's PostgreSQL server."""
    with contextlib.ExitStack() as stack:
        try:
            url = stack.enter_context(backends.server())
        except backends.Unavailable as exc:
            backends.unavailable(str(exc))
        yield url


@pytest.fixture(scope="session")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The session's headless Chromium (Selenium's driver), shared by every browser test."""
    with browser.chromium(tmp_path_factory.mktemp("chromium-profile")) as chrome:
        yield chrome


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


@pytest.fixture
def no_charts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports rendered with a blank SVG for each chart they have (the same names, in the same
    order), for the tests of the words around the charts (escaping, layout, nulls), which the
    charts never touch; the tests of each kind's own results draw and check the charts."""
    from present.reports import charts, plan_charts

    blank = '<svg xmlns="http://www.w3.org/2000/svg" role="img"><title>chart</title></svg>'
    monkeypatch.setattr(
        charts, "render_charts", lambda result: dict.fromkeys(charts.chart_names(result), blank)
    )
    monkeypatch.setattr(
        plan_charts,
        "render_plan_charts",
        lambda result: dict.fromkeys(plan_charts.plan_chart_names(result), blank),
    )
