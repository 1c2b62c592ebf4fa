"""The headless Chromium the browser tests share, driven by Selenium through chromium-driver:
started once per test run (the ``driver`` fixture of ``tests/conftest.py``) and quit at its end.

Without Chromium, chromium-driver or Selenium the tests that need it skip, except under CI
(``CI`` set), where they fail: .ci/run installs all three.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["chromium", "unavailable"]

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver", "chromium.chromedriver")


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(reason: str) -> None:
    """Skip the test for ``reason``; under CI, fail it."""
    if _in_ci():
        pytest.fail(f"{reason}; CI must run the browser test (.ci/run installs it)")
    pytest.skip(reason)


def _tools() -> tuple[str, str]:
    browser = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
    driver = next((shutil.which(d) for d in DRIVERS if shutil.which(d)), None)
    if browser is None:
        unavailable("no Chromium found: install the Debian package 'chromium'")
    if driver is None:
        unavailable("no chromedriver found: install the Debian package 'chromium-driver'")
    try:
        import selenium  # noqa: F401
    except ImportError:
        unavailable("Selenium is not installed: pip install -e '.[test]'")
    return browser, driver  # type: ignore[return-value]


@contextlib.contextmanager
def chromium(profile: Path) -> Iterator[Any]:
    """A headless Chromium with its profile in ``profile``, its console and network logged;
    quit on leaving."""
    browser, chromedriver = _tools()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-features=Translate,OptimizationHints,MediaRouter",
        f"--user-data-dir={profile}",
        "--window-size=1280,900",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    try:
        chrome = webdriver.Chrome(service=Service(chromedriver), options=options)
    except Exception as exc:  # a driver that does not match the browser, a broken install
        unavailable(f"Chromium could not be started through {chromedriver}: {exc}")
    chrome.set_page_load_timeout(60)
    try:
        yield chrome
    finally:
        chrome.quit()
