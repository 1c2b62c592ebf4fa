"""The web page in a real headless Chromium, driven by Selenium through chromium-driver.

The test starts the service itself (Werkzeug's threaded server on a free loopback port, a new
SQLite run store) and checks what a person would: the page loads with no console error and no
request to another origin, shows the example's verdict, answers edits of the GPU count and the
cloud price, puts the error of ``pue: 0.5`` beside the PUE field, saves a run that then appears
in the runs list (and opens and downloads it), shows a fleet plan's verdict and frontier,
ranks the market in the compare tab in the words of ``costmodel compare``, switches the form
to inference work and shows the hosted API as a third side, asks for a key when the service
has API keys, follows a run saved as a job (its progress, then its result), and shows a scenario's
emissions and a plan's (its carbon column and frontier, or "unknown"). Screenshots at
1280 and 375 px go to ``test-artifacts/``.

The tests wait on the page's own state, never on time, so that they pass on a busy machine:
each edit is one input event (a person pasting), and a view is settled when its ``data-busy``
is ``"false"`` (the outcome of the last edit shown); ``data-sent`` and ``data-answered`` count
the requests it sent and name the one whose outcome it shows (api/web/static/js/lifecycle.js).
The page is served with a 30 ms wait after an edit in place of its 300 ms (``Server``), which
no test depends on: a tenth of the time per edit.

The browser is started once per test run (the ``driver`` fixture, :mod:`tests.browser`).
Without Chromium, chromium-driver or Selenium the tests skip, except under CI (``CI`` set),
where they fail: .ci/run installs all three.
"""

from __future__ import annotations

import base64
import copy
import io
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

import scenarios
from api import create_app
from api.service import get_catalog, get_store
from cli.tables import print_compare
from costmodel.units import unit as unit_of
from present import to_dict
from present.formatting import (
    fmt_grams,
    fmt_months,
    fmt_number,
    fmt_per_unit,
    fmt_share,
    fmt_tonnes,
    fmt_unit_cost,
    fmt_usd,
    fmt_utilisation,
)
from present.reports.charts import usd_tick
from scenarios.compare import compare, load_request
from scenarios.compare.wording import UNMEASURED_CODES

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
EXAMPLES = ROOT / "scenarios" / "examples"
LAB = yaml.safe_load((EXAMPLES / "lab-4x-rtx2080ti-vs-p3-8xlarge.yaml").read_text("utf-8"))
PLAN = yaml.safe_load((EXAMPLES / "plan-lab-rtx4090-growth.yaml").read_text("utf-8"))
HOST = "127.0.0.1"
WAIT_S = 60.0
#: The page waits this long after an edit before it sends the request (lifecycle.js); the
#: tests serve it a shorter wait, TEST_DEBOUNCE: the tests never depend on the wait's length
#: (an edit made in one script runs no timer; the views are waited on, never the clock).
LIFECYCLE = "/assets/js/lifecycle.js"
DEBOUNCE = b"export const DEBOUNCE_MS = 300;"
TEST_DEBOUNCE = b"export const DEBOUNCE_MS = 30;"
# --- the service -----------------------------------------------------------------------------


class Server:
    """The app on Werkzeug's threaded server on a free loopback port."""

    def __init__(self, tmp_path: Path, **config: Any) -> None:
        from werkzeug.serving import make_server

        settings = {"DB": str(tmp_path / "runs.sqlite3"), "API_KEYS": "", **config}
        self.app = create_app(settings)
        self.gate = threading.Event()  # cleared by hold(): POST requests wait until release()
        self.gate.set()
        self.server = make_server(HOST, 0, self._gated, threaded=True)
        self.url = f"http://{HOST}:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.gate.set()
        self.server.shutdown()
        self.thread.join(timeout=10)

    def _gated(self, environ: dict[str, Any], start_response: Any) -> Any:
        if environ["REQUEST_METHOD"] == "POST":
            self.gate.wait(WAIT_S)
        if environ["PATH_INFO"] == LIFECYCLE:
            return self._quick_lifecycle(environ, start_response)
        return self.app(environ, start_response)

    def _quick_lifecycle(self, environ: dict[str, Any], start_response: Any) -> Any:
        """lifecycle.js with its wait after an edit shortened to :data:`TEST_DEBOUNCE`: the
        same sequence of events (an edit schedules a request, a newer edit restarts the wait),
        as a person typing on a busy machine sees it, in a tenth of the time per edit."""
        answer: list[Any] = []
        chunks = self.app(environ, lambda *a: answer.append(a))
        try:
            body = b"".join(chunks)
        finally:
            getattr(chunks, "close", lambda: None)()
        status, headers = answer[0][:2]
        if status.startswith("200"):
            assert DEBOUNCE in body, f"{LIFECYCLE} no longer declares {DEBOUNCE.decode()}"
            body = body.replace(DEBOUNCE, TEST_DEBOUNCE)
            headers = [(k, str(len(body)) if k.lower() == "content-length" else v)
                       for k, v in headers]  # fmt: skip
        start_response(status, headers)
        return [body]

    def hold(self) -> None:
        """Keep the page's POST requests waiting (under way) until :meth:`release`."""
        self.gate.clear()

    def release(self) -> None:
        self.gate.set()

    def api(self, method: str, path: str, body: Any = None, key: str = "") -> tuple[int, Any]:
        """Ask the API directly (through the test client), as the page should."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        response = self.app.test_client().open(path, method=method, json=body, headers=headers)
        return response.status_code, response.get_json()


# --- the browser -----------------------------------------------------------------------------


class Page:
    """The page in the browser, with the waits and reads the tests need."""

    def __init__(self, chrome: Any, server: Server) -> None:
        self.d = chrome
        self.server = server
        self.downloads = Path(server.app.config["DB"]).parent / "downloads"
        self.downloads.mkdir(exist_ok=True)
        self.d.get_log("browser")  # drop the logs of an earlier page
        self.d.get_log("performance")
        self.console: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.viewport(1280, 900)
        self.d.execute_cdp_cmd(
            "Browser.setDownloadBehavior",
            {"behavior": "allow", "downloadPath": str(self.downloads)},
        )
        self.d.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
        self.d.get(server.url + "/")
        self.wait(lambda: self.js("return document.documentElement.dataset.ready") == "true")

    # reading
    def js(self, script: str, *args: Any) -> Any:
        return self.d.execute_script(script, *args)

    def by_id(self, id_: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.d.find_element(By.ID, id_)

    def text(self, id_: str) -> str:
        return self.js("return document.getElementById(arguments[0]).textContent", id_).strip()

    def wait(self, until: Callable[[], Any], what: str = "", timeout: float = WAIT_S) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = until()
            if value:
                return value
            if time.monotonic() > deadline:
                self.collect()
                raise AssertionError(
                    f"timed out waiting for {what or until}; console: {self.console[-5:]}"
                )
            time.sleep(0.05)

    def state(self, view: str) -> dict[str, str]:
        """The view's lifecycle state: status, busy, sent, answered (lifecycle.js)."""
        return self.js("return {...document.getElementById(arguments[0]).dataset}", f"view-{view}")

    def settled(self, view: str = "scenario") -> str:
        """Wait until the view shows the outcome of its last edit (an answer, the API's refusal,
        a failure, or the page's own refusal of the text); its status."""
        state = self.wait(
            lambda: (s := self.state(view))["busy"] == "false" and s, f"the {view} view to settle"
        )
        assert state["status"] in ("idle", "invalid", "error"), state
        return state["status"]

    def sent(self, view: str) -> int:
        return int(self.state(view)["sent"])

    def answered(self, view: str) -> int:
        return int(self.state(view)["answered"])

    def collect(self) -> None:
        """Move the browser's console and network logs into ``console`` and ``requests``."""
        self.console += self.d.get_log("browser")
        for entry in self.d.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message["method"] in ("Network.requestWillBeSent", "Network.responseReceived"):
                self.requests.append(message)

    def errors(self) -> list[str]:
        self.collect()
        return [e["message"] for e in self.console if e["level"] == "SEVERE"]

    # acting
    def type(self, id_: str, text: str) -> None:
        """Replace an input's text as a person pasting would: select all, then one input event
        (the text inserted at once, or the selection deleted). Typed key by key, a busy machine
        could let the page evaluate the text half typed."""
        from selenium.webdriver.common.keys import Keys

        field = self.by_id(id_)
        self.js("arguments[0].scrollIntoView({block: 'center'})", field)  # not under the verdict
        field.click()
        field.send_keys(Keys.CONTROL, "a")
        if text:
            self.d.execute_cdp_cmd("Input.insertText", {"text": text})
        else:
            field.send_keys(Keys.DELETE)
        self.wait(lambda: field.get_attribute("value") == text, f"{id_} to hold {text!r}")

    def choose(self, id_: str, value: str) -> None:
        """Pick ``value`` in a select, as a person does (one change event)."""
        self.js(
            "const s = document.getElementById(arguments[0]); s.value = arguments[1];"
            "s.dispatchEvent(new Event('change', {bubbles: true}));",
            id_,
            value,
        )

    def shown(self, id_: str) -> bool:
        return self.by_id(id_).is_displayed()

    def choices(self, id_: str) -> list[str]:
        """The values of a select's options that are not hidden."""
        return self.js(
            "return [...document.getElementById(arguments[0]).options]"
            ".filter((o) => !o.hidden).map((o) => o.value)",
            id_,
        )

    def document(self, view: str = "scenario") -> dict[str, Any]:
        """The view's YAML text, read."""
        return yaml.safe_load(self.by_id(f"{view}-yaml").get_attribute("value"))

    def keystrokes(self, id_: str, texts: list[str]) -> None:
        """Give an input each of ``texts`` in turn, one input event each, all in one script: as
        fast typing, within the page's wait for the typing to stop (no timer runs in between)."""
        self.js(
            "const [input, texts] = arguments;"
            "for (const t of texts) { input.value = t;"
            " input.dispatchEvent(new InputEvent('input', {bubbles: true})); }",
            self.by_id(id_),
            texts,
        )

    def viewport(self, width: int, height: int) -> None:
        self.d.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        )

    def charts_drawn(self) -> None:
        """Wait until every chart in sight was drawn at its box's width (render.js drawChart)."""
        self.wait(
            lambda: self.js(
                "return [...document.querySelectorAll('.chart')].filter((c) => c.clientWidth)"
                ".every((c) => c.dataset.width === String(Math.max(280, c.clientWidth)))"
            ),
            "the charts to be drawn at the new width",
        )

    def screenshot(self, name: str, width: int) -> Path:
        """The whole page at ``width`` CSS pixels as test-artifacts/<name>.png."""
        self.viewport(width, 900)
        self.js("window.scrollTo(0, 0)")  # the verdict sticks to the top of the viewport
        self.charts_drawn()
        height = self.d.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]["height"]
        shot = self.d.execute_cdp_cmd(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": min(height, 8000), "scale": 1},
            },
        )
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        path.write_bytes(base64.b64decode(shot["data"]))
        self.viewport(1280, 900)
        return path


def _verdict(server: Server, kind: str, doc: dict[str, Any], key: str = "") -> str:
    status, body = server.api(
        "POST", "/v1/evaluate" if kind == "scenario" else "/v1/plans", doc, key
    )
    assert status == 200, body
    return body["verdict"]


def _only_this_origin(page: Page) -> None:
    """Every request the page made went to the service (the browser's own pages, such as a
    new-tab page it may open, are not the page's)."""
    page.collect()
    origin = page.server.url + "/"
    sent = [r["params"] for r in page.requests if "request" in r["params"]]
    ours = [p for p in sent if (p.get("documentURL") or "").startswith(origin)]
    assert len(ours) > 10, "the page's requests were not recorded"
    foreign = [
        p["request"]["url"]
        for p in ours
        if not p["request"]["url"].startswith((origin, "data:", "blob:"))
    ]
    assert foreign == []
    loaded = page.js("return performance.getEntriesByType('resource').map((e) => e.name)")
    assert loaded and [u for u in loaded if not u.startswith((origin, "blob:"))] == []


# --- the tests -------------------------------------------------------------------------------


def test_page_in_chromium(driver, tmp_path):
    with Server(tmp_path) as server:
        page = Page(driver, server)

        # Loaded: the example's verdict, no console error, only this origin.
        assert page.text("verdict") == _verdict(server, "scenario", LAB)
        page.wait(
            lambda: (
                page.js(
                    "return document.querySelectorAll('#scenario-chart svg polygon.band').length"
                )
                == 2
            )
        )
        page.wait(
            lambda: (
                page.js("return document.getElementById('scenario-buy-gpu').options.length") > 10
            ),
            "the catalog",
        )
        assert page.by_id("scenario-buy-gpu").get_attribute("value") == "rtx-2080-ti"
        assert page.js("return document.querySelectorAll('#scenario-drivers tbody tr').length") > 3
        assert page.errors() == []
        # the runs list loads beside the answer: waited on, as every other state of the page
        page.wait(lambda: page.text("runs-status").startswith("No saved runs"), "the runs list")

        # The page's number formats are the reports'.
        values = [0, 0.4, 9.994, 12.5, 999.5, 1234.5, 12345.6, -52349, 1_234_567, None]
        shares = [0, 1, 0.0004, 0.3449, 0.5, 0.9968, 0.99996, 0.125, None]
        months = [0.04, 3.55, 12.0, None]
        costs = [0.0689, 0.06893, 1.125, 2.4, 0.00001234, 99.95, 999.5, 1234.5, 12.5, None]
        formatted = page.d.execute_async_script(
            """const [values, shares, months, costs, done] = arguments;
            import("/assets/js/format.js").then((f) => done({
              usd: values.map(f.fmtUsd), share: shares.map(f.fmtShare),
              util: shares.map((s) => f.fmtUtilisation(s)), months: months.map(f.fmtMonths),
              cost: costs.map(f.fmtUnitCost),
              tokens: costs.map((c) => f.fmtPerUnit(c, "million_tokens")),
              hours: costs.map((c) => f.fmtPerUnit(c, "reference_gpu_hour")),
              tonnes: costs.concat(values).map(f.fmtTonnes),
              grams: costs.concat(values).map(f.fmtGrams)}));""",
            values,
            shares,
            months,
            costs,
        )
        assert formatted["cost"] == [fmt_unit_cost(v) for v in costs]
        assert formatted["tokens"] == [fmt_per_unit(v, "million_tokens") for v in costs]
        assert formatted["hours"] == [fmt_per_unit(v, "reference_gpu_hour") for v in costs]
        assert formatted["usd"] == [fmt_usd(v) for v in values]
        assert formatted["tonnes"] == [fmt_tonnes(v) for v in costs + values]
        assert formatted["grams"] == [fmt_grams(v) for v in costs + values]
        assert formatted["share"] == [fmt_share(v) for v in shares]
        assert formatted["util"] == [fmt_utilisation(v) for v in shares]
        assert formatted["months"] == [fmt_months(v) for v in months]
        # and so are the charts' money ticks ("$62.5k" of a 2.5k step, not "$63k")
        money = [0, 250, 999, 1000, 2500, 62500, -62500, 12000, 1_025_000, 1_250_000, -3e6]
        ticks = page.d.execute_async_script(
            """const [money, done] = arguments;
            import("/assets/js/charts.js").then((c) => done(money.map(c.usdTick)));""",
            money,
        )
        assert ticks == [usd_tick(v) for v in money]

        # Edits re-evaluate: the GPU count, then the cloud price (likely alone: a fixed price).
        doc = copy.deepcopy(LAB)
        before = page.text("verdict")
        page.type("scenario-buy-gpu-count", "8")
        assert page.settled() == "idle"
        doc["buy"]["gpu_count"] = 8
        assert page.text("verdict") == _verdict(server, "scenario", doc) != before
        before = page.text("verdict")
        page.type("scenario-rent-price-usd-per-hour-mode", "6")
        assert page.settled() == "idle"
        doc["rent"]["price_usd_per_hour"] = 6
        assert page.text("verdict") == _verdict(server, "scenario", doc) != before
        text = page.by_id("scenario-yaml").get_attribute("value")
        assert yaml.safe_load(text) == doc  # the YAML follows the form
        assert text.index("gpu_count: 8") < text.index("gpu_price_usd")  # in its place

        # Low without high is the page's own error; likely alone a fixed PUE, evaluated.
        page.type("scenario-buy-pue-low", "")
        assert page.settled() == "invalid"
        assert "low and high" in page.text("scenario-buy-pue-error")
        page.type("scenario-buy-pue-high", "")
        assert page.settled() == "idle"
        doc["buy"]["pue"] = LAB["buy"]["pue"]["mode"]
        assert page.text("verdict") == _verdict(server, "scenario", doc)
        before = page.text("verdict")

        # pue: 0.5 is refused at the PUE field, and the answer stays that of the last good one.
        page.type("scenario-buy-pue-mode", "0.5")
        assert page.settled() == "invalid"
        error = page.by_id("scenario-buy-pue-error")
        assert error.is_displayed() and "[1, 5]" in error.text
        assert page.by_id("scenario-buy-pue-mode").get_attribute("aria-invalid") == "true"
        assert "pue: 0.5" in page.by_id("scenario-yaml").get_attribute("value")
        assert page.text("verdict") == before
        assert page.by_id("scenario-buy-gpu-count-error").is_displayed() is False

        # The YAML editor drives the form: PUE back in range, two GPUs.
        yaml_box = page.by_id("scenario-yaml")
        yaml_box.click()  # the editor has the focus, as when a person types in it
        fixed = yaml_box.get_attribute("value").replace("pue: 0.5", "pue: 1.2")
        fixed = fixed.replace("gpu_count: 8", "gpu_count: 2")
        page.js(
            "const t = arguments[0]; t.value = arguments[1];"
            "t.dispatchEvent(new Event('input', {bubbles: true}));",
            yaml_box,
            fixed,
        )
        assert page.settled() == "idle"
        assert page.by_id("scenario-buy-pue-error").is_displayed() is False
        assert page.by_id("scenario-buy-gpu-count").get_attribute("value") == "2"
        assert page.by_id("scenario-buy-pue-mode").get_attribute("value") == "1.2"
        doc["buy"].update(gpu_count=2, pue=1.2)
        assert page.text("verdict") == _verdict(server, "scenario", doc)

        # Save the run: it appears in the runs list, opens again and downloads as a report.
        page.by_id("scenario-save").click()
        page.wait(lambda: "Saved as run" in page.text("scenario-action-status"), "the save")
        status, runs = server.api("GET", "/v1/runs")
        assert status == 200 and runs["total"] == 1
        run_id = runs["items"][0]["id"]
        row = f"#runs-table tr[data-run='{run_id}']"
        page.wait(lambda: page.js(f'return document.querySelector("{row}") !== null'), "the run")
        assert LAB["name"] in page.text("runs-table")
        verdict = page.text("verdict")
        page.js(
            "document.querySelector('#scenario-example').value = 'worked-example';"
            "document.querySelector('#scenario-example').dispatchEvent(new Event('change'));"
        )
        assert page.settled() == "idle" and page.text("verdict") != verdict
        # Another document pasted: the selector no longer names the example (it did).
        assert page.by_id("scenario-example").get_attribute("value") == "worked-example"
        page.js(
            "const t = arguments[0]; t.value = arguments[1];"
            "t.dispatchEvent(new Event('input', {bubbles: true}));",
            page.by_id("scenario-yaml"),
            yaml.safe_dump(LAB, sort_keys=False),
        )
        assert page.settled() == "idle"
        assert page.by_id("scenario-example").get_attribute("value") == ""
        page.js(f'document.querySelector("{row} button").click()')  # Open
        page.wait(lambda: page.text("verdict") == verdict, "the stored run's verdict")
        page.js("document.getElementById('runs-format').value = 'csv'")
        page.js(f'document.querySelectorAll("{row} button")[1].click()')  # Report
        page.wait(lambda: list(page.downloads.glob("*.csv")), "the CSV report download")
        # The only console error: the browser's note of the 422 that refused pue: 0.5.
        errors = page.errors()
        assert len(errors) == 1 and "/v1/evaluate" in errors[0] and "422" in errors[0]

        page.screenshot("web-desktop", 1280)
        phone = page.screenshot("web-phone", 375)
        assert phone.stat().st_size > 20_000
        _answer_first(page, "scenario", "verdict")
        _axes_and_yaml_fit(page)

        # The form's hint gives the discount rate's range as the format bounds it.
        assert "range (-0.5, 1]" in page.text("scenario-discount-rate-hint")

        # The plan view, reached with the keyboard: the best plan's verdict and the frontier.
        from selenium.webdriver.common.keys import Keys

        page.by_id("tab-scenario").send_keys(Keys.ARROW_RIGHT)
        page.wait(lambda: page.by_id("tab-plan").get_attribute("aria-selected") == "true")
        assert page.js("return document.activeElement.id") == "tab-plan"
        assert page.settled("plan") == "idle"
        assert page.text("plan-verdict") == _verdict(server, "plan", PLAN)
        frontier = page.js("return document.querySelectorAll('#plan-chart circle.frontier').length")
        status, result = server.api("POST", "/v1/plans", PLAN)
        assert frontier == len(result["frontier"])
        assert page.js("return document.querySelectorAll('#plan-chart polygon.best').length") == 1
        assert (
            page.js("return document.querySelectorAll('#plan-chart circle.candidate').length") > 10
        )
        page.screenshot("web-plan", 1280)
        _labels_clear(page, "5+0")
        page.screenshot("web-plan-phone", 375)
        _answer_first(page, "plan", "plan-verdict")
        page.viewport(375, 800)
        page.charts_drawn()
        _labels_clear(page, "5+0")
        page.viewport(1280, 900)
        page.type("plan-own-pue-mode", "")  # low and high alone: uniform
        page.type("plan-own-pue-low", "0.5")
        assert page.settled("plan") == "invalid"
        assert "[1, 5]" in page.text("plan-own-pue-error")  # the API's error at own.pue
        page.type("plan-own-pue-high", "")  # low alone: the page's own error
        page.wait(lambda: "low and high" in page.text("plan-own-pue-error"))
        assert page.by_id("view-plan").get_attribute("data-status") == "invalid"

        _only_this_origin(page)


#: The ids of the fields of one kind of work only, and of the API section's first field.
TRAINING_ONLY = ("scenario-workload-reference-gpu-field", "scenario-buy-relative-throughput-field")
INFERENCE_ONLY = (
    "scenario-workload-model-field",
    "scenario-workload-input-tokens-field",
    "scenario-workload-min-tokens-per-s-per-user-field",
    "scenario-buy-tokens-per-s-per-gpu-field",
    "scenario-rent-tokens-per-s-per-gpu-field",
    "scenario-api-model-field",
)
H100 = {"buy": ("h100-sxm5-80gb", 8), "rent": "lambda/gpu_8x_h100_sxm5"}
OFFER = "together/llama-3.3-70b-instruct-turbo"


def _work_shown(page: Page, kind: str) -> None:
    """The form shows the fields of work ``kind`` and hides the other kind's."""
    shown, hidden = (TRAINING_ONLY, INFERENCE_ONLY)[:: 1 if kind == "training" else -1]
    assert [page.shown(i) for i in shown] == [True] * len(shown), kind
    assert [page.shown(i) for i in hidden] == [False] * len(hidden), kind
    precisions = ["fp32", "fp16", "int8"] if kind == "training" else ["fp16", "fp8", "fp4"]
    assert page.choices("scenario-workload-precision") == ["", *precisions]


def test_inference_in_chromium(driver, tmp_path):
    """The kind of work switches the form; an inference scenario made in the form is evaluated
    with the API as a third side, in M tokens; switching back gives the training scenario."""
    with Server(tmp_path) as server:
        page = Page(driver, server)
        models = server.api("GET", "/v1/catalog/models")[1]["items"]
        page.wait(
            lambda: (
                page.js("return document.getElementById('scenario-api-model').options.length") > 10
            ),
            "the catalog",
        )
        _work_shown(page, "training")

        # Inference: the first model of the catalog (none is measured on an RTX 2080 Ti), a
        # chat-sized request; the GPU without serving rows serves at the estimate.
        assert not any("rtx-2080-ti" in gpus for m in models for gpus in m["measured_on"].values())
        page.choose("scenario-workload-kind", "inference")
        assert page.settled() == "idle"
        _work_shown(page, "inference")
        doc = copy.deepcopy(LAB)
        doc["workload"] = {
            **{k: v for k, v in LAB["workload"].items() if k != "reference_gpu"},
            "kind": "inference",
            "model": models[0]["id"],
            "precision": models[0]["precisions"][0],
            "input_tokens": 1000,
            "output_tokens": 1000,
        }
        assert page.document() == doc
        assert not page.by_id("scenario-buy-tokens-per-s-per-gpu-error").is_displayed()
        status, result = server.api("POST", "/v1/evaluate", {**doc, "simulation": {"samples": 50}})
        assert status == 200
        assert "estimated_throughput" in [w["code"] for w in result["warnings"]]
        assert "Not measured on any GPU" in page.text("scenario-workload-model-hint")

        # A model the catalog measures on the H100: its hint names the GPU.
        page.choose("scenario-workload-model", "llama-3.3-70b")
        page.choose("scenario-workload-precision", "fp8")
        assert "h100-sxm5-80gb" in page.text("scenario-workload-model-hint")
        doc["workload"].update(model="llama-3.3-70b", precision="fp8")

        # An owned and a rented 8x H100 and a hosted API of the model, all from the form.
        page.choose("scenario-buy-gpu", H100["buy"][0])
        page.type("scenario-buy-gpu-count", str(H100["buy"][1]))
        for part, text in (("low", ""), ("high", ""), ("mode", "25000")):  # an H100's price
            page.type(f"scenario-buy-gpu-price-usd-{part}", text)
        page.choose("scenario-rent-instance", H100["rent"])
        page.choose("scenario-api-model", OFFER)
        assert page.settled() == "idle"
        doc["buy"].update(gpu=H100["buy"][0], gpu_count=H100["buy"][1], gpu_price_usd=25000)
        doc["rent"]["instance"] = H100["rent"]
        doc["api"] = {"model": OFFER}
        assert page.document() == doc
        status, result = server.api("POST", "/v1/evaluate", doc)
        assert status == 200 and page.text("verdict") == result["verdict"]
        assert "the API" in result["verdict"]
        i = result["utilisation"].index(result["cumulative_cost"]["utilisation"])
        api_cost = fmt_per_unit(result["cost_per_unit"]["api"]["p50"][i], "million_tokens")
        assert api_cost.endswith(" per M tokens") and api_cost in page.text("scenario-figure-notes")
        assert page.text("scenario-figure-notes") == "".join(
            [
                *result["wording"]["shares"],
                result["wording"]["cost"],
                result["wording"]["payback_note"],
            ]
        )  # the server's sentences, as written
        assert fmt_utilisation(result["breakeven_vs_api"]["p50"]) in page.text("scenario-figures")
        heads = page.js(
            "return [...document.querySelectorAll('#scenario-levels thead th')]"
            ".map((h) => h.textContent)"
        )
        assert {"API TCO P50", "API per M tokens P50", "Cheapest (share of draws)"} <= set(heads)
        first = page.js(
            "return [...document.querySelectorAll('#scenario-levels tbody tr:first-child > *')]"
            ".map((c) => c.textContent)"
        )
        assert first[heads.index("API TCO P50")] == fmt_usd(result["api_tco"]["p50"][0])
        chart = "#scenario-chart svg"
        assert page.js(f"return document.querySelectorAll('{chart} polygon.band').length") == 3
        assert page.js(f"return document.querySelectorAll('{chart} .be-line.api').length") == 1
        assert page.shown("scenario-chart") and page.js(
            "return [...document.querySelectorAll('#view-scenario [data-role=\"api\"]')]"
            ".every((n) => !n.hidden)"
        )
        _payback_drawn(page, result)
        page.screenshot("web-inference", 1280)
        page.screenshot("web-inference-phone", 375)
        page.viewport(375, 800)
        assert page.js("return document.documentElement.scrollWidth") <= 375  # 11 columns
        page.viewport(1280, 900)

        # Prices of one's own: the offer's, written in; the same answer. Without an output
        # price the API's error stands beside that field.
        page.choose("scenario-api-model", "__prices__")
        assert page.settled() == "idle" and page.text("verdict") == result["verdict"]
        doc["api"] = {"input_usd_per_mtok": 0.88, "output_usd_per_mtok": 0.88}
        assert page.document() == doc
        page.type("scenario-api-output-usd-per-mtok-mode", "")
        assert page.settled() == "invalid"
        assert "without a catalog offer" in page.text("scenario-api-output-usd-per-mtok-error")
        page.type("scenario-api-output-usd-per-mtok-mode", "0.9")
        assert page.settled() == "idle"
        doc["api"]["output_usd_per_mtok"] = 0.9

        # Back to training: the workload as it was, no API, the training result's table.
        page.choose("scenario-workload-kind", "training")
        assert page.settled() == "idle"
        _work_shown(page, "training")
        training = copy.deepcopy(doc)
        training["workload"] = LAB["workload"]
        del training["api"]
        assert page.document() == training
        assert page.text("verdict") == _verdict(server, "scenario", training)
        heads = page.js(
            "return [...document.querySelectorAll('#scenario-levels thead th')]"
            ".map((h) => h.textContent)"
        )
        assert heads == [
            "Utilisation",
            "Buy TCO P50",
            "Rent TCO P50",
            "P(buy cheaper)",
            "Payback P50 [months]",
        ]
        assert page.js(f"return document.querySelectorAll('{chart} polygon.band').length") == 2
        # ... and inference again: its workload and API block come back.
        page.choose("scenario-workload-kind", "inference")
        assert page.settled() == "idle" and page.document() == doc

        # A new document on an L40S: the first model measured on it.
        page.choose("scenario-example", "lab-4x-rtx2080ti-vs-p3-8xlarge")
        assert page.settled() == "idle"
        page.choose("scenario-buy-gpu", "l40s")
        page.choose("scenario-workload-kind", "inference")
        page.settled()
        on = next(m for m in models if any("l40s" in g for g in m["measured_on"].values()))
        precision = next(p for p in on["precisions"] if "l40s" in on["measured_on"][p])
        assert (page.document()["workload"]["model"], page.document()["workload"]["precision"]) == (
            on["id"],
            precision,
        )
        errors = page.errors()  # the 422s of the refused documents only
        assert errors and all("/v1/evaluate" in e and "422" in e for e in errors)
        _only_this_origin(page)


def _answer_first(page: Page, view: str, verdict: str) -> None:
    """At 375 px the view is one column, the answer first: the verdict, the chart, then the
    form and the YAML; no sideways scroll. At 1280 px the form stands beside the results."""
    ids = [verdict, f"{view}-chart", f"{view}-form-title", f"{view}-yaml"]
    boxes = "return arguments[0].map((id) => document.getElementById(id).getBoundingClientRect())"
    page.viewport(375, 800)
    v, chart, form, text = page.js(boxes, ids)
    assert v["bottom"] <= chart["top"] < chart["bottom"] <= form["top"] < text["top"]
    assert chart["right"] <= 375 and form["right"] <= 375
    assert page.js("return document.documentElement.scrollWidth") <= 375
    page.viewport(1280, 900)
    v, chart, form, text = page.js(boxes, ids)
    assert v["bottom"] <= chart["top"] and v["bottom"] <= form["top"]
    assert form["right"] <= chart["left"] and chart["top"] < text["top"]  # side by side


def _axes_and_yaml_fit(page: Page) -> None:
    """At 375 px each chart's y-axis title clears its tick labels and stays inside its chart
    (it overlapped "$150k" and was clipped on the payback chart); at 1280 px the YAML is as
    wide as the form and the results together (it was squeezed to the form's 420 px)."""
    page.viewport(375, 800)
    page.charts_drawn()
    for chart in ("scenario-chart", "scenario-payback"):
        title, ticks, svg = page.js(
            """const svg = document.querySelector(`#${arguments[0]} svg`);
            const box = (n) => n.getBoundingClientRect().toJSON();
            const ticks = [...svg.querySelectorAll('.axes > text[text-anchor="end"]')];
            return [box(svg.querySelector('.axis-title[transform]')), ticks.map(box), box(svg)];""",
            chart,
        )
        assert ticks and all(title["right"] + 4 <= t["left"] for t in ticks), (chart, title, ticks)
        assert svg["left"] <= title["left"] and svg["top"] <= title["top"], (chart, title, svg)
        assert title["bottom"] <= svg["bottom"], (chart, title, svg)
    page.viewport(1280, 900)
    layout, text = page.js(
        "return ['#view-scenario .layout', '#scenario-yaml']"
        ".map((s) => document.querySelector(s).getBoundingClientRect().width)"
    )
    assert text >= layout - 2 and text > 1000, (text, layout)


def _labels_clear(page: Page, best: str) -> None:
    """The plan chart's point labels, the best plan's among them, overlap neither each other
    nor the star, a frontier point or a carbon frontier's ring (boxes as the browser lays the
    text out)."""
    drawn = page.js(
        """const svg = document.querySelector('#plan-chart svg');
        const all = (selector) => [...svg.querySelectorAll(selector)];
        const box = (n) => {
          const b = n.getBBox();
          return [b.x, b.y, b.x + b.width, b.y + b.height];
        };
        return {labels: all('text.point-label').map((t) => [t.textContent, box(t)]),
                marks: all('polygon.best, circle.frontier, circle.carbon-frontier').map(box),
                frame: [0, 0, svg.width.baseVal.value, svg.height.baseVal.value]};"""
    )

    def apart(a: list[float], b: list[float]) -> bool:
        return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]

    labels = drawn["labels"]
    assert best in [text for text, _ in labels]
    for i, (text, box) in enumerate(labels):
        frame = drawn["frame"]
        assert frame[0] <= box[0] and box[2] <= frame[2] and frame[1] <= box[1], text
        assert all(apart(box, mark) for mark in drawn["marks"]), (
            text,
            box,
            [m for m in drawn["marks"] if not apart(box, m)],
        )
        assert all(apart(box, other) for _, other in labels[i + 1 :]), (text, labels)


def _cli_compare(server: Server, body: dict[str, Any]) -> list[str]:
    """What ``costmodel compare`` prints for the request ``body``, line by line (the catalog
    the server answers with)."""
    with server.app.app_context():
        result = compare(load_request(body), get_catalog())
    console = Console(file=io.StringIO(), record=True, width=400, color_system=None)
    print_compare(result, console, limit=25)
    return console.export_text().splitlines()


def _compare_sentence(server: Server, body: dict[str, Any]) -> str:
    """The compare view's sentence for ``body``: the CLI's lines about the cheapest owned and
    rented option and their break-even, each ended with a full stop; checked against the API's
    answer to the same request."""
    status, answer = server.api("POST", "/v1/compare", body)
    assert status == 200, answer
    lines = [
        line
        for line in _cli_compare(server, body)
        if line.startswith(("Cheapest owned: ", "Cheapest rented: ", "Break-even utilisation"))
    ]
    assert len(lines) == 3
    assert f" {answer['cheapest_buy']['catalog_id']} (own)" in lines[0]
    assert f": {answer['cheapest_rent']['catalog_id']} (" in lines[1]
    return " ".join(f"{line}." for line in lines)


def test_compare_in_chromium(driver, tmp_path):
    from selenium.webdriver.common.keys import Keys

    with Server(tmp_path) as server:
        page = Page(driver, server)
        rows = "return document.querySelectorAll('#compare-table tbody tr').length"

        # The last tab, reached with the keyboard (left of the first), compares at once.
        page.by_id("tab-scenario").send_keys(Keys.ARROW_LEFT)
        page.wait(lambda: page.by_id("tab-compare").get_attribute("aria-selected") == "true")
        assert page.js("return document.activeElement.id") == "tab-compare"
        assert page.by_id("view-scenario").is_displayed() is False
        assert page.settled("compare") == "idle"
        assert page.by_id("compare-utilisation").get_attribute("value") == "50"
        assert page.text("compare-verdict") == _compare_sentence(server, {"utilisation": 0.5})
        status, answer = server.api("POST", "/v1/compare", {"utilisation": 0.5})
        options = answer["options"]

        # The 25 cheapest, in the API's order and the CLI's words; all of them on request.
        assert page.js(rows) == 25 < len(options)
        cli = _cli_compare(server, {"utilisation": 0.5})
        first = page.js(
            "return [...document.querySelectorAll('#compare-table tbody tr:first-child > *')]"
            ".map((c) => c.textContent)"
        )
        best = options[0]
        name = f"{best['gpu_count']} x {best['catalog_id']}"
        name = name if best["side"] == "buy" else best["catalog_id"]
        assert first[:2] == ["1", name + (" †" if _peaks(best) else "")]
        assert first[3] == fmt_unit_cost(best["cost_per_reference_gpu_hour"]["p50"])
        row = next(line for line in cli if line.split()[:1] == ["1"] and first[1] in line)
        assert first[5] == fmt_grams(best["carbon_per_unit"]["p50"])
        assert first[3] in row and first[5] in row and first[6] in row  # P50, CO2e and price
        assert page.text("compare-carbon") == answer["wording"]["carbon_note"]
        assert page.text("compare-carbon") in " ".join(cli)  # the CLI's sentence, word for word
        peaks = page.by_id("compare-peaks")
        assert peaks.is_displayed() == any(_peaks(o) for o in options[:25])
        if peaks.is_displayed():
            assert page.text("compare-peaks") in cli  # the CLI's footnote, word for word
        page.by_id("compare-show-all").click()
        page.wait(lambda: page.js(rows) == len(options), "every option")
        assert page.by_id("compare-show-all").get_attribute("aria-expanded") == "true"
        page.by_id("compare-show-all").click()
        page.wait(lambda: page.js(rows) == 25, "the 25 cheapest again")

        # Another utilisation, another answer: one request once the typing stops.
        before = page.text("compare-verdict")
        page.collect()
        logged = len(_compare_requests(page))
        sent = page.sent("compare")
        assert sent == logged == page.answered("compare")
        page.keystrokes("compare-utilisation", ["", "1", "10"])
        assert page.settled("compare") == "idle"
        assert page.sent("compare") == sent + 1 == page.answered("compare")
        sentence = _compare_sentence(server, {"utilisation": 0.1})
        assert page.text("compare-verdict") == sentence != before
        page.collect()
        requests = _compare_requests(page)
        assert len(requests) == logged + 1
        assert json.loads(requests[-1]["postData"]) == {"utilisation": 0.1}  # the same request

        # A memory below the API's range: its error beside the field, the answer kept.
        page.type("compare-min-memory-gb", "0.1")
        assert page.settled("compare") == "invalid"
        error = page.by_id("compare-min-memory-gb-error")
        assert error.is_displayed() and "0.5" in error.text and "512" in error.text
        assert page.by_id("compare-min-memory-gb").get_attribute("aria-invalid") == "true"
        assert page.text("compare-verdict") == sentence
        assert page.by_id("compare-utilisation-error").is_displayed() is False
        # A utilisation over 100 %: the page's own error, in per cent; nothing is sent while
        # it stands, not even for a good memory.
        sent = page.sent("compare")
        page.type("compare-utilisation", "150")
        assert page.settled("compare") == "invalid"
        assert "100" in page.text("compare-utilisation-error")
        page.type("compare-min-memory-gb", "24")
        assert page.settled("compare") == "invalid"
        assert page.by_id("compare-min-memory-gb-error").is_displayed() is False
        assert page.sent("compare") == sent
        page.type("compare-utilisation", "10")
        assert page.settled("compare") == "idle"
        assert page.sent("compare") == sent + 1 == page.answered("compare")
        assert page.by_id("compare-min-memory-gb-error").is_displayed() is False
        body = {"utilisation": 0.1, "min_memory_gb": 24}
        assert page.text("compare-verdict") == _compare_sentence(server, body)
        assert "left out by the minimum memory" in page.text("compare-notes")
        errors = page.errors()  # the browser's note of the 422 that refused 0.1 GB
        assert len(errors) == 1 and "/v1/compare" in errors[0] and "422" in errors[0]

        # The latest edit wins: the answer to an edit overtaken while under way is not shown.
        server.hold()
        sent = page.sent("compare")
        page.type("compare-utilisation", "20")
        page.wait(lambda: page.sent("compare") == sent + 1, "the request for 20 %")
        page.type("compare-utilisation", "30")
        page.wait(lambda: page.sent("compare") == sent + 2, "the request for 30 %")
        assert page.state("compare")["busy"] == "true"  # both held by the server
        server.release()
        assert page.settled("compare") == "idle"
        assert page.answered("compare") == sent + 2
        body = {"utilisation": 0.3, "min_memory_gb": 24}
        assert page.text("compare-verdict") == _compare_sentence(server, body)
        assert page.errors() == errors  # the overtaken request was aborted, not refused

        # At 375 px the table scrolls in its box; the page does not scroll sideways.
        page.screenshot("web-compare", 1280)
        page.screenshot("web-compare-phone", 375)
        page.viewport(375, 800)
        assert page.js("return document.documentElement.scrollWidth") <= 375
        box = page.by_id("compare-scroll")
        assert box.get_property("scrollWidth") > box.get_property("clientWidth")
        page.viewport(1280, 900)

        _only_this_origin(page)


def _compare_requests(page: Page) -> list[dict[str, Any]]:
    """The requests to POST /v1/compare the page has sent so far (after ``page.collect()``)."""
    return [
        r["params"]["request"]
        for r in page.requests
        if r["method"] == "Network.requestWillBeSent"
        and r["params"]["request"]["url"].endswith("/v1/compare")
        and r["params"]["request"]["method"] == "POST"
    ]


def _peaks(option: dict[str, Any]) -> bool:
    return any(w["code"] in UNMEASURED_CODES for w in option["warnings"])


def test_page_asks_for_the_api_key(driver, tmp_path):
    with Server(tmp_path, API_KEYS="sesame") as server:
        page = Page(driver, server)
        page.js("sessionStorage.clear()")
        assert page.by_id("auth").is_displayed()
        assert page.text("verdict") == _verdict(server, "scenario", LAB, key="sesame")
        page.wait(lambda: "API key" in page.text("runs-status"), "the runs list to need a key")

        page.type("scenario-buy-gpu-count", "2")
        assert page.settled() == "error"
        assert "API key" in page.text("scenario-status")
        assert "API key" in page.text("api-key-status")

        page.type("api-key", "sesame")
        page.wait(lambda: page.by_id("view-scenario").get_attribute("data-status") == "idle")
        doc = copy.deepcopy(LAB)
        doc["buy"]["gpu_count"] = 2
        assert page.text("verdict") == _verdict(server, "scenario", doc, key="sesame")
        page.by_id("scenario-save").click()
        page.wait(
            lambda: page.js("return document.querySelectorAll('#runs-table tbody tr').length") == 1
        )
        assert server.api("GET", "/v1/runs", key="sesame")[1]["total"] == 1
        # Only the requests made before the key was given were refused.
        refused = [e for e in page.errors() if "401" in e]
        assert refused and all("/v1/" in e for e in refused)
        _only_this_origin(page)


def test_a_run_saved_as_a_job_shows_its_progress_then_its_result(driver, tmp_path):
    # A service answering at most 1,000,000 units of work at once: the lab example (10,000
    # draws) is more, so each edit is refused, saying that "Save run" runs it as a job.
    with Server(tmp_path, MAX_WORK=1_000_000) as server:
        try:
            page = Page(driver, server)
            page.type("scenario-buy-gpu-count", "2")
            assert page.settled() == "invalid"
            assert "Save run" in page.text("scenario-status")
            assert "as a job" in page.text("scenario-status")
            page.js(
                "const box = document.getElementById('scenario-job');"
                "window.jobSeen = [];"
                "new MutationObserver(() => window.jobSeen.push([box.hidden,"
                " box.querySelector('progress').value, box.textContent.trim()]))"
                ".observe(box, {attributes: true, subtree: true, childList: true,"
                " characterData: true});"
            )
            page.by_id("scenario-save").click()
            view = page.by_id("view-scenario")
            page.wait(lambda: view.get_attribute("data-job") == "done", "the job to be done")
            page.wait(lambda: "Saved as run" in page.text("scenario-action-status"))
            doc = copy.deepcopy(LAB)
            doc["buy"]["gpu_count"] = 2
            expected = to_dict(scenarios.evaluate(doc, catalog=get_catalog(server.app)))
            assert page.text("verdict") == expected["verdict"]
            assert page.state("scenario")["status"] == "idle"
            seen = page.js("return window.jobSeen")
            shown = [words for hidden, _, words in seen if not hidden]
            assert shown and all(w.startswith("Run ") for w in shown), seen
            assert any(w.endswith(("queued", "%")) for w in shown), seen
            assert page.by_id("scenario-job").get_attribute("hidden") is not None  # gone again
            run_id = page.text("scenario-action-status").split("run ")[1].rstrip(".")
            status, run = server.api("GET", f"/v1/runs/{run_id}")
            assert status == 200 and run["status"] == "done"
            assert run["result"]["verdict"] == expected["verdict"]
            page.wait(
                lambda: (
                    page.js("return document.querySelectorAll('#runs-table tbody tr').length") == 1
                )
            )
            assert all("422" in e for e in page.errors())  # only the refused edit
        finally:
            server.app.extensions["costmodel"]["jobs"].close()


# --- what drives the answer ------------------------------------------------------------------

API_EXAMPLE = "inference-8b-rtx6000ada-vs-api"
#: Most bars a tornado chart draws, and most inputs the value-of-information table names.
TORNADO_BARS = 8
VOI_INPUTS = 5


def _apart(a: list[float], b: list[float]) -> bool:
    """Boxes [x0, y0, x1, y1] that do not intersect (touching is apart)."""
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


def _tornado_bars(tornado: dict[str, Any]) -> list[dict[str, Any]]:
    """The bars a tornado chart draws: its inputs by the swing of the gap they draw
    (|gap_at_high - gap_at_low|), largest first, ties in the result's order; at most 8."""
    swing = lambda b: abs(b["gap_at_high"] - b["gap_at_low"])  # noqa: E731
    return sorted(tornado["inputs"], key=lambda b: -swing(b))[:TORNADO_BARS]


def _tornado_drawn(page: Page, chart: str, tornado: dict[str, Any]) -> None:
    """Chart ``chart`` draws ``tornado``: one bar per input in order, from its gap at the P10
    to its gap at the P90 on one linear scale, with the median's line on it; coloured by what
    the P90 does to buying; labelled with the input and its P10 -> P90 as the reports write
    them. Every text of the chart (labels, ticks, the axis title) lies inside it, clear of
    every other, and no label touches a bar (boxes as the browser lays them out)."""
    drawn = page.js(
        """const svg = document.querySelector(`#${arguments[0]} svg`);
        const box = (n) => {
          const b = n.getBBox();
          return [b.x, b.y, b.x + b.width, b.y + b.height];
        };
        const all = (selector) => [...svg.querySelectorAll(selector)];
        return {bars: all('rect.tornado-bar')
                  .map((r) => [r.dataset.input, r.getAttribute('class'), box(r)]),
                labels: all('text.tornado-label').map((t) => [t.dataset.input, t.textContent]),
                texts: all('text').filter((t) => t.textContent)
                  .map((t) => [t.textContent, box(t), t.classList.contains('tornado-label')]),
                median: Number(svg.querySelector('line.tornado-median').getAttribute('x1')),
                frame: [0, 0, svg.width.baseVal.value, svg.height.baseVal.value]};""",
        chart,
    )
    bars = _tornado_bars(tornado)
    assert [b[0] for b in drawn["bars"]] == [b["input"] for b in bars]
    for (name, cls, _), bar in zip(drawn["bars"], bars, strict=True):
        way = (
            "dearer"
            if bar["gap_at_high"] > bar["gap_at_low"]
            else "cheaper"
            if bar["gap_at_high"] < bar["gap_at_low"]
            else "flat"
        )
        assert way in cls.split(), (name, cls)
        lines = [text for input_, text in drawn["labels"] if input_ == name]
        label = f"{name}: {fmt_number(bar['low'])} \u2192 {fmt_number(bar['high'])}"
        assert "".join(lines).replace(" ", "") == label.replace(" ", "")
    # The scale, from the widest bar: every bar's ends and the median's line lie on it [px].
    ends = lambda b: sorted((b["gap_at_low"], b["gap_at_high"]))  # noqa: E731
    (lo, hi), (left, _, right, _) = ends(bars[0]), drawn["bars"][0][2]
    k, at = (right - left) / (hi - lo), lo
    x = lambda v: left + k * (v - at)  # noqa: E731
    assert abs(drawn["median"] - x(tornado["gap_at_median"])) < 0.5
    for (name, _, box), bar in zip(drawn["bars"], bars, strict=True):
        lo, hi = ends(bar)
        if x(hi) - x(lo) >= 2:  # a narrower bar is drawn 2 px wide about its place
            assert abs(box[0] - x(lo)) < 0.5 and abs(box[2] - x(hi)) < 0.5, name
        assert abs((box[0] + box[2]) / 2 - x((lo + hi) / 2)) < 0.5, name
    frame = drawn["frame"]
    texts = drawn["texts"]
    for i, (text, box, is_label) in enumerate(texts):
        assert frame[0] <= box[0] and box[2] <= frame[2], (text, box, frame)
        assert frame[1] <= box[1] and box[3] <= frame[3], (text, box, frame)
        assert all(_apart(box, other) for _, other, _ in texts[i + 1 :]), (text, texts)
        if is_label:
            assert all(_apart(box, bar) for _, _, bar in drawn["bars"]), (text, box)


def _rivals(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(words, {tornado, value_of_information}) of each side buying is weighed against that
    the result has them for: renting, then the API."""
    sides = [("renting", result)] + [
        ("the API", r) for r in result.get("rivals") or () if r["versus"] == "api"
    ]
    return [(words, side) for words, side in sides if side.get("value_of_information")]


def _voi_table(result: dict[str, Any]) -> dict[str, list[Any]]:
    """The value-of-information table the page should show: a column per side with its EVPI,
    then the inputs worth at least 1 % of a side's EVPI by their largest EVPPI (at most 5),
    every figure formatted as the reports write money."""
    sides = [(words, side["value_of_information"]) for words, side in _rivals(result)]
    worth: dict[str, float] = {}
    for _, voi in sides:
        for v in voi["by_input"]:
            if v["evppi"] > 0 and v["evppi"] >= 0.01 * voi["evpi"]:
                worth[v["input"]] = max(worth.get(v["input"], 0.0), v["evppi"])
    names = sorted(worth, key=lambda n: -worth[n])
    if "wording" in result:
        assert names == result["wording"]["worth_naming"]  # the server names them by this rule
    else:  # a run stored before the server wrote its sentences: the inputs are not named
        names = []
    names = names[:VOI_INPUTS]
    evppi = lambda voi, n: next(v["evppi"] for v in voi["by_input"] if v["input"] == n)  # noqa: E731
    return {
        "heads": ["Uncertain input", *(f"Against {words}" for words, _ in sides)],
        "rows": [
            ["All of them (EVPI)", *(fmt_usd(voi["evpi"]) for _, voi in sides)],
            *([n, *(fmt_usd(evppi(voi, n)) for _, voi in sides)] for n in names),
        ],
    }


def _payback_drawn(page: Page, result: dict[str, Any]) -> None:
    """The payback chart: a band and a line per side of the cumulative cost by month, and the
    payback P50 (against renting, and against the API) where it falls within the horizon, at
    its month on the axis from month 0 to the horizon."""
    cum = result["cumulative_cost"]
    i = result["utilisation"].index(cum["utilisation"])
    paybacks = {"be-line": result["payback_months"]["p50"][i]}
    if cum.get("api"):
        paybacks["be-line api"] = result["payback_vs_api_months"]["p50"][i]
    drawn = page.js(
        """const svg = document.querySelector('#scenario-payback svg');
        const axes = [...svg.querySelectorAll('line.axis')].map((l) => l.getBBox());
        return {bands: svg.querySelectorAll('polygon.band').length,
                lines: svg.querySelectorAll('polyline.line').length,
                left: Math.min(...axes.map((b) => b.x)),
                right: Math.max(...axes.map((b) => b.x + b.width)),
                paybacks: [...svg.querySelectorAll('line.be-line')].map((l) =>
                  [l.getAttribute('class'), Number(l.getAttribute('x1'))]),
                labels: [...svg.querySelectorAll('text.be-label')].map((t) => t.textContent),
                label: svg.getAttribute('aria-label')};"""
    )
    sides = 3 if cum.get("api") else 2
    assert drawn["bands"] == drawn["lines"] == sides
    horizon = cum["months"][-1]
    expected = {cls: m for cls, m in paybacks.items() if m is not None and m <= horizon}
    left, span = drawn["left"], drawn["right"] - drawn["left"]
    at = {c: pytest.approx(left + m / horizon * span, abs=0.6) for c, m in expected.items()}
    assert at == dict(drawn["paybacks"])
    words = {"be-line": "payback", "be-line api": "vs API"}
    assert drawn["labels"] == [f"{words[c]} {fmt_months(m)} months" for c, m in expected.items()]
    assert f"payback P50 {fmt_months(paybacks['be-line'])}" in drawn["label"]


def _voi_shown(page: Page) -> dict[str, list[Any]]:
    return page.js(
        """const t = document.getElementById('scenario-voi');
        return {heads: [...t.querySelectorAll('thead th')].map((h) => h.textContent),
                rows: [...t.querySelectorAll('tbody tr')]
                  .map((r) => [...r.children].map((c) => c.textContent))};"""
    )


def _drivers_shown(page: Page, result: dict[str, Any]) -> None:
    """The "what drives the answer" section shows ``result``'s tornados (against renting, and
    against the API with one) at 1280 and at 375 px, and its value of information; a part the
    result has no figures for is hidden."""
    rivals = dict(_rivals(result))
    for width in (1280, 375):
        page.viewport(width, 800)
        page.charts_drawn()
        for chart, words in (("scenario-tornado", "renting"), ("scenario-tornado-api", "the API")):
            side = rivals.get(words) or {}
            shown = bool((side.get("tornado") or {}).get("inputs"))
            assert page.shown(chart) is shown, (chart, width)
            if shown:
                _tornado_drawn(page, chart, side["tornado"])
                caption = page.text(f"{chart}-caption")
                at = fmt_utilisation(side["tornado"]["utilisation"])
                assert f" at {at} utilisation" in caption
                assert f"({fmt_usd(side['tornado']['gap_at_median'])}; break-even" in caption
        assert page.js("return document.documentElement.scrollWidth") <= width
    page.viewport(1280, 900)
    assert page.shown("scenario-voi") is bool(rivals)
    if rivals:
        assert _voi_shown(page) == _voi_table(result)


def _rank_correlations(result: dict[str, Any]) -> dict[str, list[Any]]:
    """The rank-correlation table the page should show: with a hosted API the 8 inputs most
    correlated with either gap, by the larger |rho|, a column for each gap."""
    rho = lambda x: f"{'+' if x > 0 else '-' if x < 0 else ''}{abs(x):.2f}"  # noqa: E731
    rent = {d["input"]: d["spearman"] for d in result["sensitivity"]["inputs"]}
    if not result.get("rivals"):
        top = [(n, r) for n, r in rent.items() if r][:8]
        words = {True: "makes buying dearer", False: "makes buying cheaper"}
        return {
            "heads": ["Input", "Spearman \u03c1", "A higher value\u2026"],
            "rows": [[n, rho(r), words[r > 0]] for n, r in top],
        }
    api = {d["input"]: d["spearman"] for d in result["rivals"][0]["sensitivity"]["inputs"]}
    strength = {n: max(abs(rent.get(n, 0)), abs(api.get(n, 0))) for n in {*rent, *api}}
    top = sorted((n for n in strength if strength[n] > 0), key=lambda n: (-strength[n], n))[:8]
    return {
        "heads": ["Input", "\u03c1 with buy \u2212 rent", "\u03c1 with buy \u2212 API",
                  "Strongest with"],
        "rows": [
            [n, rho(rent.get(n, 0)), rho(api.get(n, 0)),
             "the API" if abs(api.get(n, 0)) > abs(rent.get(n, 0)) else "renting"]
            for n in top
        ],
    }  # fmt: skip


def _table_shown(page: Page, table: str) -> dict[str, list[Any]]:
    return page.js(
        f"""const t = document.getElementById('{table}');"""
        """return {heads: [...t.querySelectorAll('thead th')].map((h) => h.textContent),
                rows: [...t.querySelectorAll('tbody tr')]
                  .map((r) => [...r.children].map((c) => c.textContent))};"""
    )


def test_what_drives_the_answer_in_chromium(driver, tmp_path):
    """The tornado of buying against renting (and against the API) and the value of
    information, drawn from the answer; a run stored before they existed shows neither."""
    with Server(tmp_path) as server:
        page = Page(driver, server)
        status, lab = server.api("POST", "/v1/evaluate", LAB)
        assert status == 200 and page.text("verdict") == lab["verdict"]
        assert len(lab["tornado"]["inputs"]) > TORNADO_BARS  # the chart shows the 8 largest
        assert _tornado_bars(lab["tornado"])[0] != lab["tornado"]["inputs"][0]  # by its swing
        _drivers_shown(page, lab)
        _payback_drawn(page, lab)
        assert _table_shown(page, "scenario-drivers") == _rank_correlations(lab)
        assert "the 8 of 12 uncertain inputs" in page.text("scenario-tornado-caption")
        assert _voi_shown(page)["rows"] == [["All of them (EVPI)", "$0.00"]]  # no study helps
        # At the narrowest width a chart is drawn at (280 px) the longer labels take two lines.
        page.d.execute_async_script(
            """const [tornado, done] = arguments;
            import("/assets/js/charts.js").then((charts) => {
              const slot = document.createElement("div");
              slot.id = "tornado-narrowest";
              slot.append(charts.tornadoChart(tornado, "rent", 280));
              document.body.append(slot);
              done();
            });""",
            lab["tornado"],
        )
        _tornado_drawn(page, "tornado-narrowest", lab["tornado"])
        lines = "return document.querySelectorAll('#tornado-narrowest .tornado-label').length"
        assert page.js(lines) > TORNADO_BARS
        page.js("document.getElementById('tornado-narrowest').remove()")

        # With a hosted API: a second tornado and a second column, against the API.
        page.choose("scenario-example", API_EXAMPLE)
        assert page.settled() == "idle"
        status, result = server.api("POST", "/v1/evaluate", page.document())
        assert status == 200 and page.text("verdict") == result["verdict"]
        api = result["rivals"][0]["value_of_information"]
        assert api["evpi"] > 0 and len(_voi_table(result)["rows"]) > 1
        _drivers_shown(page, result)
        # the rank correlations with both gaps, an input that moves only the API's among them
        shown = _table_shown(page, "scenario-drivers")
        assert shown == _rank_correlations(result) and len(shown["heads"]) == 4
        assert any(row[-1] == "the API" for row in shown["rows"])
        page.screenshot("web-tornado-phone", 375)

        # Runs stored before the tornado and the value of information existed, or before
        # the figures against the API did: the parts without figures are hidden.
        store = get_store(server.app)
        older = {k: v for k, v in result.items() if k not in ("rivals", "wording")}
        oldest = {k: v for k, v in older.items() if k not in ("tornado", "value_of_information")}
        for stored in (oldest, older):
            run = store.add(
                scenario=page.document(),
                result=stored,
                seed=result["seed"],
                samples=result["samples"],
                catalog_version=result["catalog"]["version"],
                name=f"stored without {len(result) - len(stored)} keys",
            )
            page.by_id("runs-refresh").click()
            row = f"#runs-table tr[data-run='{run.id}']"
            seen = f'return document.querySelector("{row}") !== null'
            page.wait(lambda seen=seen: page.js(seen), "the stored run")
            page.js(f'document.querySelector("{row} button").click()')  # Open
            opened = f"Opened run {run.name}."
            page.wait(lambda opened=opened: page.text("runs-status") == opened, "the run")
            _drivers_shown(page, stored)
            assert page.shown("scenario-drivers")  # the rank correlations stay
        assert _voi_shown(page)["heads"] == ["Uncertain input", "Against renting"]  # the last
        assert page.errors() == []
        _only_this_origin(page)


# --- carbon ----------------------------------------------------------------------------------


def _emissions_rows(page: Page) -> list[list[str]]:
    return page.js(
        "return [...document.querySelectorAll('#scenario-carbon tbody tr')]"
        ".map((r) => [...r.children].map((c) => c.textContent))"
    )


def _emissions_of(result: dict[str, Any]) -> list[list[str]]:
    """The emissions table the page should show for ``result``: each side's P50 and P10-P90
    [t CO2e] and P50 per unit of work at the report utilisation, "unknown" for an API
    without emission figures."""
    c = result["carbon"]
    i = result["utilisation"].index(result["cumulative_cost"]["utilisation"])
    rows = []
    for side, head in (("buy", "Buy"), ("rent", "Rent"), ("api", "API")):
        if side in c:
            band = f"{fmt_tonnes(c[side]['p10'][i])} to {fmt_tonnes(c[side]['p90'][i])}"
            per = fmt_grams(c["per_unit"][side]["p50"][i])
            rows.append([head, fmt_tonnes(c[side]["p50"][i]), band, per])
        elif side in c["unknown"]:
            rows.append([head, "unknown", "unknown", "unknown"])
    return rows


def _shows_emissions(page: Page, server: Server) -> dict[str, Any]:
    """The page's emissions table is the API's answer to the page's document; that answer."""
    status, result = server.api("POST", "/v1/evaluate", page.document())
    assert status == 200, result
    assert _emissions_rows(page) == _emissions_of(result)
    unit = unit_of(result["carbon"]["per_unit"]["unit"]).words
    heads = page.js(
        "return [...document.querySelectorAll('#scenario-carbon thead th')]"
        ".map((h) => h.textContent)"
    )
    assert heads == ["Side", "CO2e P50", "P10\u2013P90", f"CO2e per {unit} P50"]
    return result


def test_carbon_in_chromium(driver, tmp_path):
    """The emissions section follows each edit; the owned grid is a catalog grid or a value of
    one's own; a carbon price changes the verdict; an API without emission figures is
    "unknown" with the server's advice, and counted once given."""
    with Server(tmp_path) as server:
        page = Page(driver, server)
        grids = server.api("GET", "/v1/catalog/grids")[1]["items"]
        page.wait(
            lambda: (
                page.js("return document.getElementById('scenario-buy-grid').options.length")
                == len(grids) + 2
            ),  # the default, every grid, a value of one's own
            "the grids",
        )
        assert page.shown("scenario-carbon")
        at = "return document.querySelector('[data-role=\"carbon-at\"]').textContent"
        assert page.js(at) == "50 %"  # the report utilisation, as the CLI's
        _shows_emissions(page, server)
        select = "return document.getElementById(arguments[0]).selectedOptions[0].textContent"
        assert page.js(select, "scenario-buy-grid") == "default: US"
        assert page.shown("scenario-buy-grid-mode") is False

        # A catalog grid: Germany's.
        doc = copy.deepcopy(LAB)
        before = _emissions_rows(page)
        page.choose("scenario-buy-grid", "DE")
        assert page.settled() == "idle"
        doc["buy"]["grid"] = "DE"
        assert page.document() == doc
        germany = _shows_emissions(page, server)
        assert _emissions_rows(page)[0] != before[0] and _emissions_rows(page)[1] == before[1]

        # A value of one's own starts at the grid's intensity (the same answer), then edits.
        page.choose("scenario-buy-grid", "__value__")
        assert page.settled() == "idle"
        de = next(g for g in grids if g["id"] == "DE")["g_co2e_per_kwh"]
        doc["buy"]["grid"] = de
        assert page.document() == doc and page.shown("scenario-buy-grid-mode")
        assert page.by_id("scenario-buy-grid-mode").get_attribute("value") == f"{de:g}"
        assert _emissions_rows(page) == _emissions_of(germany)
        page.type("scenario-buy-grid-low", "50")
        page.type("scenario-buy-grid-high", "150")
        page.type("scenario-buy-grid-mode", "100")
        assert page.settled() == "idle"
        doc["buy"]["grid"] = {"dist": "triangular", "low": 50, "mode": 100, "high": 150}
        assert page.document() == doc
        _shows_emissions(page, server)
        page.type("scenario-buy-grid-low", "")
        page.type("scenario-buy-grid-high", "")
        assert page.settled() == "idle" and page.document()["buy"]["grid"] == 100
        page.type("scenario-buy-grid-mode", "3000")  # above the format's 2,000 g/kWh
        assert page.settled() == "invalid"
        assert "2000" in page.text("scenario-buy-grid-error").replace(",", "")
        # Emptied (high is empty already): the default grid again, and the fields hidden, which
        # a wait after the last edit shorter than the typing shows between the two edits too.
        for part in ("low", "mode"):
            page.type(f"scenario-buy-grid-{part}", "")
        assert page.settled() == "idle"
        del doc["buy"]["grid"]
        assert page.document() == doc
        assert page.js(select, "scenario-buy-grid") == "default: US"
        assert page.shown("scenario-buy-grid-mode") is False

        # The rented side's grid defaults to its region's; a carbon price moves the verdict.
        region = page.js(select, "scenario-rent-grid")
        assert region.startswith("the region's: ") and region.split(": ")[1] in {
            g["id"] for g in grids
        }
        before = page.text("verdict")
        page.type("scenario-carbon-usd-per-tonne-mode", "5000")
        assert page.settled() == "idle"
        doc["carbon"] = {"usd_per_tonne": 5000}
        assert page.document() == doc
        assert page.text("verdict") == _verdict(server, "scenario", doc) != before
        page.type("scenario-carbon-usd-per-tonne-mode", "")
        assert page.settled() == "idle"
        del doc["carbon"]
        assert page.document() == doc

        # A hosted API without emission figures: "unknown", and the server's advice.
        page.choose("scenario-example", "inference-8b-rtx6000ada-vs-api")
        assert page.settled() == "idle"
        result = _shows_emissions(page, server)
        assert _emissions_rows(page)[-1] == ["API", "unknown", "unknown", "unknown"]
        advice = next(w for w in result["warnings"] if w["code"] == "api_carbon_unknown")
        assert advice["message"] in page.text("view-scenario")
        shown = page.js(
            "return [...document.querySelectorAll('#view-scenario [data-role=\"warnings\"] li')]"
            ".map((li) => li.textContent)"
        )
        assert any(advice["message"] in w for w in shown)
        page.type("scenario-api-g-co2e-per-mtok-mode", "400")
        assert page.settled() == "idle"
        assert page.document()["api"]["g_co2e_per_mtok"] == 400
        result = _shows_emissions(page, server)
        assert _emissions_rows(page)[-1][1] == fmt_tonnes(
            result["carbon"]["api"]["p50"][
                result["utilisation"].index(result["cumulative_cost"]["utilisation"])
            ]
        )
        assert not any(w["code"] == "api_carbon_unknown" for w in result["warnings"])

        page.screenshot("web-carbon-phone", 375)
        page.viewport(375, 800)
        assert page.js("return document.documentElement.scrollWidth") <= 375
        page.viewport(1280, 900)
        assert all("/v1/evaluate" in e and "422" in e for e in page.errors())
        _only_this_origin(page)


def test_inference_plan_in_chromium(driver, tmp_path):
    """A plan of inference work built in the form: the kind of work switches its fields, an
    API takes the burst in place of the instances (which come back when it is left), and the
    plan is evaluated; switching back gives the training plan."""
    with Server(tmp_path) as server:
        page = Page(driver, server)
        page.by_id("tab-plan").click()
        assert page.settled("plan") == "idle"
        page.wait(
            lambda: (
                page.js("return document.getElementById('plan-burst-api-model').options.length")
                > 10
            ),
            "the catalog",
        )
        training = (
            "plan-demand-reference-gpu-hours-per-month-field",
            "plan-workload-reference-gpu-field",
        )
        inference = (
            "plan-demand-million-tokens-per-month-field",
            "plan-workload-model-field",
            "plan-burst-api-model-field",
        )
        assert [page.shown(i) for i in training + inference] == [True] * 2 + [False] * 3
        assert page.shown("plan-demand-peak-to-mean-field")

        page.choose("plan-workload-kind", "inference")
        assert page.settled("plan") == "invalid"
        assert [page.shown(i) for i in training + inference] == [False] * 2 + [True] * 3
        assert "required" in page.text("plan-demand-million-tokens-per-month-error")
        doc = page.document("plan")
        assert "reference_gpu_hours_per_month" not in doc["demand"]
        assert doc["workload"]["kind"] == "inference" and doc["workload"]["model"]

        page.choose("plan-workload-model", "llama-3.3-70b")
        page.choose("plan-workload-precision", "fp8")
        page.choose("plan-own-gpu", "h100-sxm5-80gb")
        page.type("plan-own-gpu-count", "8")
        for part, text in (("low", ""), ("high", ""), ("mode", "25000")):
            page.type(f"plan-own-gpu-price-usd-{part}", text)
        for part, text in (("low", "15000"), ("high", "28000"), ("mode", "20000")):
            page.type(f"plan-demand-million-tokens-per-month-{part}", text)
        page.type("plan-demand-peak-to-mean-mode", "1.5")
        page.choose("plan-reserve-instance", "")
        page.choose("plan-burst-api-model", OFFER)
        assert page.settled("plan") == "idle"
        doc = page.document("plan")
        assert doc["burst"] == {"api": {"model": OFFER}} and "reserve" not in doc
        assert doc["demand"]["million_tokens_per_month"] == {
            "dist": "triangular",
            "low": 15000,
            "mode": 20000,
            "high": 28000,
        }
        assert doc["demand"]["peak_to_mean"] == 1.5
        assert doc["workload"]["model"] == "llama-3.3-70b"
        assert page.text("plan-verdict") == _verdict(server, "plan", doc)

        # No API: the burst instance comes back; training again: the plan's demand too.
        page.choose("plan-burst-api-model", "")
        # no serving rows of the model on an A10G: the burst serves at the estimate
        assert page.settled("plan") == "idle"
        assert page.document("plan")["burst"] == PLAN["burst"]
        assert not page.by_id("plan-burst-tokens-per-s-per-gpu-error").is_displayed()
        page.choose("plan-burst-api-model", OFFER)
        assert page.settled("plan") == "idle"
        page.choose("plan-workload-kind", "training")
        page.settled("plan")
        back = page.document("plan")
        assert back["burst"] == PLAN["burst"] and back["demand"]["reference_gpu_hours_per_month"]
        assert "million_tokens_per_month" not in back["demand"]
        page.choose("plan-workload-kind", "inference")
        assert page.settled("plan") == "idle"
        assert page.document("plan") == doc

        # Choosing a burst instance leaves the API: its block goes, the instance's keys put
        # aside come back with the new instance, and the server takes the plan.
        page.choose("plan-burst-instance", "aws/p5.48xlarge")
        assert page.settled("plan") == "idle"
        doc["burst"] = {**PLAN["burst"], "instance": "aws/p5.48xlarge"}
        assert page.document("plan") == doc
        assert page.text("plan-verdict") == _verdict(server, "plan", doc)
        # ... and so from an example whose burst is the API alone (nothing put aside).
        page.choose("plan-example", "plan-inference-70b-api-burst")
        assert page.settled("plan") == "idle"
        page.choose("plan-burst-instance", "gcp/a3-highgpu-8g")
        assert page.settled("plan") == "idle"
        doc = page.document("plan")
        assert doc["burst"] == {"instance": "gcp/a3-highgpu-8g"}
        assert page.text("plan-verdict") == _verdict(server, "plan", doc)
        _only_this_origin(page)


# --- carbon in a plan ------------------------------------------------------------------------

PLAN_HEADS = [
    "Servers + reserved",
    "Cost mean",
    "Cost P50",
    "Cost P90",
    "CVaR95",
    "Owned share",
    "P(cheaper than cloud)",
]


def _plan_table(page: Page) -> dict[str, Any]:
    """The plan view's candidates table: its headers, its rows' cells and classes."""
    return page.js(
        """const t = document.getElementById('plan-levels');
        return {heads: [...t.querySelectorAll('thead th')].map((h) => h.textContent),
                rows: [...t.querySelectorAll('tbody tr')]
                  .map((r) => [...r.children].map((c) => c.textContent)),
                classes: [...t.querySelectorAll('tbody tr')].map((r) => r.className)};"""
    )


def _plan_figures(page: Page) -> dict[str, str]:
    pairs = page.js(
        "return [...document.querySelectorAll('#plan-figures dt')]"
        ".map((dt) => [dt.textContent, dt.nextElementSibling.textContent])"
    )
    return dict(pairs)


def _shows_plan_carbon(page: Page, server: Server) -> dict[str, Any]:
    """The plan view shows the API's answer to the page's document: the carbon column (each
    candidate's mean emissions, "unknown" when unknown), which frontier each row is on, the
    carbon frontier's rows and rings, the best plan's emissions; that answer."""
    status, result = server.api("POST", "/v1/plans", page.document("plan"))
    assert status == 200, result
    assert page.text("plan-verdict") == result["verdict"]
    key = lambda c: f"{c['servers']}+{c['instances']}"  # noqa: E731
    cost = {key(c) for c in result["frontier"]}
    green = {key(c) for c in result["carbon_frontier"] or ()}
    by_key = {key(c): c for c in result["candidates"]}
    table = _plan_table(page)
    assert table["heads"] == [*PLAN_HEADS, "CO2e mean", "Frontier"]
    shown = [row[0] for row in table["rows"]]
    assert set(shown) == cost | green | {key(result["best"])} and len(shown) == len(set(shown))
    for row, cls in zip(table["rows"], table["classes"], strict=True):
        c = by_key[row[0]]
        assert row[1] == fmt_usd(c["cost"]["mean"])
        assert row[7] == ("unknown" if c["carbon"] is None else fmt_tonnes(c["carbon"]["mean"]))
        on = [name for name, keys in (("cost", cost), ("carbon", green)) if row[0] in keys]
        assert row[8] == ", ".join(on)
        assert ("green" in cls.split()) == (row[0] in green)
        assert ("best" in cls.split()) == (row[0] == key(result["best"]))
    rings = "return document.querySelectorAll('#plan-chart circle.carbon-frontier').length"
    assert page.js(rings) == len(green)
    legend = page.js(
        "return document.querySelector('#view-plan li[data-role=\"carbon-frontier\"]').hidden"
    )
    assert legend is not bool(green)
    figures, best = _plan_figures(page), result["best"]["carbon"]
    if best is None:
        assert figures["CO2e"] == "unknown" and "CO2e mean" not in figures
    else:
        band = f"P10\u2013P90: {fmt_tonnes(best['p10'])} to {fmt_tonnes(best['p90'])}"
        assert figures["CO2e mean"] == fmt_tonnes(best["mean"])
        assert figures["CO2e P50"] == f"{fmt_tonnes(best['p50'])} ({band})"
        assert figures["Carbon frontier"] == (
            f"{len(green)} of {len(result['candidates'])} candidates"
        )
    return result


def test_plan_carbon_in_chromium(driver, tmp_path):
    """A plan counts carbon once the form gives its grid: the candidates table gains the carbon
    column the API answers and marks the carbon frontier, as the chart rings it (labels clear,
    at 1280 and 375 px); the grid's change and a carbon price are keys of the plan, emptied
    ones absent; an API burst without emission figures makes them "unknown" with the
    server's advice, and counted once given."""
    with Server(tmp_path) as server:
        page = Page(driver, server)
        page.by_id("tab-plan").click()
        assert page.settled("plan") == "idle"
        grids = server.api("GET", "/v1/catalog/grids")[1]["items"]
        page.wait(
            lambda: (
                page.js("return document.getElementById('plan-own-grid').options.length")
                == len(grids) + 2
            ),
            "the grids",
        )
        # No carbon key: no carbon column, no ring, the API-burst emissions field hidden.
        assert _plan_table(page)["heads"] == PLAN_HEADS
        assert (
            page.js("return document.querySelectorAll('#plan-chart .carbon-frontier').length") == 0
        )
        assert not page.shown("plan-burst-api-g-co2e-per-mtok-field")

        page.choose("plan-own-grid", "DE")
        assert page.settled("plan") == "idle"
        doc = copy.deepcopy(PLAN)
        doc["own"]["grid"] = "DE"
        assert page.document("plan") == doc
        result = _shows_plan_carbon(page, server)
        assert len(result["carbon_frontier"]) > 1  # some mixes trade cost for carbon
        _labels_clear(page, key := f"{result['best']['servers']}+{result['best']['instances']}")
        page.viewport(375, 800)
        page.charts_drawn()
        _labels_clear(page, key)
        assert page.js("return document.documentElement.scrollWidth") <= 375
        page.viewport(1280, 900)
        page.screenshot("web-plan-carbon", 1280)
        page.screenshot("web-plan-carbon-phone", 375)

        # The grid's change and a carbon price: keys of the plan; a price moves the verdict.
        page.type("plan-own-grid-annual-change-mode", "-0.03")
        assert page.settled("plan") == "idle"
        doc["own"]["grid_annual_change"] = -0.03
        assert page.document("plan") == doc
        before = _shows_plan_carbon(page, server)["verdict"]
        page.type("plan-carbon-usd-per-tonne-mode", "5000")
        assert page.settled("plan") == "idle"
        doc["carbon"] = {"usd_per_tonne": 5000}
        assert page.document("plan") == doc
        assert _shows_plan_carbon(page, server)["verdict"] != before
        # Emptied, each is absent: the plan counts no carbon again.
        page.type("plan-carbon-usd-per-tonne-mode", "")
        page.type("plan-own-grid-annual-change-mode", "")
        page.choose("plan-own-grid", "")
        assert page.settled("plan") == "idle"
        assert page.document("plan") == PLAN
        assert _plan_table(page)["heads"] == PLAN_HEADS

        # An API burst without emission figures: "unknown", never 0, and the server's advice.
        page.choose("plan-example", "plan-inference-70b-api-burst")
        assert page.settled("plan") == "idle"
        page.choose("plan-own-grid", "FR")
        assert page.settled("plan") == "idle"
        assert page.shown("plan-burst-api-g-co2e-per-mtok-field")
        result = _shows_plan_carbon(page, server)
        assert result["carbon_frontier"] is None and result["carbon_unknown"] == ["burst.api"]
        assert {row[7] for row in _plan_table(page)["rows"]} == {"unknown"}
        advice = next(w for w in result["warnings"] if w["code"] == "api_carbon_unknown")
        shown = page.js(
            "return [...document.querySelectorAll('#view-plan [data-role=\"warnings\"] li')]"
            ".map((li) => li.textContent)"
        )
        assert any(advice["message"] in w for w in shown)
        page.type("plan-burst-api-g-co2e-per-mtok-mode", "400")
        assert page.settled("plan") == "idle"
        assert page.document("plan")["burst"]["api"]["g_co2e_per_mtok"] == 400
        result = _shows_plan_carbon(page, server)
        assert result["carbon_frontier"] and not result["carbon_unknown"]
        assert "unknown" not in {row[7] for row in _plan_table(page)["rows"]}
        # Back to the instance: the API's keys go with it, and so does its emissions field.
        page.choose("plan-burst-api-model", "")
        page.settled("plan")
        assert not page.shown("plan-burst-api-g-co2e-per-mtok-field")
        assert "api" not in page.document("plan")["burst"]

        page.viewport(375, 800)
        assert page.js("return document.documentElement.scrollWidth") <= 375
        page.viewport(1280, 900)
        _only_this_origin(page)


# --- a plan that adds servers later ----------------------------------------------------------


def test_staged_plan_in_chromium(driver, tmp_path):
    """The plan form edits own.add (triggers typed as "0.8, 1", a bad item refused at its
    field), and the plan view shows the best plan's later purchase, its first month of
    service, what staging saves, and the candidates' servers as "3 + 2 at 100 %"."""
    with Server(tmp_path) as server:
        page = Page(driver, server)
        page.by_id("tab-plan").click()
        assert page.settled("plan") == "idle"
        page.choose("plan-example", "plan-staged-growth")
        assert page.settled("plan") == "idle"
        doc = page.document("plan")
        assert page.by_id("plan-own-add-when-demand-above").get_attribute("value") == "0.8, 1"
        status, result = server.api("POST", "/v1/plans", doc)
        assert status == 200, result
        assert page.text("plan-verdict") == result["verdict"]
        figures, saving = _plan_figures(page), result["staging_saving"]
        assert figures["Best plan"] == "3 + 2 servers at 100 %, 0 reserved"
        assert figures["Servers added later"] == (
            "2, when the work passes 100 % of the first servers' capacity"
        )
        assert figures["First month of service"] == (
            "month 22 in the median draw (P10\u2013P90: month 22 to month 22)"
        )
        assert figures["Draws that never add them"] == fmt_share(0.0)
        assert figures["Staging saves"].startswith(f"{fmt_usd(saving['mean'])} mean")
        table = _plan_table(page)
        assert table["heads"][:2] == ["Servers", "Reserved"]
        rows = zip(table["rows"], table["classes"], strict=True)
        best = next(row for row, cls in rows if "best" in cls)
        assert best[:3] == ["3 + 2 at 100 %", "0", fmt_usd(result["best"]["cost"]["mean"])]
        page.screenshot("web-plan-staged", 1280)

        # The triggers as a list; a bad item is refused at its field, the document unchanged.
        page.type("plan-own-add-when-demand-above", "0.9, 1.1")
        assert page.settled("plan") == "idle"
        assert page.document("plan")["own"]["add"]["when_demand_above"] == [0.9, 1.1]
        page.type("plan-own-add-when-demand-above", "0.9, x")
        assert "is not a number" in page.text("plan-own-add-when-demand-above-error")
        assert page.document("plan")["own"]["add"]["when_demand_above"] == [0.9, 1.1]
        page.type("plan-own-add-when-demand-above", "1")
        page.type("plan-own-add-lead-time-months", "0")
        assert page.settled("plan") == "idle"
        add = page.document("plan")["own"]["add"]
        assert add["when_demand_above"] == [1] and add["lead_time_months"] == 0
        assert page.text("plan-verdict") == _verdict(server, "plan", page.document("plan"))
        page.viewport(375, 800)
        assert page.js("return document.documentElement.scrollWidth") <= 375
        page.viewport(1280, 900)
        _only_this_origin(page)
