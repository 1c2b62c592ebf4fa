"""The API's reference page, GET /docs (api/docs): Swagger UI, vendored and served by the service
under the web page's Content-Security-Policy, reading /openapi.json.

Through Flask's test client: the page and every asset it names are served with their content
types and the policy, the page has no inline script or style and names no other origin, the
vendored files are the recorded ones, and they are package data. In a headless Chromium (the
browser and live server of tests/test_web_browser.py): the operations render, `POST /v1/evaluate`
among them with its example request, with no console error (a refused inline script or style
would be one) and no request to another origin. Without Chromium, chromium-driver or Selenium the
browser test skips, except under CI.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from api import create_app
from api.web.views import CONTENT_SECURITY_POLICY
from tests.helpers import package_data_files

# The browser and the live server of the web page's browser test (a headless Chromium through
# chromium-driver, skipped without them except under CI; the app on a free loopback port).
from tests.test_web_browser import Server

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "api" / "docs"
STATIC = DOCS / "static"
VENDOR = STATIC / "vendor"
WAIT_S = 30.0


@pytest.fixture
def client(tmp_path):
    return create_app({"DB": str(tmp_path / "runs.sqlite3"), "API_KEYS": ""}).test_client()


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))


def _tags(text: str) -> list[tuple[str, dict[str, str]]]:
    parser = _Tags()
    parser.feed(text)
    return parser.tags


def _assets(tags: list[tuple[str, dict[str, str]]]) -> list[str]:
    """The scripts and style sheets the page loads."""
    scripts = [a["src"] for tag, a in tags if tag == "script"]
    sheets = [a["href"] for tag, a in tags if tag == "link" and a.get("rel") == "stylesheet"]
    return scripts + sheets


# --- the page through the test client ---------------------------------------------------------


def test_docs_page_has_the_policy_and_no_inline_code(client):
    response = client.get("/docs")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/html")
    assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "script-src 'self';" in CONTENT_SECURITY_POLICY  # no 'unsafe-inline', no 'unsafe-eval'
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    tags = _tags(response.text)
    assert all(a.get("src") for tag, a in tags if tag == "script"), "an inline script"
    assert not any(tag == "style" or "style" in a for tag, a in tags), "an inline style"
    for _, attrs in tags:
        for name in ("src", "href"):
            value = attrs.get(name)
            if value is not None:
                assert value.startswith("/") and not value.startswith("//"), (name, value)
    # Swagger UI is started on an element that names the service's own OpenAPI document.
    root = next(a for _, a in tags if a.get("id") == "swagger-ui")
    assert root["data-spec"] == "/openapi.json"
    assert client.get(root["data-spec"]).status_code == 200


def test_every_asset_of_the_page_is_served(client):
    assets = _assets(_tags(client.get("/docs").text))
    assert "/docs/assets/vendor/swagger-ui/swagger-ui-bundle.js" in assets
    assert "/docs/assets/vendor/swagger-ui/swagger-ui.css" in assets
    for url in assets:
        response = client.get(url)
        assert response.status_code == 200, url
        kind = "text/javascript" if url.endswith(".js") else "text/css"
        assert response.headers["Content-Type"] == f"{kind}; charset=utf-8", url
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        file = STATIC / url.removeprefix("/docs/assets/")
        assert response.data == file.read_bytes(), url


def test_the_licences_are_served_and_unknown_assets_are_404(client):
    for name in ("LICENSE", "NOTICE", "swagger-ui-bundle.js.LICENSE.txt"):
        response = client.get(f"/docs/assets/vendor/swagger-ui/{name}")
        assert response.status_code == 200
        assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    response = client.get("/docs/assets/vendor/swagger-ui/swagger-ui.js")
    assert response.status_code == 404
    assert set(response.get_json()) == {"code", "status", "message", "errors"}


def test_docs_are_not_in_the_openapi(client):
    paths = client.get("/openapi.json").get_json()["paths"]
    assert not any(p == "/docs" or p.startswith("/docs/") for p in paths)


def test_init_code_loads_nothing_else():
    """The start-up script reads the document named by the page and turns the online validator
    (an image from another origin) off."""
    text = (STATIC / "docs.js").read_text("utf-8")
    assert "root.dataset.spec" in text and "validatorUrl: null" in text
    assert not re.search(r"https?://", text)


# --- the vendored files ---------------------------------------------------------------------


def _recorded() -> list[tuple[str, str, str, str, str]]:
    """(package, version, licence files, file, SHA-256) of each row of the vendor table."""
    text = (VENDOR / "README.md").read_text("utf-8")
    return re.findall(
        r"^\| (\S+) \| (\S+) \| [^|]*?\(([^)]+)\) \| `([^`]+)` \| [^|]+ \| `([0-9a-f]{64})` \|$",
        text,
        re.M,
    )


def test_vendored_files_are_the_recorded_ones():
    rows = _recorded()
    assert rows, "the vendor table lists nothing"
    recorded = set()
    for package, version, licences, file, sha256 in rows:
        path = VENDOR / file
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256, file
        licence_files = re.findall(r"`([^`]+)`", licences)
        assert licence_files, (file, licences)
        for licence in licence_files:
            assert (VENDOR / licence).read_text("utf-8").strip(), licence
        recorded |= {path, *(VENDOR / licence for licence in licence_files)}
        if file.endswith(".js"):  # the bundle says which release it is
            assert f'PACKAGE_VERSION:"{version}"' in path.read_text("utf-8"), (package, version)
    vendored = {p for p in VENDOR.rglob("*") if p.is_file() and p.name != "README.md"}
    assert vendored == recorded


def test_docs_files_are_package_data():
    files, missing = package_data_files("api.docs", DOCS)
    assert any(p.name == "swagger-ui-bundle.js" for p in files)
    assert not missing, f"not package data: {missing}"


# --- the page in Chromium -------------------------------------------------------------------


def _wait(until: Callable[[], Any], what: str) -> Any:
    """Poll the page's state until ``until`` holds (no fixed sleeps)."""
    deadline = time.monotonic() + WAIT_S
    while not (value := until()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


def _see_the_page(chrome: Any, served: str) -> None:
    """Load /docs, open POST /v1/evaluate, and check the console and the requests."""
    chrome.get_log("browser")
    chrome.get_log("performance")
    chrome.get(served + "/docs")
    _wait(lambda: chrome.execute_script("return document.documentElement.dataset.ready"), "ready")
    evaluate = _wait(
        lambda: chrome.execute_script(
            "return document.querySelector("
            "'.opblock-post .opblock-summary-path[data-path=\"/v1/evaluate\"]')"
        ),
        "the POST /v1/evaluate operation",
    )
    assert evaluate.text.replace("\u200b", "") == "/v1/evaluate"
    drawn = chrome.execute_script(
        "return [...document.querySelectorAll('.opblock')].map((o) => "
        "o.querySelector('.opblock-summary-method').textContent + ' ' + "
        "o.querySelector('.opblock-summary-path').dataset.path)"
    )
    spec = json.loads(
        chrome.execute_script("return JSON.stringify(window.ui.specSelectors.specJson())")
    )
    methods = {"get", "put", "post", "delete", "patch", "head", "options"}
    expected = {f"{m.upper()} {p}" for p, ops in spec["paths"].items() for m in ops if m in methods}
    assert set(drawn) == expected and "POST /v1/plans" in expected
    # an open service (no API keys): no "Authorize" button and no lock on any operation
    locks = "return document.querySelectorAll('.authorization__btn, .btn.authorize').length"
    assert chrome.execute_script(locks) == 0

    # Opened, the operation shows its request body with the worked example, highlighted (the
    # highlighter's colours are set from script, which the policy allows; inline styles are not).
    chrome.execute_script(
        "arguments[0].closest('.opblock').querySelector('.opblock-summary-control').click()",
        evaluate,
    )
    example = _wait(
        lambda: chrome.execute_script(
            "const b = document.querySelector('.opblock-post.is-open .opblock-section-request-body"
            " .highlight-code'); return b && b.textContent"
        ),
        "the request body's example",
    )
    assert json.loads(example)["name"] == "worked-example-2gpu-vs-on-demand"

    errors = [e["message"] for e in chrome.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    sent = []
    for entry in chrome.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message["params"]
        # The page's requests (not those of a new-tab page the browser may open by itself).
        if message["method"] == "Network.requestWillBeSent" and params.get(
            "documentURL", ""
        ).startswith(served + "/"):
            sent.append(params["request"]["url"])
    assert any(u.endswith("/openapi.json") for u in sent)
    assert [u for u in sent if not u.startswith((served + "/", "data:", "blob:"))] == []


def test_docs_page_renders_the_operations_in_chromium(driver, tmp_path):
    with Server(tmp_path) as server:
        _see_the_page(driver, server.url)
