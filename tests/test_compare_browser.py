"""The compare tab's model choice in a real headless Chromium (the machinery of
``test_web_browser``): choosing a model ranks the ways to serve it by cost per M tokens in the
words of the API's answer, its serving options appear and are sent, a precision the catalog
does not measure is refused beside its field, and "none" brings the training ranking back.
Each option's carbon is in its column (a dash and the server's footnote for an API), and
ranking by carbon on another grid sends both and shows the server's order."""

from __future__ import annotations

import json
from typing import Any

from present.formatting import fmt_grams, fmt_unit_cost
from tests.test_web_browser import Page, Server, _compare_requests, _only_this_origin

MODEL = "llama-3.3-70b"
SERVING = ("input-tokens", "output-tokens", "min-tokens-per-s-per-user")


def _answer(server: Server, body: dict[str, Any]) -> dict[str, Any]:
    status, answer = server.api("POST", "/v1/compare", body)
    assert status == 200, answer
    return answer


def _sentence(answer: dict[str, Any]) -> str:
    """The verdict the view shows: each summary line of the answer, with a full stop."""
    return " ".join(f"{line}." for line in answer["wording"]["summary"])


def _shown(page: Page) -> list[bool]:
    return [page.by_id(f"compare-{slug}-field").is_displayed() for slug in SERVING]


def _cells(page: Page, column: int) -> list[str]:
    """The text of column ``column`` of every row of the ranking."""
    return page.js(
        "return [...document.querySelectorAll('#compare-table tbody tr')]"
        f".map((r) => r.children[{column}].textContent)"
    )


def _carbon_shown(page: Page, answer: dict[str, Any]) -> None:
    """Each shown option's P50 carbon in the page's format (a port of the reports': checked
    on the answer's own values), a dash where not known, with the server's footnote and note."""
    shown = answer["options"][: len(_cells(page, 5))]
    values = [o["carbon_per_unit"]["p50"] if "carbon_per_unit" in o else None for o in shown]
    values += [0, 0.52, 9.995, 99.95, 1234.5, 0.00001234]
    formatted = page.d.execute_async_script(
        """const [values, done] = arguments;
        import("/assets/js/format.js").then((f) => done(values.map(f.fmtGrams)));""",
        values,
    )
    assert formatted == [fmt_grams(v) for v in values]
    assert _cells(page, 5) == formatted[: len(shown)]
    unknown = page.by_id("compare-unknown-carbon")
    assert unknown.is_displayed() == (None in values[: len(shown)])
    if unknown.is_displayed():
        assert page.text("compare-unknown-carbon") == answer["wording"]["unknown_carbon_note"]
    assert page.text("compare-carbon") == answer["wording"]["carbon_note"]


def _choose(page: Page, id_: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    field = page.by_id(id_)
    page.js("arguments[0].scrollIntoView({block: 'center'})", field)
    Select(field).select_by_value(value)


def test_compare_by_model_in_chromium(driver, tmp_path):
    with Server(tmp_path) as server:
        page = Page(driver, server)
        page.by_id("tab-compare").click()
        assert page.settled("compare") == "idle"
        assert _shown(page) == [False, False, False]  # training work: no serving options

        # A model: its serving options appear, and the ranking is in tokens, with the APIs.
        _choose(page, "compare-model", MODEL)
        assert page.settled("compare") == "idle"
        assert _shown(page) == [True, True, True]
        answer = _answer(server, {"utilisation": 0.5, "model": MODEL})
        assert page.text("compare-verdict") == _sentence(answer)
        assert "Cheapest API: " in page.text("compare-verdict")
        heads = page.js(
            "return [...document.querySelectorAll('#compare-table thead th')]"
            ".map((c) => c.textContent)"
        )
        assert heads[3:] == [
            "P50 [USD/M tokens]", "P10–P90 [USD/M tokens]", "CO2e P50 [g/M tokens]", "Price",
            "Tokens/s per GPU", "Measured, estimated or priced",
        ]  # fmt: skip
        first = page.js(
            "return [...document.querySelectorAll('#compare-table tbody tr:first-child > *')]"
            ".map((c) => c.textContent)"
        )
        best = answer["options"][0]
        cited = best["source"]
        # marked § when its speed is estimated, ‡ when its serving row was measured under
        # other conditions than asked
        estimated = cited["origin"] == "estimated"
        mark = " \u00a7" if estimated else " \u2021" if cited["caveats"] else ""
        assert first[1] == best["name"] + mark
        assert first[3] == fmt_unit_cost(best["cost_per_unit"]["p50"])
        assert first[5] == fmt_grams(best["carbon_per_unit"]["p50"])
        where = f"{cited['id']} ({cited['as_of']})"
        assert first[8] == f"{cited['origin']}: {cited['conditions']}; {where}"
        caveats = sorted({c for o in answer["options"][:25] for c in o["source"]["caveats"]})
        assert f"\u2021 measured under other conditions than asked: {'; '.join(caveats)}" in (
            page.text("compare-notes")
        )
        assert any(o["source"]["origin"] == "estimated" for o in answer["options"][:25])
        assert answer["wording"]["estimated_note"] in page.text("compare-notes")
        tags = page.js(
            "return [...document.querySelectorAll('#compare-table .side-tag')]"
            ".map((c) => c.textContent)"
        )
        assert tags.count("API") == sum(o["side"] == "api" for o in answer["options"][:25])
        _carbon_shown(page, answer)
        # At 1280 px the columns up to the carbon one are in sight beside the form (the
        # carbon one was cut off).
        page.screenshot("web-compare-model", 1280)
        carbon, box = page.js(
            "return [document.querySelectorAll('#compare-table thead th')[5],"
            " document.getElementById('compare-scroll')]"
            ".map((n) => n.getBoundingClientRect().right)"
        )
        assert carbon <= box, (carbon, box)
        assert answer["wording"]["left_out"] in page.text("compare-notes")
        page.collect()
        assert json.loads(_compare_requests(page)[-1]["postData"]) == {
            "utilisation": 0.5,
            "model": MODEL,
        }

        # Another request shape is sent with the model.
        page.type("compare-input-tokens", "8192")
        assert page.settled("compare") == "idle"
        body = {"utilisation": 0.5, "model": MODEL, "input_tokens": 8192}
        assert page.text("compare-verdict") == _sentence(_answer(server, body))
        page.collect()
        assert json.loads(_compare_requests(page)[-1]["postData"]) == body

        # Ranked by carbon on the French grid: the server's order, unknown carbon last.
        _choose(page, "compare-sort", "carbon")
        assert page.settled("compare") == "idle"
        _choose(page, "compare-grid", "FR")
        assert page.settled("compare") == "idle"
        body = {"utilisation": 0.5, "model": MODEL, "input_tokens": 8192, "grid": "FR",
                "sort": "carbon"}  # fmt: skip
        page.collect()
        assert json.loads(_compare_requests(page)[-1]["postData"]) == body
        by_carbon = _answer(server, body)
        page.by_id("compare-show-all").click()
        page.wait(lambda: len(_cells(page, 1)) == len(by_carbon["options"]), "every option")
        assert [c.removesuffix(" \u2021").removesuffix(" \u00a7") for c in _cells(page, 1)] == [
            o["name"] for o in by_carbon["options"]
        ]
        grams = _cells(page, 5)
        assert grams[-1] == "—" and grams[0] != "—"  # the unknown (the APIs) last
        assert "FR (France" in page.text("compare-carbon")
        _carbon_shown(page, by_carbon)
        _choose(page, "compare-sort", "")
        assert page.settled("compare") == "idle"
        _choose(page, "compare-grid", "")
        assert page.settled("compare") == "idle"

        # A precision the catalog does not measure the model at: the API's error beside it.
        _choose(page, "compare-precision", "fp16")
        assert page.settled("compare") == "invalid"
        error = page.by_id("compare-precision-error")
        assert error.is_displayed() and "serves llama-3.3-70b at fp8, fp4" in error.text
        _choose(page, "compare-precision", "")
        assert page.settled("compare") == "idle"
        assert page.by_id("compare-precision-error").is_displayed() is False

        # Text that is no number, then no model: the serving options go, with their error.
        page.type("compare-min-tokens-per-s-per-user", "fast")
        assert page.settled("compare") == "invalid"
        _choose(page, "compare-model", "")
        assert page.settled("compare") == "idle"
        assert _shown(page) == [False, False, False]
        training = _answer(server, {"utilisation": 0.5})
        assert page.text("compare-verdict") == _sentence(training)
        page.collect()
        assert json.loads(_compare_requests(page)[-1]["postData"]) == {"utilisation": 0.5}
        assert len(page.errors()) == 1  # the browser's note of the 422 that refused fp16
        _only_this_origin(page)


def test_ruled_out_options_are_named_in_words(driver, tmp_path, monkeypatch):
    """The table of options ruled out names each as the ranking does: a rented one with its
    pricing in words ("rent on demand"), never "undefined"."""
    from costmodel.result import Advice
    from scenarios.compare import market

    advise = market.advise

    def no_l40s_rentals(question):
        rented = [s for s in question.sides if s.path == "rent"]
        extra = (Advice("no_l40s", "error", "no L40S rentals here"),)
        return advise(question) + (extra if any(s.gpu.id == "l40s" for s in rented) else ())

    monkeypatch.setattr(market, "advise", no_l40s_rentals)
    with Server(tmp_path) as server:
        page = Page(driver, server)
        page.by_id("tab-compare").click()
        assert page.settled("compare") == "idle"
        answer = _answer(server, {"utilisation": 0.5})
        ruled = answer["ruled_out"]
        assert {o["side"] for o in ruled} == {"buy", "rent"}
        rows = page.js(
            "return [...document.querySelectorAll('#compare-ruled-out tbody tr')]"
            ".map((r) => [...r.children].map((c) => c.textContent))"
        )
        side = {"buy": "own", "rent": "rent {}"}  # the words of the ranking's column
        assert rows == [
            [o["name"], side[o["side"]].format(o["pricing_name"]), o["reason"]] for o in ruled
        ]
        assert ["runpod/1x_l40s_secure", "rent on demand", "no L40S rentals here"] in rows
        assert "undefined" not in page.text("compare-ruled-out")
