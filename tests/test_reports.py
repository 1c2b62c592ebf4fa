"""Report exporters: every format read back by a real parser and checked against the result.

Results come from ``tests/fixtures/result_sample.json`` (a contract-exact sample with nulls in
payback and break-even) and from running each example scenario in ``scenarios/examples`` with
2,000 samples. Expected cells are computed from the result's JSON form, which the reports never
see (they render the typed :class:`Result`).
"""

from __future__ import annotations

import base64
import copy
import csv
import io
import json
import math
import os
import posixpath
import re
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterator
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import openpyxl
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from marshmallow import ValidationError

import scenarios
from costmodel.result import Result
from present import from_dict, reports, to_dict, to_json
from present.formatting import (
    fmt_months,
    fmt_number,
    fmt_share,
    fmt_unit_cost,
    fmt_usd,
    fmt_utilisation,
    fmt_value,
)
from present.reports import FORMATS, ReportError, render, write
from scenarios.errors import flatten_messages
from tests import svgread
from tests.test_inference import WORKED

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "result_sample.json"
#: The scenario examples (plans have their own report tests).
EXAMPLES = sorted(
    p for p in (ROOT / "scenarios" / "examples").glob("*.yaml") if not p.name.startswith("plan-")
)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: A chart inline in an HTML report.
_INLINE_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
#: A chart embedded in a Markdown report.
_SVG_DATA = "data:image/svg+xml;base64,"
_MD_SVG = re.compile(r"!\[[^\]]*\]\(data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)")


def _result_params() -> list:
    return [pytest.param("fixture", id="fixture")] + [
        pytest.param(p.name, id=p.stem) for p in EXAMPLES
    ]


@cache
def _load(source: str) -> str:
    """The result for ``source`` as JSON text (cached; each test gets a fresh dict)."""
    if source == "fixture":
        return FIXTURE.read_text("utf-8")
    result = scenarios.evaluate(ROOT / "scenarios" / "examples" / source, samples=2000)
    return to_json(result).decode("utf-8")


def _typed(data: dict) -> Result:
    return from_dict(data)


@cache
def _rendered(source: str, fmt: str) -> bytes:
    """``render`` of an unmodified result, shared by the tests that only read it."""
    return render(_typed(json.loads(_load(source))), fmt)


@pytest.fixture(params=_result_params())
def source(request) -> str:
    return request.param


@pytest.fixture
def result(source) -> dict:
    return json.loads(_load(source))


@pytest.fixture
def sample() -> dict:
    return json.loads(_load("fixture"))


# --- readers -------------------------------------------------------------------------------


class _Html(HTMLParser):
    """Collects table cells, element text by id, attributes that load resources, tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.cells: list[str] = []
        self.by_id: dict[str, str] = {}
        self.imgs: list[str] = []
        self.refs: list[str] = []
        self.tags: list[str] = []
        self.classes: list[str] = []
        self.text: list[str] = []
        self._cell: list[str] | None = None
        self._id: tuple[str, list[str]] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        self.classes += (a.get("class") or "").split()
        self.refs += [
            v for k, v in attrs if k in ("src", "href", "srcset", "xlink:href", "data") and v
        ]
        if tag == "img":
            self.imgs.append(a.get("src", ""))
        if tag in ("td", "th"):
            self._cell = []
        if "id" in a:
            self._id = (a["id"], [])

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append(" ".join("".join(self._cell).split()))
            self._cell = None
        if self._id is not None:
            self.by_id[self._id[0]] = " ".join("".join(self._id[1]).split())
            self._id = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._id is not None:
            self._id[1].append(data)


def _parse_html(data: bytes) -> _Html:
    parser = _Html()
    parser.feed(data.decode("utf-8"))
    parser.close()
    return parser


def _md_tables(text: str) -> list[list[list[str]]]:
    """Pipe tables as lists of rows of unescaped cells (separator rows dropped)."""
    tables, current = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
            cells = [re.sub(r"\\(.)", r"\1", c.strip()) for c in cells]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def _has_tornado(source: str) -> int:
    """How many tornado charts the result of ``source`` has: one with uncertain inputs (the
    fixture was stored before the tornado existed), and one more against a hosted API."""
    data = json.loads(_load(source))
    rivals = [r["tornado"] for r in data.get("rivals", [])]
    return sum(bool(t.get("inputs")) for t in [data.get("tornado") or {}, *rivals])


def _svg_ok(data: str | bytes) -> None:
    """A chart: an SVG document with a title, a description and at least one axes with
    ticks on both axes (one, on the server axis of a plan of one candidate)."""
    root = svgread.parse(data)
    (first, *_) = svgread.axes(root)
    assert first.xticks and len(first.yticks) >= 2


def _html_charts(raw: bytes) -> list[str]:
    """The charts inline in an HTML report, each checked to be one (:func:`_svg_ok`)."""
    charts = _INLINE_SVG.findall(raw.decode("utf-8"))
    for svg in charts:
        _svg_ok(svg)
    return charts


# --- JSON ----------------------------------------------------------------------------------


def test_formats_and_public_api():
    assert FORMATS == ("html", "md", "csv", "xlsx", "json")
    assert set(reports.__all__) == {"FORMATS", "ReportError", "render", "write", "write_atomic"}
    assert issubclass(ReportError, ValueError)


def test_json_is_the_contract(result):
    # a result stored before cost_per_unit is written back with it: its unit cost, by name
    expected = dict(result)
    if "cost_per_unit" not in result:
        old = result["cost_per_reference_gpu_hour"]
        expected["cost_per_unit"] = {"unit": "reference_gpu_hour", **old}
    assert json.loads(render(_typed(result), "json")) == expected


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_results_with_nan_are_refused(sample, value):
    sample["buy_tco"]["p50"][0] = value
    with pytest.raises(ValidationError) as exc:
        _typed(sample)
    assert "NaN" in str(exc.value.messages["buy_tco"]["p50"])


def test_results_of_another_schema_version_are_refused(sample):
    sample["schema_version"] = 2
    with pytest.raises(ValidationError) as exc:
        _typed(sample)
    assert "unsupported schema_version 2" in str(exc.value.messages["schema_version"])


# --- HTML ----------------------------------------------------------------------------------


def test_html_shows_the_result(source, result):
    page = _parse_html(_rendered(source, "html"))
    assert page.by_id["verdict"] == " ".join(result["verdict"].split())
    cells = set(page.cells)
    be = result["breakeven_utilisation"]
    assert fmt_utilisation(be["p50"]) in cells
    assert fmt_utilisation(be["p90"]) in cells
    for i, u in enumerate(result["utilisation"]):
        assert fmt_usd(result["buy_tco"]["p50"][i]) in cells, u
        assert fmt_usd(result["rent_tco"]["p90"][i]) in cells, u
        assert fmt_months(result["payback_months"]["p50"][i]) in cells, u
    for a in result["assumptions"]:
        assert a["key"] in cells
        assert fmt_value(a["value"]) in cells
        assert a["source"] in cells
    for r in (result.get("sensitivity") or {}).get("inputs", [])[:8]:
        if r["spearman"]:
            assert r["input"] in cells and f"{r['spearman']:+.2f}" in cells
    text = " ".join(" ".join(page.text).split())
    for w in result["warnings"]:
        assert " ".join(w["message"].split()) in text
        assert w["code"] in text
        assert f"sev-{w['severity']}" in page.classes
    for value in (
        result["seed"],
        result["samples"],
        result["method"],
        result["catalog"]["version"],
        result["catalog"]["as_of"],
        result["scenario"]["name"],
    ):
        assert str(value) in text


def test_html_is_self_contained(source):
    raw = _rendered(source, "html")
    page = _parse_html(raw)
    external = [r for r in page.refs if re.match(r"\s*(https?:)?//", r, re.I)]
    assert external == []
    assert not re.search(rb"url\(\s*['\"]?(https?:)?//", raw, re.I)
    assert "script" not in page.tags and "link" not in page.tags and "iframe" not in page.tags
    assert page.imgs == [] and "foreignobject" not in page.tags
    assert len(_html_charts(raw)) == page.tags.count("svg") == 3 + _has_tornado(source)


def test_html_autoescapes(sample, no_charts):
    sample["verdict"] = "Rent <script>alert(1)</script> & relax."
    sample["warnings"][0]["message"] = "<img src=https://evil.example/x.png>"
    page = _parse_html(render(_typed(sample), "html"))
    assert "script" not in page.tags
    assert page.by_id["verdict"] == sample["verdict"]
    assert page.tags.count("svg") == 3


# --- Markdown ------------------------------------------------------------------------------


def test_markdown_tables_and_images(source, result):
    text = _rendered(source, "md").decode("utf-8")
    tables = _md_tables(text)
    per_u = next(t for t in tables if t[0][0] == "Utilisation")
    header, rows = per_u[0], per_u[1:]
    assert len(rows) == len(result["utilisation"])
    col = header.index("Buy TCO P50")
    assert [r[col] for r in rows] == [fmt_usd(v) for v in result["buy_tco"]["p50"]]
    api = "api_tco" in result  # a third side: each figure says which side it is against
    col = header.index("P(buy cheaper than rent)" if api else "P(buy cheaper)")
    assert [r[col] for r in rows] == [fmt_share(v) for v in result["prob_buy_cheaper"]]
    figures = dict(r for r in next(t for t in tables if t[0] == ["Figure", "Value"])[1:])
    label = "Break-even utilisation vs renting P50" if api else "Break-even utilisation P50"
    assert figures[label] == fmt_utilisation(result["breakeven_utilisation"]["p50"])
    assumptions = next(t for t in tables if t[0][0] == "Key")
    assert [r[0].strip("`") for r in assumptions[1:]] == [a["key"] for a in result["assumptions"]]
    assert [r[1] for r in assumptions[1:]] == [fmt_value(a["value"]) for a in result["assumptions"]]
    drivers = [r for r in (result.get("sensitivity") or {}).get("inputs", []) if r["spearman"]]
    if drivers:
        table = next(t for t in tables if t[0][0] == "Input")
        assert [r[0].replace("\\", "") for r in table[1:]] == [r["input"] for r in drivers[:8]]
        assert [r[1] for r in table[1:]] == [f"{r['spearman']:+.2f}" for r in drivers[:8]]
    images = _MD_SVG.findall(text)
    assert len(images) == 3 + _has_tornado(source)
    for b64 in images:
        _svg_ok(base64.b64decode(b64))
    flat = text.replace("\\", "")
    assert " ".join(result["verdict"].split()) in flat
    for w in result["warnings"]:
        assert " ".join(w["message"].split()) in flat


@pytest.mark.parametrize(
    ("text", "where", "escaped"),
    [
        ("lab-4x-rtx2080ti-vs-p3-8xlarge", {}, "lab-4x-rtx2080ti-vs-p3-8xlarge"),
        ("-$65,740 → -$61,890", {}, "-$65,740 → -$61,890"),  # "$" then a digit closes no math
        ("-$65,740", {"line_start": True}, r"\-$65,740"),  # a list item at a line's start
        ("buy.admin_usd_per_month", {}, "buy.admin_usd_per_month"),  # "_" inside a word
        ("_a_ __b__ c_", {}, r"\_a\_ \_\_b\_\_ c\_"),
        ("$x$ and $5", {}, r"\$x\$ and $5"),
        ("[x](y) [z][w] ![i](j) [months]", {}, r"[x\](y) [z\][w] ![i\](j) [months]"),
        ("[r]: javascript:x", {"line_start": True}, r"\[r]: javascript:x"),
        ("a | b", {}, "a | b"),
        ("a | b", {"cell": True}, r"a \| b"),
        ("1. x", {"line_start": True}, r"1\. x"),
        ("12) x", {"line_start": True}, r"12\) x"),
        ("> q + - 1.", {"line_start": True}, r"\> q + - 1."),
        ("+ x", {"line_start": True}, r"\+ x"),
        ("1. - + > ---", {}, "1. - + > ---"),
        ("# h ##", {}, r"\# h \##"),
        ("C# and F#", {}, "C# and F#"),
        ("AT&T &amp; &#60;", {}, r"AT&T \&amp; \&#60;"),
        ("https://a.example www.b.example", {}, r"https\://a.example www\.b.example"),
        ("*a* `b` ~c~ <d> e\\f", {}, r"\*a\* \`b\` \~c\~ \<d> e\\f"),
        ("  two   spaces\n and a line ", {}, "two spaces and a line"),
    ],
)
def test_markdown_escapes_only_what_would_be_markup_where_it_stands(text, where, escaped):
    from present.reports.markdown import md_escape

    assert md_escape(text, **where) == escaped


def test_markdown_report_keeps_names_money_and_units_as_they_are():
    source = "lab-4x-rtx2080ti-vs-p3-8xlarge.yaml"
    text = _rendered(source, "md").decode("utf-8")
    name = json.loads(_load(source))["scenario"]["name"]
    assert f"# Rent or buy GPU compute: {name}\n" in text
    assert re.search(r"\| -\$\d[\d,]* → -\$\d", text)  # the tornado's buy minus rent
    assert "| [USD/GPU] |" in text and "| buy.admin_usd_per_month |" in text
    # what is left escaped: a "$" before "/" and a "*" (either could be markup)
    assert set(re.findall(r"\\(.)", text)) == {"$", "*"}


# --- CSV -----------------------------------------------------------------------------------

CSV_COLUMNS = [
    "utilisation",
    *(f"buy_tco_{s}" for s in ("mean", "p10", "p50", "p90")),
    *(f"rent_tco_{s}" for s in ("mean", "p10", "p50", "p90")),
    "prob_buy_cheaper",
    "payback_months_p10",
    "payback_months_p50",
    "payback_months_p90",
    "payback_prob_never",
    *(
        f"cost_per_ref_gpu_hour_{side}_{s}"
        for side in ("buy", "rent")
        for s in ("p10", "p50", "p90")
    ),
]


#: The CSV columns of an inference result with a hosted API: each side's TCO, P(buy cheaper)
#: against renting and against the API, both paybacks, each side's cost per M tokens and the
#: share of draws in which each side is the cheapest.
API_CSV_COLUMNS = [
    "utilisation",
    *(f"{side}_tco_{s}" for side in ("buy", "rent", "api") for s in ("mean", "p10", "p50", "p90")),
    "prob_buy_cheaper",
    "prob_buy_cheaper_than_api",
    *(f"payback_months_{s}" for s in ("p10", "p50", "p90")),
    "payback_prob_never",
    *(f"payback_vs_api_months_{s}" for s in ("p10", "p50", "p90")),
    "payback_vs_api_prob_never",
    *(
        f"cost_per_million_tokens_{side}_{s}"
        for side in ("buy", "rent", "api")
        for s in ("p10", "p50", "p90")
    ),
    "cheapest_buy",
    "cheapest_rent",
    "cheapest_api",
]


def _carbon_columns(result: dict) -> list[str]:
    """The emission columns after the rest: each known side's tonnes, then grams per unit."""
    carbon = result.get("carbon")
    if carbon is None:
        return []
    sides = [side for side in ("buy", "rent", "api") if side in carbon]
    per = "g_per_million_tokens" if "api_tco" in result else "g_per_ref_gpu_hour"
    stats = ("mean", "p10", "p50", "p90")
    return [f"carbon_{side}_t_{s}" for side in sides for s in stats] + [
        f"carbon_{side}_{per}_{s}" for side in sides for s in stats[1:]
    ]


def _csv_columns(result: dict) -> list[str]:
    """The CSV header of a result's JSON: a training result's as it always was, and the
    emission columns after it."""
    return (API_CSV_COLUMNS if "api_tco" in result else CSV_COLUMNS) + _carbon_columns(result)


def _expected_columns(result: dict) -> dict[str, list]:
    """Every CSV column's values, from the result's JSON form (a hosted API's too)."""
    cpu = result.get("cost_per_unit") or result["cost_per_reference_gpu_hour"]
    stem = "cost_per_million_tokens" if "api_tco" in result else "cost_per_ref_gpu_hour"
    sides = ("buy", "rent", "api") if "api_tco" in result else ("buy", "rent")
    out = {"utilisation": result["utilisation"], "prob_buy_cheaper": result["prob_buy_cheaper"]}
    for side in sides:
        out |= {f"{side}_tco_{s}": result[f"{side}_tco"][s] for s in ("mean", "p10", "p50", "p90")}
        out |= {f"{stem}_{side}_{s}": cpu[side][s] for s in ("p10", "p50", "p90")}
    paybacks = [("payback", "payback_months")]
    if "api_tco" in result:
        paybacks.append(("payback_vs_api", "payback_vs_api_months"))
        out["prob_buy_cheaper_than_api"] = result["prob_buy_cheaper_than_api"]
        out |= {f"cheapest_{side}": result["cheapest_share"][side] for side in sides}
    for stem, key in paybacks:
        out |= {f"{stem}_months_{s}": result[key][s] for s in ("p10", "p50", "p90")}
        out[f"{stem}_prob_never"] = result[key]["prob_never"]
    for name in _carbon_columns(result):
        side, _, rest = name.removeprefix("carbon_").partition("_")
        stat = rest.rsplit("_", 1)[1]
        block = result["carbon"] if rest.startswith("t_") else result["carbon"]["per_unit"]
        out[name] = block[side][stat]
    return out


def test_csv_round_trips_exactly(source, result):
    rows = list(csv.DictReader(io.StringIO(_rendered(source, "csv").decode("utf-8"))))
    assert len(rows) == len(result["utilisation"])
    assert list(rows[0]) == _csv_columns(result)
    assert sorted(_expected_columns(result)) == sorted(rows[0])  # every column checked
    for name, values in _expected_columns(result).items():
        got = [None if r[name] == "" else float(r[name]) for r in rows]
        assert got == values, name  # exact: floats are written with repr precision


# --- XLSX ----------------------------------------------------------------------------------


def test_xlsx_sheets_and_numbers(source, result):
    wb = openpyxl.load_workbook(io.BytesIO(_rendered(source, "xlsx")))
    rivals = result.get("rivals", [])
    assert wb.sheetnames == [
        "summary",
        "per_utilisation",
        "assumptions",
        "warnings",
        "sensitivity",
        "tornado",
        *(f"{k}_vs_{r['versus']}" for r in rivals for k in ("sensitivity", "tornado")),
    ]
    against = [("", result), *((f"_vs_{r['versus']}", r) for r in rivals)]
    for suffix, part in against:
        sens = [r for r in wb[f"sensitivity{suffix}"].iter_rows(min_row=2, values_only=True)]
        expected = (part.get("sensitivity") or {}).get("inputs", [])
        assert [r[0] for r in sens] == [e["input"] for e in expected]
        assert [r[1] for r in sens] == pytest.approx([e["spearman"] for e in expected], rel=1e-15)
        bars = [r for r in wb[f"tornado{suffix}"].iter_rows(min_row=2, values_only=True)]
        expected = (part.get("tornado") or {}).get("inputs", [])
        assert [r[5] for r in bars] == pytest.approx([e["gap_at_low"] for e in expected])
    ws = wb["per_utilisation"]
    header = [c.value for c in ws[1]]
    assert header == _csv_columns(result)
    assert all(c.font.bold for c in ws[1])
    assert ws.max_row == len(result["utilisation"]) + 1
    for name, values in _expected_columns(result).items():
        col = header.index(name) + 1
        got = [ws.cell(row, col).value for row in range(2, ws.max_row + 1)]
        # openpyxl writes 16 significant digits ("%.16g"); Excel itself keeps 15
        assert got == [None if v is None else pytest.approx(v, rel=1e-15, abs=0) for v in values]
        assert all(isinstance(v, int | float) for v in got if v is not None), name
    summary = {r[0]: r[1] for r in wb["summary"].iter_rows(min_row=2, values_only=True)}
    be = result["breakeven_utilisation"]
    for k in ("p10", "p50", "p90", "mean", "prob_always", "prob_never"):
        key = f"breakeven_{k}" if k.startswith("prob") else f"breakeven_utilisation_{k}"
        assert summary[key] == (None if be[k] is None else pytest.approx(be[k], rel=1e-15)), key
    assert summary["verdict"] == result["verdict"]
    assert summary["seed"] == result["seed"] and summary["samples"] == result["samples"]
    assert summary["method"] == result["method"]
    assert summary["catalog_version"] == result["catalog"]["version"]
    assert summary["scenario_name"] == result["scenario"]["name"]
    assert summary["warnings_count"] == len(result["warnings"])
    keys = [r[0] for r in wb["assumptions"].iter_rows(min_row=2, values_only=True)]
    assert keys == [a["key"] for a in result["assumptions"]]
    codes = sorted(r[0] for r in wb["warnings"].iter_rows(min_row=2, values_only=True))
    assert codes == sorted(w["code"] for w in result["warnings"])
    assert all(wb[name]["A1"].font.bold for name in wb.sheetnames)
    assert wb["per_utilisation"].column_dimensions["B"].width >= len("buy_tco_mean")
    # display formats: shares as percentages, money as dollars; the values stay numbers
    fmt = {h: ws.cell(2, i + 1).number_format for i, h in enumerate(header)}
    assert fmt["utilisation"] == fmt["prob_buy_cheaper"] == "0.0%"
    assert fmt["buy_tco_p50"] == "$#,##0" and fmt["payback_months_p50"] == "0.0"
    # the break-even chart (openpyxl does not read charts back: look in the package)
    with zipfile.ZipFile(io.BytesIO(_rendered(source, "xlsx"))) as package:
        chart = package.read("xl/charts/chart1.xml").decode("utf-8")
    assert "Buy P50" in chart and "Rent P50" in chart
    assert ("API P50" in chart) == ("api_tco" in result)


# --- inference with a hosted API ----------------------------------------------------------

INFERENCE = "inference-70b-fp8-h100.yaml"
#: The per-utilisation table of a result with a hosted API, as the HTML and Markdown show it.
API_TABLE_HEADERS = [
    "Utilisation",
    *(f"{side} TCO {s}" for side in ("Buy", "Rent", "API") for s in ("P10", "P50", "P90")),
    "P(buy cheaper than rent)",
    "P(buy cheaper than API)",
    "Cheapest (share of draws)",
    "Payback vs rent P50 [months]",
    "Payback vs API P50 [months]",
    "Buy P50 [$/M tokens]",
    "Rent P50 [$/M tokens]",
    "API P50 [$/M tokens]",
]
#: The worked inference example of the model guide (tests/test_inference.py), every input
#: fixed: 8 GPUs at 2,500 tokens/s each (2,500 * 3,600 / 1e6 = 9 M tokens per GPU-hour, 72 per
#: server-hour) against an 8-GPU instance at 24 USD/h (-15 %/year) and an API at 0.60 in /
#: 0.80 out USD per M tokens (-30 %/year; (1000 * 0.60 + 1000 * 0.80) / 2000 = 0.70 USD per M
#: tokens blended), 36 months at 8 %, no tax; the report at 100 % utilisation.
WORKED_INFERENCE = {
    **WORKED,
    "workload": {**WORKED["workload"], "model": {"name": "a 70B model", "params_b": 70}},
    "report_utilisation": 1.0,
    "simulation": {"samples": 1, "seed": 1, "method": "random"},
}


@cache
def _worked_inference(fmt: str) -> bytes:
    return render(scenarios.evaluate(WORKED_INFERENCE), fmt)


def _md_table(text: str, first: str) -> list[dict[str, str]]:
    """The rows, by header, of the Markdown table whose first header is ``first``."""
    header, *rows = next(t for t in _md_tables(text) if t[0][0] == first)
    return [dict(zip(header, row, strict=True)) for row in rows]


def test_the_worked_inference_report_shows_the_hand_computed_figures():
    text = _worked_inference("md").decode("utf-8")
    figures = {r["Figure"]: r["Value"] for r in _md_table(text, "Figure")}
    # the worked example's break-evens: 0.7051127 against renting, 0.4191689 against the API
    assert figures["Break-even utilisation vs renting P50"] == "70.5 %"
    assert figures["Break-even utilisation vs the API P50"] == "41.9 %"
    assert (
        "Buying is cheaper than the API even when idle in 0 % of draws, and dearer even at 100 % "
        "utilisation in 0 %." in text
    )
    # at 100 %: buying 322,672.1275 USD for 730 * 72 = 52,560 M tokens a month, discounted:
    # 0.170531 USD per M tokens; renting 0.238623 and the API 0.396142 at every level
    per = "cost per M tokens at 100 % utilisation P10 / P50 / P90"
    assert figures[f"Buy {per}"] == "$0.171 / $0.171 / $0.171"
    assert figures[f"Rent {per}"] == "$0.239 / $0.239 / $0.239"
    assert figures[f"API {per}"] == "$0.396 / $0.396 / $0.396"
    assert figures["Payback vs renting at 100 % utilisation P10 / P50 / P90 [months]"] == (
        "25.9 / 25.9 / 25.9"
    )
    assert figures["Payback vs the API at 100 % utilisation P10 / P50 / P90 [months]"] == (
        "9.3 / 9.3 / 9.3"
    )
    rows = {r["Utilisation"]: r for r in _md_table(text, "Utilisation")}
    assert list(rows["10 %"]) == API_TABLE_HEADERS
    # at 10 %: 0.1 * 52,560 = 5,256 M tokens a month at 0.70 USD, less 30 %/year, discounted
    # at 8 %: 74,956.4380 USD over 36 months (the worked table), 0.396142 USD per M tokens
    assert rows["10 %"]["API TCO P50"] == "$74,960"
    assert rows["10 %"]["API P50 [$/M tokens]"] == "$0.396"
    assert rows["10 %"]["Buy P50 [$/M tokens]"] == "$1.64"  # 1.635884
    assert rows["0 %"]["API P50 [$/M tokens]"] == "—"  # no work, no cost per unit
    # renting is cheapest below 70.5 %, buying above; at 0 % renting and the API both cost
    # nothing and the tie goes to renting, the first of them
    cheapest = {u: r["Cheapest (share of draws)"] for u, r in rows.items()}
    assert cheapest == {
        "0 %": "rent 100 %",
        "10 %": "rent 100 %",
        "25 %": "rent 100 %",
        "50 %": "rent 100 %",
        "100 %": "buy 100 %",
    }
    # against the API buying breaks even at 41.9 %: dearer at 25 %, cheaper at 50 %
    assert [rows[u]["P(buy cheaper than API)"] for u in ("25 %", "50 %", "100 %")] == (
        ["0 %", "100 %", "100 %"]
    )
    assert rows["100 %"]["Payback vs API P50 [months]"] == "9.3"


def test_the_worked_inference_report_has_the_api_beside_renting():
    text = _worked_inference("md").decode("utf-8")
    assert text.startswith("# Buy, rent or pay per token: worked inference example\n")
    assert "**API:**" not in text  # an API given inline has no name to show
    assert "**Serving:** a 70B model (fp8), 1,000 in / 1,000 out tokens per request" in text
    assert "break-even P50 70.5 % against renting, 41.9 % against the API" in text
    assert "unit cost per M tokens (input + output) served" in text
    assert "reference GPU" not in text and "ref GPU" not in text


def test_inference_without_an_api_keeps_two_sides_in_tokens(no_charts):
    doc = {k: v for k, v in WORKED_INFERENCE.items() if k != "api"}
    result = scenarios.evaluate(doc)
    text = render(result, "md").decode("utf-8")
    rows = _md_table(text, "Utilisation")
    assert list(rows[0]) == [
        "Utilisation",
        *(f"{side} TCO {s}" for side in ("Buy", "Rent") for s in ("P10", "P50", "P90")),
        "P(buy cheaper)",
        "Payback P50 [months]",
        "Buy P50 [$/M tokens]",
        "Rent P50 [$/M tokens]",
    ]
    assert [r["Rent P50 [$/M tokens]"] for r in rows] == ["—", *["$0.239"] * 4]  # 0.238623
    figures = {r["Figure"]: r["Value"] for r in _md_table(text, "Figure")}
    assert figures["Break-even utilisation P50"] == "70.5 %"
    per = "cost per M tokens at 100 % utilisation P10 / P50 / P90"
    assert [k for k in figures if per in k] == [f"Buy {per}", f"Rent {per}"]
    assert text.startswith("# Rent or buy GPU compute: ")
    assert "the API" not in text and "**API:**" not in text
    header = next(csv.reader(io.StringIO(render(result, "csv").decode("utf-8"))))
    # the training columns, but the unit cost (and the emissions) per M tokens
    columns = CSV_COLUMNS + _carbon_columns(to_dict(result))
    assert header == [c.replace("ref_gpu_hour", "million_tokens") for c in columns]


#: How the per-utilisation table names the cheapest side.
_OPTION = {"buy": "buy", "rent": "rent", "api": "API"}


def _cheapest(result: dict, i: int) -> str:
    """The side cheapest in most draws at level ``i`` with its share, from the JSON (a tie
    goes to the first of buy, rent, api)."""
    shares = {side: result["cheapest_share"][side][i] for side in _OPTION}
    best = max(shares, key=shares.get)
    return f"{_OPTION[best]} {fmt_share(shares[best])}"


def _api_cells(result: dict) -> dict[str, list[str]]:
    """The API's columns of the per-utilisation table, formatted from the result's JSON."""
    levels = range(len(result["utilisation"]))
    return {
        "API TCO P10": [fmt_usd(v) for v in result["api_tco"]["p10"]],
        "API TCO P50": [fmt_usd(v) for v in result["api_tco"]["p50"]],
        "API TCO P90": [fmt_usd(v) for v in result["api_tco"]["p90"]],
        "P(buy cheaper than API)": [fmt_share(v) for v in result["prob_buy_cheaper_than_api"]],
        "Cheapest (share of draws)": [_cheapest(result, i) for i in levels],
        "Payback vs API P50 [months]": [
            fmt_months(v) for v in result["payback_vs_api_months"]["p50"]
        ],
        "API P50 [$/M tokens]": [fmt_unit_cost(v) for v in result["cost_per_unit"]["api"]["p50"]],
    }


def test_inference_html_names_the_unit_and_shows_the_api():
    result = json.loads(_load(INFERENCE))
    page = _parse_html(_rendered(INFERENCE, "html"))
    start, width = page.cells.index("Utilisation"), len(API_TABLE_HEADERS)
    assert page.cells[start : start + width] == API_TABLE_HEADERS
    n = len(result["utilisation"])
    rows = [page.cells[start + width * (j + 1) : start + width * (j + 2)] for j in range(n)]
    for name, cells in _api_cells(result).items():
        assert [row[API_TABLE_HEADERS.index(name)] for row in rows] == cells, name
    # the rows where buying is the cheapest of the three in at least half of the draws
    assert page.classes.count("buy-wins") == sum(p >= 0.5 for p in result["cheapest_share"]["buy"])
    assert 0 < page.classes.count("buy-wins") < n
    text = " ".join(" ".join(page.text).split())
    assert "unit cost per M tokens (input + output) served" in text
    assert "buying is the cheapest of the three options in at least half of the draws" in text
    assert "API together/llama-3.3-70b-instruct-turbo" in text
    assert "reference GPU" not in text and "ref GPU" not in text
    # the cost per M tokens of each side at the report utilisation, among the key figures
    figures = dict(zip(page.cells[0:start:2], page.cells[1:start:2], strict=True))
    i = result["utilisation"].index(result["cumulative_cost"]["utilisation"])
    for side, label in (("buy", "Buy"), ("rent", "Rent"), ("api", "API")):
        bands = result["cost_per_unit"][side]
        expected = " / ".join(fmt_unit_cost(bands[s][i]) for s in ("p10", "p50", "p90"))
        assert figures[f"{label} cost per M tokens at 50 % utilisation P10 / P50 / P90"] == expected


def test_inference_markdown_table_has_the_api_columns():
    result = json.loads(_load(INFERENCE))
    text = _rendered(INFERENCE, "md").decode("utf-8")
    rows = _md_table(text, "Utilisation")
    assert list(rows[0]) == API_TABLE_HEADERS
    for name, cells in _api_cells(result).items():
        assert [r[name] for r in rows] == cells, name
    for side, label in (("buy", "Buy"), ("rent", "Rent")):
        cells = [fmt_unit_cost(v) for v in result["cost_per_unit"][side]["p50"]]
        assert [r[f"{label} P50 [$/M tokens]"] for r in rows] == cells
    figures = {r["Figure"]: r["Value"] for r in _md_table(text, "Figure")}
    be = result["breakeven_vs_api"]
    for k in ("p10", "p50", "p90"):
        assert figures[f"Break-even utilisation vs the API {k.upper()}"] == fmt_utilisation(be[k])
    i = result["utilisation"].index(0.5)
    payback = " / ".join(
        fmt_months(result["payback_vs_api_months"][s][i]) for s in ("p10", "p50", "p90")
    )
    assert figures["Payback vs the API at 50 % utilisation P10 / P50 / P90 [months]"] == payback


def test_the_inference_breakeven_chart_has_three_sides_and_both_breakevens():
    # The chart read back through its own axis ticks: each P50 line and P10-P90 band is the
    # result's numbers at each utilisation, each break-even P50 a vertical line at its value.
    from present.reports.charts import breakeven_chart

    result = json.loads(_load(INFERENCE))
    root = svgread.parse(breakeven_chart(_typed(result)))
    (ax,) = svgread.axes(root)
    x = np.array([100 * u for u in result["utilisation"]])
    top = max(max(result[f"{s}_tco"]["p90"]) for s in ("buy", "rent", "api"))
    tol = 1e-4 * top  # coordinates are written to 0.01 pt of an axes about 250 pt high
    for side, label in (("buy", "Buy"), ("rent", "Rent"), ("api", "API")):
        line = ax.line(f"{label} P50")
        np.testing.assert_allclose(line[:, 0], x, atol=0.01)
        np.testing.assert_allclose(line[:, 1], result[f"{side}_tco"]["p50"], atol=tol)
        band = ax.polygon(f"{label} P10–P90")  # P90 left to right, then P10 back
        n = len(x)
        np.testing.assert_allclose(band[:n, 1], result[f"{side}_tco"]["p90"], atol=tol)
        np.testing.assert_allclose(band[n:, 1][::-1], result[f"{side}_tco"]["p10"], atol=tol)
    for key, label in (
        ("breakeven_utilisation", "Break-even vs renting"),
        ("breakeven_vs_api", "Break-even vs the API"),
    ):
        p50 = result[key]["p50"]
        drawn = ax.vline_x(f"{label} P50 ({fmt_utilisation(p50)})")
        assert drawn == pytest.approx(100 * p50, abs=0.01)
    assert root.findtext(f"{svgread.SVG}title") == "Buy vs rent vs API: total cost over the horizon"
    assert [t[2] for t in ax.xticks] == ["0%", "20%", "40%", "60%", "80%", "100%"]
    (y_low, _, _), (y_high, _, _) = ax.yticks[0], ax.yticks[-1]
    assert ax.box[1] <= y_high and y_low <= ax.box[3]  # the y ticks lie within the axes


def test_inference_xlsx_has_the_api_columns_and_chart():
    result = json.loads(_load(INFERENCE))
    data = _rendered(INFERENCE, "xlsx")
    wb = openpyxl.load_workbook(io.BytesIO(data))
    ws = wb["per_utilisation"]
    header = [c.value for c in ws[1]]
    assert header == API_CSV_COLUMNS + _carbon_columns(result)
    fmt = {h: ws.cell(2, i + 1).number_format for i, h in enumerate(header)}
    assert fmt["api_tco_p50"] == "$#,##0" and fmt["payback_vs_api_months_p50"] == "0.0"
    assert fmt["cost_per_million_tokens_api_p50"] == "$#,##0.000"
    assert fmt["cheapest_buy"] == fmt["prob_buy_cheaper_than_api"] == "0.0%"
    (chart,) = _xlsx_charts(data)["per_utilisation"]
    drawn = {s["title"]: (_cells(wb, s["x"]), _cells(wb, s["y"])) for s in chart["series"]}
    assert list(drawn) == ["Buy P50", "Rent P50", "API P50"]
    for side, title in (("buy", "Buy P50"), ("rent", "Rent P50"), ("api", "API P50")):
        xs, ys = drawn[title]
        assert xs == pytest.approx(result["utilisation"], rel=1e-15)
        assert ys == pytest.approx(result[f"{side}_tco"]["p50"], rel=1e-15)
    summary = {r[0]: r[1] for r in wb["summary"].iter_rows(min_row=2, values_only=True)}
    be = result["breakeven_vs_api"]
    for k in ("p10", "p50", "p90", "mean", "prob_always", "prob_never"):
        assert summary[f"breakeven_vs_api_{k}"] == pytest.approx(be[k], rel=1e-15), k


# --- nulls ---------------------------------------------------------------------------------


def test_nulls_render_as_never_dash_and_empty(sample):
    n = len(sample["utilisation"])
    sample["breakeven_utilisation"].update(p10=None, p50=None, p90=None, prob_never=1.0)
    sample["cost_per_reference_gpu_hour"]["buy"]["p50"][0] = None
    sample["payback_months"]["p50"] = [None] * n
    typed = _typed(sample)
    page = _parse_html(render(typed, "html"))
    assert "never" in page.cells and "—" in page.cells
    start = page.cells.index("Utilisation")
    header = page.cells[start : start + 11]
    first_row = dict(zip(header, page.cells[start + 11 : start + 22], strict=True))
    assert first_row["Buy P50 [$/ref GPU-h]"] == "—"
    assert first_row["Payback P50 [months]"] == "never"
    rows = list(csv.DictReader(io.StringIO(render(typed, "csv").decode())))
    assert rows[0]["cost_per_ref_gpu_hour_buy_p50"] == "" and rows[-1]["payback_months_p50"] == ""
    ws = openpyxl.load_workbook(io.BytesIO(render(typed, "xlsx")))["summary"]
    summary = {r[0]: r[1] for r in ws.iter_rows(min_row=2, values_only=True)}
    assert summary["breakeven_utilisation_p50"] is None
    assert "never" in render(typed, "md").decode()


def test_formatting_is_readable():
    assert fmt_usd(52347.12) == "$52,350"
    assert fmt_usd(7996.3813) == "$7,996"
    assert fmt_usd(640.87) == "$641"
    assert fmt_usd(3.0612) == "$3.06"
    assert fmt_usd(None) == "—"
    assert fmt_utilisation(0.0714134) == "7.1 %" and fmt_utilisation(0.35) == "35 %"
    assert fmt_utilisation(None) == "never" and fmt_months(None) == "never"
    # a share that is not exactly 0 or 1 never shows as "0 %" or "100 %"
    assert fmt_share(0.9968) == "99.7 %" and fmt_share(0.9999) == "> 99.9 %"
    assert fmt_share(0.001) == "0.1 %" and fmt_share(0.0001) == "< 0.1 %"
    assert fmt_share(1.0) == "100 %" and fmt_share(0.0) == "0 %" and fmt_share(0.354) == "35 %"
    assert fmt_share(float("nan")) == "—" and fmt_usd(float("nan")) == "—"
    assert fmt_number(1500) == "1,500" and fmt_number(0.1) == "0.10"
    assert fmt_value({"dist": "pert", "low": 0.10, "mode": 0.15, "high": 0.25}) == (
        "PERT(0.10, 0.15, 0.25)"
    )
    assert fmt_value({"dist": "uniform", "low": 0, "high": 0.05}) == "Uniform(0.00, 0.05)"
    assert fmt_value({"dist": "triangular", "low": 2500, "mode": 3500, "high": 5000}) == (
        "Triangular(2500, 3500, 5000)"  # no thousands separator inside a comma-separated list
    )
    assert fmt_value({"dist": "lognormal", "median": 400, "p90": 800}) == (
        "Lognormal(median 400, p90 800)"
    )
    assert fmt_value(True) == "yes" and fmt_value("spot") == "spot"


# --- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["pdf", "HTML", "", None])
def test_unknown_format_lists_valid_formats(sample, fmt, tmp_path):
    typed = _typed(sample)
    for call in (lambda: render(typed, fmt), lambda: write(typed, fmt, tmp_path / "r.out")):
        with pytest.raises(ReportError) as exc:
            call()
        assert all(f in str(exc.value) for f in FORMATS)
    assert list(tmp_path.iterdir()) == []


def test_missing_or_misaligned_keys(sample):
    broken = copy.deepcopy(sample)
    del broken["buy_tco"], broken["breakeven_utilisation"]["p50"]
    with pytest.raises(ValidationError) as exc:
        _typed(broken)
    assert exc.value.messages["buy_tco"] == ["Missing data for required field."]
    assert "p50" in exc.value.messages["breakeven_utilisation"]
    broken = copy.deepcopy(sample)
    broken["prob_buy_cheaper"].pop()
    with pytest.raises(ValidationError, match="prob_buy_cheaper"):
        _typed(broken)
    with pytest.raises(ValidationError):
        _typed([])


# --- hostile text (issue 9) ----------------------------------------------------------------

#: Text a spreadsheet would run as a formula: it starts with = + - @, a tab or a CR (OWASP).
FORMULAS = (
    '=HYPERLINK("http://evil.example","click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
)
#: Text Markdown would turn into a link, an image, HTML, a heading, code or emphasis.
MARKUP = (
    "[x](javascript:alert(1))",
    "![y](javascript:alert(2))",
    "<a href='javascript:alert(3)'>z</a> <script>alert(4)</script>",
    "<javascript:alert(5)> <https://evil.example>",
    "[ref]: javascript:alert(6)",
    "# *em* __strong__ `code` ~~gone~~ &lt;b&gt; \\",
    "1. - + > | --- ===",
    # GitHub links bare web addresses and strikes ~one~ through
    "https://evil.example/x www.evil.example ~one~",
    "[x][y] [z] [z]: javascript:alert(7) ![w][z] _a_ snake_case ##",
    "- [ ] task ``` ~~~",
)


def _md_pages(md: str) -> list:
    """``md`` rendered by CommonMark (markdown-it, with tables and strikethrough) and by
    GitHub's own renderer (cmark-gfm: tables, autolinks, strikethrough, task lists), raw HTML
    let through, parsed."""
    import cmarkgfm
    from cmarkgfm.cmark import Options

    commonmark = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    # markdown-it drops data URIs other than raster images; the charts are SVG images, which
    # browsers and cmark-gfm show: let them through, and only them.
    known = commonmark.validateLink
    commonmark.validateLink = lambda url: url.startswith(_SVG_DATA) or known(url)
    github = cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE)
    return [_parse_html(html.encode("utf-8")) for html in (commonmark.render(md), github)]


def _hostile(sample: dict, text: str) -> dict:
    """``sample`` with ``text`` in every text field a result JSON carries from its author."""
    out = copy.deepcopy(sample)
    out["scenario"].update(name=text, description=text)
    out["scenario"]["buy"]["gpu"] = text
    out["scenario"]["rent"].update(instance=text, pricing=text)
    out["verdict"] = text
    out["catalog"] = {"version": text, "as_of": text}
    out["warnings"] = [{"code": text, "severity": "warning", "message": text}]
    out["assumptions"] = [{"key": text, "value": text, "unit": text, "source": text}]
    out["sensitivity"]["inputs"] = [{"input": text, "spearman": -0.5}]
    return out


def _xlsx_cells(data: bytes) -> Iterator[openpyxl.cell.Cell]:
    wb = openpyxl.load_workbook(io.BytesIO(data))
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            yield from row


@pytest.mark.parametrize("text", FORMULAS)
def test_spreadsheet_cells_never_hold_formulas(sample, text):
    typed = _typed(_hostile(sample, text))
    cells = list(_xlsx_cells(render(typed, "xlsx")))
    assert [c.coordinate for c in cells if c.data_type == "f"] == []
    texts = [c.value for c in cells if isinstance(c.value, str)]
    assert not [t for t in texts if t[0] in "=+-@\t\r"]
    # every text cell that came from the author is kept, behind a quote (OWASP)
    quoted = [t for t in texts if t.startswith("'") and t[2:] == text[1:]]
    # summary: verdict, catalog version and date, name; warning code and message; assumption
    # key, value, unit and source; sensitivity input
    assert len(quoted) == 11, texts
    sens = openpyxl.load_workbook(io.BytesIO(render(typed, "xlsx")))["sensitivity"]
    assert sens["B2"].value == -0.5 and sens["B2"].data_type == "n"  # numbers stay numbers
    # the CSV report is the per-utilisation table: numbers only, nothing of the author's text
    rows = list(csv.reader(io.StringIO(render(typed, "csv").decode("utf-8"))))
    assert all(cell == "" or float(cell) == float(cell) for row in rows[1:] for cell in row)


def test_xlsx_text_that_looks_like_an_excel_error_stays_text(sample):
    cells = _xlsx_cells(render(_typed(_hostile(sample, "#N/A")), "xlsx"))
    assert [c.coordinate for c in cells if c.data_type in ("e", "f")] == []


@pytest.mark.parametrize("text", MARKUP)
def test_markdown_shows_the_authors_markup_as_text(sample, text, no_charts):
    md = render(_typed(_hostile(sample, text)), "md").decode("utf-8")
    plain = render(_typed(_hostile(sample, "plain text")), "md").decode("utf-8")
    for page, own in zip(_md_pages(md), _md_pages(plain), strict=True):
        # the same elements as for plain text: nothing of the author's became markup
        assert page.tags == own.tags
        assert [t for t in page.tags if t in ("a", "script", "em", "s", "del", "code", "hr")] == []
        assert page.tags.count("h1") == 1 and page.tags.count("img") == 3
        assert not [r for r in page.refs if "javascript" in r or "evil" in r]
        shown = " ".join("".join(page.text).split())
        assert shown.count(" ".join(text.split())) >= 10  # verbatim wherever the text is used


@pytest.mark.parametrize("text", MARKUP)
def test_html_shows_the_authors_markup_as_text(sample, text, no_charts):
    page = _parse_html(render(_typed(_hostile(sample, text)), "html"))
    assert [t for t in page.tags if t in ("a", "script", "em", "code")] == ["code"] * 2
    assert not [r for r in page.refs if "javascript" in r]
    assert page.tags.count("svg") == 3
    assert "".join(page.text).count(text) >= 10


@pytest.mark.parametrize(
    "where, path",
    [
        (("scenario", "discount_rate"), "scenario.discount_rate"),
        (("scenario", "buy", "gpu_price_usd", "low"), "scenario.buy.gpu_price_usd.low"),
        (("assumptions", 0, "value"), "assumptions[0].value"),
        (("assumptions", 0, "value", "low"), "assumptions[0].value.low"),
    ],
)
@pytest.mark.parametrize("value", [float("nan"), float("-inf")])
def test_nan_is_refused_inside_the_scenario_and_assumptions_too(sample, where, path, value):
    sample["assumptions"][0]["value"] = {"dist": "uniform", "low": 1, "high": 2}
    *parents, last = where
    node = sample
    for key in parents:
        node = node[key]
    node[last] = value
    with pytest.raises(ValidationError) as exc:
        _typed(sample)
    message = "NaN and infinities are not JSON numbers; write null for no value"
    assert flatten_messages(exc.value.messages) == [{"path": path, "message": message}]


def test_deep_nesting_is_refused_before_it_reaches_a_report(sample):
    deep: list = []
    for _ in range(500):  # json.loads reads it; rendering it would exhaust the stack
        deep = [deep]
    sample["assumptions"][0]["value"] = deep
    with pytest.raises(ValidationError) as exc:
        _typed(sample)
    assert flatten_messages(exc.value.messages)[0]["path"] == "assumptions[0].value"
    assert "nested deeper than" in str(exc.value.messages)


def test_another_schema_version_is_refused_on_its_version_alone(sample):
    sample["schema_version"] = 2
    del sample["buy_tco"]
    sample["renamed"] = {}
    with pytest.raises(ValidationError) as exc:
        _typed(sample)
    assert exc.value.messages == {
        "schema_version": ["unsupported schema_version 2; this release reads 1"]
    }


# --- write ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["html", "csv", "xlsx", "json"])
def test_write_single_file(sample, fmt, tmp_path):
    out = tmp_path / "sub" / f"report.{fmt}"
    paths = write(_typed(sample), fmt, str(out))
    assert paths == [out]
    assert sorted(p.name for p in out.parent.iterdir()) == [out.name]  # no temp file left
    if fmt != "xlsx":  # xlsx embeds a timestamp
        assert out.read_bytes() == _rendered("fixture", fmt)


def test_write_md_puts_charts_beside(sample, tmp_path):
    out = tmp_path / "run 1.md"
    paths = write(_typed(sample), "md", out)
    names = [
        "run 1.md",
        "run 1_breakeven.svg",
        "run 1_prob_buy_cheaper.svg",
        "run 1_cumulative.svg",
    ]
    assert [p.name for p in paths] == names
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)
    text = out.read_text("utf-8")
    assert "data:image" not in text
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert links == [
        "run%201_breakeven.svg",
        "run%201_prob_buy_cheaper.svg",
        "run%201_cumulative.svg",
    ]
    for p in paths[1:]:
        _svg_ok(p.read_bytes())


def test_write_is_atomic_on_failure(sample, tmp_path, monkeypatch):
    out = tmp_path / "report.json"
    out.write_text("previous report")

    def fail(*_args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write(_typed(sample), "json", out)
    assert out.read_text() == "previous report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


# --- headless browser ----------------------------------------------------------------------


def _screenshot(driver, page: Path, shot: Path) -> list[str]:
    """Open ``page`` in the session's headless Chromium at 1280 x 2400 CSS pixels, save its
    screenshot as ``shot`` and return the errors its console logged (a script's, a resource
    that failed to load)."""
    driver.get_log("browser")  # drop the logs of an earlier page
    metrics = {"width": 1280, "height": 2400, "deviceScaleFactor": 1, "mobile": False}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    driver.get(page.as_uri())
    shot.write_bytes(base64.b64decode(driver.execute_cdp_cmd("Page.captureScreenshot", {})["data"]))
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_console_check_catches_errors(driver, tmp_path):
    """Guards the next test: a page with a script error must be reported."""
    page = tmp_path / "bad.html"
    page.write_text("<html><body><script>notDefined();</script></body></html>")
    errors = _screenshot(driver, page, tmp_path / "bad.png")
    assert any("Uncaught" in e for e in errors), errors


def test_html_renders_in_headless_chromium(driver, tmp_path):
    source = "lab-4x-rtx2080ti-vs-p3-8xlarge.yaml"  # a real result
    page = tmp_path / "report.html"
    write(_typed(json.loads(_load(source))), "html", page)
    artifacts = ROOT / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    shot = artifacts / "report.png"
    shot.unlink(missing_ok=True)
    errors = _screenshot(driver, page, shot)
    data = shot.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 50_000
    assert errors == []


# --- fleet plans ---------------------------------------------------------------------------

PLAN_EXAMPLES = sorted((ROOT / "scenarios" / "examples").glob("plan-*.yaml"))
PLAN_EXAMPLE = ROOT / "scenarios" / "examples" / "plan-worked-example.yaml"
PLAN_HEADERS = [
    "servers",
    "instances",
    *(f"cost_{s}" for s in ("mean", "p10", "p50", "p90", "cvar95")),
    "share_owned",
    "owned_utilisation",
    "prob_cheaper_than_cloud",
    "best",
    "frontier",
]


def _plan_document(source: str) -> dict:
    """A variant of the worked plan (every input fixed): ``uncertain`` demand and burst price,
    or a ``single`` candidate over one month that owns servers and reserves nothing (all-cloud
    is then only the reference)."""
    doc = yaml.safe_load(PLAN_EXAMPLE.read_text("utf-8"))
    if source == "uncertain":
        doc["simulation"] = {"samples": 300, "seed": 5, "method": "lhs"}
        doc["demand"] = {
            "reference_gpu_hours_per_month": {
                "dist": "pert",
                "low": 1200,
                "mode": 2000,
                "high": 3500,
            },
            "annual_growth": {"dist": "uniform", "low": 0.1, "high": 0.9},
        }
        doc["burst"]["price_usd_per_hour"] = {"dist": "uniform", "low": 2.5, "high": 3.5}
    elif source == "single":
        doc["own"]["servers"] = {"min": 2, "max": 2}
        doc["reserve"] = None
        doc["horizon_months"] = 1
    return doc


@cache
def _plan_json(source: str) -> str:
    """A plan result as JSON text: of an example plan file (200 samples) or of a variant of
    the worked plan (see :func:`_plan_document`)."""
    if source.endswith(".yaml"):
        result = scenarios.evaluate(PLAN_EXAMPLE.with_name(source), samples=200)
    else:
        result = scenarios.evaluate(_plan_document(source))
    return to_json(result).decode("utf-8")


@cache
def _plan_rendered(source: str, fmt: str) -> bytes:
    return render(from_dict(json.loads(_plan_json(source))), fmt)


@pytest.fixture(
    params=[
        *(pytest.param(p.name, id=p.stem) for p in PLAN_EXAMPLES),
        "uncertain",
        "single",
    ]
)
def plan_source(request) -> str:
    return request.param


@pytest.fixture
def plan(plan_source) -> dict:
    return json.loads(_plan_json(plan_source))


def _shown(plan: dict) -> list[dict]:
    """The candidates a plan report lists: all-cloud first when it is not a candidate."""
    cands = plan["candidates"]
    cloud = [] if any(c["servers"] == c["instances"] == 0 for c in cands) else [plan["all_cloud"]]
    return cloud + cands


def test_plan_json_is_the_contract(plan_source, plan):
    assert json.loads(_plan_rendered(plan_source, "json")) == plan
    assert plan["kind"] == "plan"


def test_plan_html_shows_the_plan(plan_source, plan):
    page = _parse_html(_plan_rendered(plan_source, "html"))
    assert page.by_id["verdict"] == " ".join(plan["verdict"].split())
    cells = page.cells
    start = cells.index("Servers")
    width = cells.index("Plan", start) - start + 1  # 11 columns, 12 with carbon
    header = cells[start : start + width]
    rows = [cells[i : i + width] for i in range(start + width, len(cells), width)]
    rows = rows[: len(_shown(plan))]
    for row, c in zip(rows, _shown(plan), strict=True):
        got = dict(zip(header, row, strict=True))
        # a candidate that adds servers later reads "3 + 2 at 100 %"
        assert (got["Servers"].split(" ")[0], got["Reserved"]) == (
            str(c["servers"]),
            str(c["instances"]),
        )
        assert got["Cost mean"] == fmt_usd(c["cost"]["mean"])
        assert got["Cost P90"] == fmt_usd(c["cost"]["p90"])
        assert got["CVaR95"] == fmt_usd(c["cost"]["cvar95"])
        assert got["Owned share"] == fmt_share(c["share_owned"])
        assert got["P(cheaper than cloud)"] == fmt_share(c["prob_cheaper_than_cloud"])
        assert ("best" in got["Plan"]) == (_candidate_key(c) == _candidate_key(plan["best"]))
        on_frontier = _candidate_key(c) in {_candidate_key(f) for f in plan["frontier"]}
        marks = got["Plan"].replace("carbon frontier", "")  # the carbon frontier's own mark
        assert ("frontier" in marks) == on_frontier
    assert "best" in page.classes  # the best row is highlighted
    figures = dict(zip(cells[0:start:2], cells[1:start:2], strict=True))  # the best plan
    assert figures["Servers owned"] == str(plan["best"]["servers"])
    assert figures["Cost mean"] == fmt_usd(plan["best"]["cost"]["mean"])
    for a in plan["assumptions"]:
        assert a["key"] in cells and fmt_value(a["value"]) in cells
    text = " ".join(" ".join(page.text).split())
    assert f"GPU fleet plan: {plan['scenario']['name']}" in text
    for w in plan["warnings"]:
        assert " ".join(w["message"].split()) in text
    for value in (plan["seed"], plan["samples"], plan["method"], plan["catalog"]["version"]):
        assert str(value) in text


def _charts(plan: dict) -> int:
    """Three charts, and a fourth (owned capacity against the work) when servers are added."""
    return 3 + ("capacity" in plan["work_split"])


def test_plan_html_is_self_contained_with_its_charts(plan_source, plan):
    raw = _plan_rendered(plan_source, "html")
    page = _parse_html(raw)
    assert [r for r in page.refs if re.match(r"\s*(https?:)?//", r, re.I)] == []
    assert "script" not in page.tags and "link" not in page.tags and page.imgs == []
    assert len(_html_charts(raw)) == page.tags.count("svg") == _charts(plan)


def test_plan_markdown_tables_and_images(plan_source, plan):
    text = _plan_rendered(plan_source, "md").decode("utf-8")
    assert text.startswith("# GPU fleet plan: ")
    tables = _md_tables(text)
    cands = next(t for t in tables if t[0][0] == "Servers")
    header, rows = cands[0], cands[1:]
    shown = _shown(plan)
    assert len(rows) == len(shown)
    for col, stat in (("Cost P10", "p10"), ("Cost P50", "p50"), ("CVaR95", "cvar95")):
        i = header.index(col)
        assert [r[i] for r in rows] == [fmt_usd(c["cost"][stat]) for c in shown]
    best = dict(r for r in next(t for t in tables if t[0] == ["Figure", "Value"])[1:])
    assert best["Servers owned"] == str(plan["best"]["servers"])
    assert best["Instances reserved"] == str(plan["best"]["instances"])
    images = _MD_SVG.findall(text)
    assert len(images) == _charts(plan)
    for b64 in images:
        _svg_ok(base64.b64decode(b64))
    assert " ".join(plan["verdict"].split()) in text.replace("\\", "")


def test_plan_csv_round_trips_the_candidates(plan_source, plan):
    rows = list(csv.DictReader(io.StringIO(_plan_rendered(plan_source, "csv").decode("utf-8"))))
    header = list(rows[0])  # a plan that counts carbon adds its carbon columns
    assert [h for h in header if h in PLAN_HEADERS] == PLAN_HEADERS
    extra = [h for h in header if h not in PLAN_HEADERS]
    assert all(h.startswith("carbon_") or h in _ADDED_COLUMNS for h in extra)
    carbon = [h for h in extra if h.startswith("carbon_")]
    assert bool(carbon) == (plan.get("carbon_frontier") is not None)
    assert len(rows) == len(plan["candidates"])  # the candidates only, in order
    best = _candidate_key(plan["best"])
    frontier = {_candidate_key(f) for f in plan["frontier"]}
    for row, c in zip(rows, plan["candidates"], strict=True):
        assert (int(row["servers"]), int(row["instances"])) == (c["servers"], c["instances"])
        for s in ("mean", "p10", "p50", "p90", "cvar95"):
            assert float(row[f"cost_{s}"]) == c["cost"][s]  # exact: repr precision
        for k in ("share_owned", "owned_utilisation", "prob_cheaper_than_cloud"):
            assert float(row[k]) == c[k]
        key = _candidate_key(c)
        assert row["best"] == str(key == best) and row["frontier"] == str(key in frontier)


def _cost_columns(header) -> list[str]:
    """A candidates table's columns without the carbon ones a plan that counts carbon adds and
    the later purchase's of a plan that adds servers."""
    return [h for h in header if not h.startswith("carbon_") and h not in _ADDED_COLUMNS]


def _candidate_key(c: dict) -> tuple:
    """A plan candidate in JSON as a key: its servers, instances and later purchase."""
    add = c.get("add") or {}
    return (c["servers"], c["instances"], add.get("servers"), add.get("when_demand_above"),
            add.get("at_month"))  # fmt: skip


#: The columns of a plan that adds servers later (``own.add``).
_ADDED_COLUMNS = ("added", "when_demand_above", "at_month", "added_month_p50", "added_prob_never")


def test_plan_xlsx_sheets_and_numbers(plan_source, plan):
    from present.reports.xlsx import PLAN_SHEETS

    wb = openpyxl.load_workbook(io.BytesIO(_plan_rendered(plan_source, "xlsx")))
    assert wb.sheetnames == list(PLAN_SHEETS)
    assert wb.sheetnames == [
        "summary",
        "candidates",
        "frontier",
        "work_split",
        "assumptions",
        "warnings",
    ]
    ws = wb["candidates"]
    header = [c.value for c in ws[1]]
    assert _cost_columns(header) == PLAN_HEADERS and all(c.font.bold for c in ws[1])
    assert ws.max_row == len(plan["candidates"]) + 1
    for r, c in enumerate(plan["candidates"], start=2):
        got = dict(zip(header, (cell.value for cell in ws[r]), strict=True))
        assert (got["servers"], got["instances"]) == (c["servers"], c["instances"])
        for s in ("mean", "p10", "p50", "p90", "cvar95"):
            assert got[f"cost_{s}"] == pytest.approx(c["cost"][s], rel=1e-15, abs=0)
        assert got["share_owned"] == pytest.approx(c["share_owned"], rel=1e-15, abs=0)
        assert isinstance(got["best"], bool) and isinstance(got["frontier"], bool)
    fmt = {h: ws.cell(2, i + 1).number_format for i, h in enumerate(header)}
    assert fmt["cost_p50"] == "$#,##0" and fmt["share_owned"] == "0.0%"
    assert fmt["prob_cheaper_than_cloud"] == "0.0%" and fmt["servers"] == "General"
    front = list(wb["frontier"].iter_rows(values_only=True))
    assert _cost_columns(front[0]) == PLAN_HEADERS[:-1]  # the candidates' columns, but the flag
    keys = [(c["servers"], c["instances"]) for c in _frontier(plan)]
    assert [row[:2] for row in front[1:]] == keys
    split = wb["work_split"]
    # a plan that adds servers later also gives the owned capacity and the work's P10 and P90
    staged = "capacity" in plan["work_split"]
    further = ["owned_capacity_ref_gpu_hours", "work_p10_ref_gpu_hours", "work_p90_ref_gpu_hours"]
    assert [c.value for c in split[1]] == [
        "month",
        "owned_ref_gpu_hours",
        "reserved_ref_gpu_hours",
        "burst_ref_gpu_hours",
        *(further if staged else []),
    ]
    months = list(split.iter_rows(min_row=2, values_only=True))
    assert [m[0] for m in months] == list(range(1, len(plan["work_split"]["owned"]) + 1))
    keys = ("owned", "reserved", "burst", *(("capacity", "demand_p10", "demand_p90") * staged))
    for i, key in enumerate(keys, start=1):
        assert [m[i] for m in months] == [
            pytest.approx(v, rel=1e-15, abs=0) for v in plan["work_split"][key]
        ]
    summary = {r[0]: r[1] for r in wb["summary"].iter_rows(min_row=2, values_only=True)}
    assert summary["verdict"] == plan["verdict"] and summary["objective"] == plan["objective"]
    assert summary["best_servers"] == plan["best"]["servers"]
    assert summary["best_instances"] == plan["best"]["instances"]
    assert summary["best_cost_p50"] == pytest.approx(plan["best"]["cost"]["p50"], rel=1e-15)
    assert summary["all_cloud_cost_mean"] == pytest.approx(plan["all_cloud"]["cost"]["mean"])
    assert summary["candidates_count"] == len(plan["candidates"])
    assert summary["seed"] == plan["seed"] and summary["scenario_name"] == plan["scenario"]["name"]
    keys = [r[0] for r in wb["assumptions"].iter_rows(min_row=2, values_only=True)]
    assert keys == [a["key"] for a in plan["assumptions"]]
    assert wb["warnings"].max_row == len(plan["warnings"]) + 1


def _frontier(plan: dict) -> list[dict]:
    """The frontier's candidates of a plan's JSON, cheapest mean first (then lowest P90)."""
    return sorted(plan["frontier"], key=lambda c: (c["cost"]["mean"], c["cost"]["p90"]))


_XML = {
    "c": "http://schemas.openxmlformats.org/drawingml/2006/chart",
    "m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "p": "http://schemas.openxmlformats.org/package/2006/relationships",
}


def _related(package: zipfile.ZipFile, part: str) -> dict[str, str]:
    """The relationships of a package part: id -> the part it points to."""
    folder, name = posixpath.split(part)
    rels = posixpath.join(folder, "_rels", f"{name}.rels")
    if rels not in package.namelist():
        return {}
    out = {}
    for rel in ET.fromstring(package.read(rels)).iterfind("p:Relationship", _XML):
        target = rel.get("Target")
        path = target[1:] if target.startswith("/") else posixpath.join(folder, target)
        out[rel.get("Id")] = posixpath.normpath(path)
    return out


def _xlsx_charts(data: bytes) -> dict[str, list[dict]]:
    """Each sheet's charts, read back from the package (sheet -> drawing -> chart): the chart
    type, its grouping, whether every axis is shown, and each series' title and the cell
    ranges of its x (or categories) and y (or values)."""
    charts: dict[str, list[dict]] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        sheets = _related(package, "xl/workbook.xml")
        book = ET.fromstring(package.read("xl/workbook.xml"))
        for sheet in book.iterfind("m:sheets/m:sheet", _XML):
            part = sheets[sheet.get(f"{{{_XML['r']}}}id")]
            for drawing in _related(package, part).values():
                for chart in _related(package, drawing).values():
                    charts.setdefault(sheet.get("name"), []).append(
                        _chart(ET.fromstring(package.read(chart)))
                    )
    return charts


def _chart(root: ET.Element) -> dict:
    plot = root.find("c:chart/c:plotArea", _XML)
    kind = next(e for e in plot if e.tag.endswith("Chart"))
    grouping = kind.find("c:grouping", _XML)
    series = []
    for ser in kind.iterfind("c:ser", _XML):
        refs = {tag: ser.find(f"c:{tag}//c:f", _XML) for tag in ("xVal", "cat", "yVal", "val")}
        series.append(
            {
                "title": ser.findtext("c:tx/c:v", namespaces=_XML),
                "x": (refs["xVal"] if refs["xVal"] is not None else refs["cat"]).text,
                "y": (refs["yVal"] if refs["yVal"] is not None else refs["val"]).text,
            }
        )
    axes = [a for a in plot if a.tag.endswith("Ax")]
    mins = [a.find("c:scaling/c:min", _XML) for a in axes]
    return {
        "mins": [None if m is None else float(m.get("val")) for m in mins],
        "kind": kind.tag.split("}")[1],
        "grouping": None if grouping is None else grouping.get("val"),
        "axes_shown": len(axes) == 2
        and all(a.find("c:delete", _XML).get("val") == "0" for a in axes),
        "series": series,
    }


def _cells(wb: openpyxl.Workbook, ref: str) -> list:
    """The values of a chart's cell range such as ``'frontier'!$C$2:$C$4``."""
    sheet, cells = ref.replace("$", "").rsplit("!", 1)
    first, _, last = cells.partition(":")
    rows = wb[sheet.strip("'")][f"{first}:{last or first}"]
    return [c.value for row in rows for c in row]


def test_plan_xlsx_has_the_frontier_and_work_split_charts(plan_source, plan):
    data = _plan_rendered(plan_source, "xlsx")
    charts = _xlsx_charts(data)
    assert sorted(charts) == ["frontier", "work_split"]
    wb = openpyxl.load_workbook(io.BytesIO(data))
    (front,) = charts["frontier"]
    assert front["kind"] == "scatterChart" and front["axes_shown"]
    drawn = {s["title"]: (_cells(wb, s["x"]), _cells(wb, s["y"])) for s in front["series"]}
    assert list(drawn) == ["candidate", "frontier", "best plan", "all-cloud"]

    def points(cands):
        xs = [pytest.approx(c["cost"]["mean"], rel=1e-15) for c in cands]
        return (xs, [pytest.approx(c["cost"]["p90"], rel=1e-15) for c in cands])

    assert drawn["candidate"] == points(plan["candidates"])
    assert drawn["frontier"] == points(_frontier(plan))
    assert drawn["best plan"] == points([plan["best"]])
    assert drawn["all-cloud"] == points([plan["all_cloud"]])
    # each axis starts at a multiple of half a power of ten, at most halfway below the lowest
    xs = [x for x_values, _ in drawn.values() for x in x_values]
    ys = [y for _, y_values in drawn.values() for y in y_values]
    for lowest, start in zip((min(xs), min(ys)), front["mins"], strict=True):
        assert 0.5 * lowest < start <= lowest
        halves = 2 * start / 10 ** math.floor(math.log10(start))
        assert halves == pytest.approx(round(halves), abs=1e-9)
    (split,) = charts["work_split"]
    assert split["kind"] == "barChart" and split["grouping"] == "stacked"
    assert split["axes_shown"]
    months = list(range(1, len(plan["work_split"]["owned"]) + 1))
    layers = [
        (key, label)
        for key, label in (
            ("owned", "owned servers"),
            ("reserved", "reserved instances"),
            ("burst", "burst instances"),
        )
        if any(v > 0 for v in plan["work_split"][key])
    ] or [("owned", "owned servers")]
    assert [s["title"] for s in split["series"]] == [label for _, label in layers]
    for s, (key, _) in zip(split["series"], layers, strict=True):
        assert _cells(wb, s["x"]) == months
        assert _cells(wb, s["y"]) == pytest.approx(plan["work_split"][key], rel=1e-15)


def test_the_scenario_xlsx_chart_shows_its_axes(sample):
    (chart,) = _xlsx_charts(render(_typed(sample), "xlsx"))["per_utilisation"]
    assert chart["kind"] == "scatterChart" and chart["axes_shown"]
    assert [s["title"] for s in chart["series"]] == ["Buy P50", "Rent P50"]


@pytest.mark.parametrize("source", ["plan-h100-fleet-reserved-spot.yaml", "uncertain"])
def test_cost_by_servers_bands_only_the_best_reservation_count(source):
    from present.reports.plan_charts import servers_chart

    plan = from_dict(json.loads(_plan_json(source)))
    (ax,) = svgread.axes(svgread.parse(servers_chart(plan)))
    counts = sorted({c.instances for c in plan.candidates})
    assert len(counts) > 1
    colours = [ax.colour(f"{k} reserved: mean") for k in counts]
    assert len(set(colours)) == len(counts)  # distinct colours
    bands = [label for label in ax.labels() if label.endswith("P10–P90")]
    assert bands == [f"{plan.best.instances} reserved (as the best plan): P10–P90"]
    assert ax.colour(bands[0]) == colours[counts.index(plan.best.instances)]
    ys = ax.polygon(bands[0])[:, 1]
    mine = [c for c in plan.candidates if c.instances == plan.best.instances]
    tol = 1e-4 * max(c.cost.p90 for c in plan.candidates)
    assert ys.min() == pytest.approx(min(c.cost.p10 for c in mine), abs=tol)
    assert ys.max() == pytest.approx(max(c.cost.p90 for c in mine), abs=tol)


def test_plan_write_md_puts_the_charts_beside(tmp_path):
    result = from_dict(json.loads(_plan_json("uncertain")))
    paths = write(result, "md", tmp_path / "fleet plan.md")
    charts = ["frontier", "cost_by_servers", "work_split"]
    assert [p.name for p in paths] == ["fleet plan.md", *(f"fleet plan_{c}.svg" for c in charts)]
    text = paths[0].read_text("utf-8")
    assert re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text) == [f"fleet%20plan_{c}.svg" for c in charts]
    for p in paths[1:]:
        _svg_ok(p.read_bytes())


def _hostile_plan(text: str) -> dict:
    """The uncertain plan's result with ``text`` in every text field its author controls."""
    out = json.loads(_plan_json("uncertain"))
    out["scenario"].update(name=text, description=text)
    out["verdict"] = text
    out["catalog"] = {"version": text, "as_of": text}
    out["warnings"] = [{"code": text, "severity": "warning", "message": text}]
    out["assumptions"] = [{"key": text, "value": text, "unit": text, "source": text}]
    return out


@pytest.mark.parametrize("text", FORMULAS)
def test_plan_spreadsheets_never_hold_formulas(text):
    typed = from_dict(_hostile_plan(text))
    cells = list(_xlsx_cells(render(typed, "xlsx")))
    assert [c.coordinate for c in cells if c.data_type == "f"] == []
    texts = [c.value for c in cells if isinstance(c.value, str)]
    assert not [t for t in texts if t[0] in "=+-@\t\r"]
    # summary: verdict, catalog version and date, name; warning code and message; assumption
    # key, value, unit and source
    assert len([t for t in texts if t.startswith("'") and t[2:] == text[1:]]) == 10, texts
    # the CSV report is the candidates table: numbers and flags, nothing of the author's text
    rows = list(csv.reader(io.StringIO(render(typed, "csv").decode("utf-8"))))
    assert {cell for row in rows[1:] for cell in row[-2:]} <= {"True", "False"}
    assert all(float(cell) == float(cell) for row in rows[1:] for cell in row[:-2])


@pytest.mark.parametrize("text", MARKUP)
def test_plan_markdown_and_html_show_the_authors_markup_as_text(text, no_charts):
    typed = from_dict(_hostile_plan(text))
    md = render(typed, "md").decode("utf-8")
    for page in _md_pages(md):
        assert [t for t in page.tags if t in ("a", "script", "em", "s", "del", "code", "hr")] == []
        assert page.tags.count("h1") == 1 and page.tags.count("img") == 3
        assert not [r for r in page.refs if "javascript" in r or "evil" in r]
        assert " ".join("".join(page.text).split()).count(" ".join(text.split())) >= 9
    page = _parse_html(render(typed, "html"))
    assert [t for t in page.tags if t in ("a", "script", "em")] == []
    assert not [r for r in page.refs if "javascript" in r] and page.tags.count("svg") == 3
    assert "".join(page.text).count(text) >= 9


@pytest.mark.parametrize(
    ("usd", "label"),
    [
        (0, "$0"),
        (999, "$999"),
        (1000, "$1k"),
        (62_500, "$62.5k"),  # a tick of a 2.5k step: it read "$62k" (62.5 rounded half to even)
        (-62_500, "-$62.5k"),
        (1_025_000, "$1.025M"),  # a 25k step above a million: it read "$1.0M"
        (1_250_000, "$1.25M"),
        (-3_000_000, "-$3M"),
        (0.1 + 0.2, "$0"),
        (1_200_000.0000000002, "$1.2M"),  # a step's floating-point sum reads as the step
    ],
)
def test_money_ticks_keep_the_decimals_their_value_needs(usd, label):
    from present.reports.charts import usd_tick

    assert usd_tick(usd) == label


def _leaf_paths(node: object, path: tuple = ()) -> Iterator[tuple]:
    """Every key path of a parsed JSON document, parents before their children."""
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, value in items:
        yield (*path, key)
        yield from _leaf_paths(value, (*path, key))


_FIXTURE_PATHS = list(_leaf_paths(json.loads(FIXTURE.read_text("utf-8"))))
#: Text a report can hold: 'costmodel report' refuses control characters before from_dict.
_TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=8)
_ODD = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_a_hand_edited_result_is_refused_or_reported(data):
    # Any one value of a result replaced by another of any JSON type: from_dict refuses it at
    # its key path, or every fast report of it is written. Found a scenario echo and
    # distributions read without care.
    doc = json.loads(FIXTURE.read_text("utf-8"))
    path = data.draw(st.sampled_from(_FIXTURE_PATHS))
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = data.draw(_ODD | st.lists(_ODD, max_size=2) | st.just({}))
    try:
        result = from_dict(doc)
    except ValidationError:
        return
    for fmt in ("xlsx", "csv", "json"):
        render(result, fmt)
