"""The web page (GET /, api/web) through Flask's test client: the page renders the example's
verdict with a label on every input, a tab per view (the compare view's inputs are the options
of POST /v1/compare), a scenario form that follows the kind of work (its rules, in the JSON
Schema the form is read from, are the loader's), its assets are served with their content
types, nothing in it points to another origin, and it adds nothing to the API's error
contract. The page in a real browser is tests/test_web_browser.py."""

from __future__ import annotations

import copy
import hashlib
import html
import json
import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient

import scenarios
from api import create_app
from api.web import views
from api.web.form import FORMS, compare_form, form
from scenarios.jsonschema import scenario_json_schema
from scenarios.keyref import key_reference
from tests.helpers import package_data_files

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "api" / "web"
STATIC = WEB / "static"
EXAMPLES = ROOT / "scenarios" / "examples"
ERROR_KEYS = {"code", "status", "message", "errors"}
ASSETS = sorted(p for p in STATIC.rglob("*") if p.is_file())
TYPES = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".md": "text/markdown",
    "": "text/plain",  # LICENSE
}


def make_app(tmp_path: Path, **config: Any) -> Flask:
    return create_app(
        {"TESTING": True, "DB": str(tmp_path / "runs.sqlite3"), "API_KEYS": "", **config}
    )


@pytest.fixture
def client(tmp_path: Path) -> FlaskClient:
    return make_app(tmp_path).test_client()


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    app = make_app(tmp_path_factory.mktemp("web"))
    response = app.test_client().get("/")
    assert response.status_code == 200
    return response.get_data(as_text=True), dict(response.headers)


class _Elements(HTMLParser):
    """Every start tag as (tag, attributes), and the text of <script> and <label> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.labels: list[tuple[dict[str, str | None], list[str]]] = []  # (attrs, ids inside)
        self._open_labels: list[tuple[dict[str, str | None], list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "label":
            self._open_labels.append((a, []))
        elif tag in ("input", "select", "textarea") and self._open_labels:
            self._open_labels[-1][1].append(a.get("id") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "label" and self._open_labels:
            self.labels.append(self._open_labels.pop())


def _elements(text: str) -> _Elements:
    parser = _Elements()
    parser.feed(text)
    return parser


# --- the page --------------------------------------------------------------------------------


def test_page_shows_the_example_evaluated(page):
    text, headers = page
    assert headers["Content-Type"].startswith("text/html")
    name = views.DEFAULT_EXAMPLES["scenario"]
    verdict = scenarios.evaluate(EXAMPLES / f"{name}.yaml").verdict
    match = re.search(r'<p class="verdict" id="verdict"[^>]*>(.*?)</p>', text, re.S)
    assert match and html.unescape(match.group(1)) == verdict
    # The YAML editor holds the example's text, comments and all.
    source = (EXAMPLES / f"{name}.yaml").read_text("utf-8")
    textarea = re.search(r'<textarea id="scenario-yaml"[^>]*>(.*?)</textarea>', text, re.S)
    assert textarea and html.unescape(textarea.group(1)) == source
    # The scripts get the same result the API would answer.
    boot = re.search(r'<script type="application/json" id="boot">(.*?)</script>', text, re.S)
    assert boot and '"verdict"' in boot.group(1)


def test_page_forbids_other_origins(page):
    _, headers = page
    csp = headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp
    for directive in ("script-src", "style-src", "font-src", "connect-src"):
        assert f"{directive} 'self';" in csp
    assert "http" not in csp and "*" not in csp
    assert headers["X-Content-Type-Options"] == "nosniff"


def test_every_input_has_a_label(page):
    parsed = _elements(page[0])
    controls = [
        a
        for tag, a in parsed.tags
        if tag in ("input", "select", "textarea") and a.get("type") != "hidden"
    ]
    assert len(controls) > 40
    labelled = {a.get("for") for a, _ in parsed.labels} | {
        i for _, inside in parsed.labels for i in inside
    }
    unlabelled = [
        a.get("id")
        for a in controls
        if a.get("id") not in labelled and not a.get("aria-label") and not a.get("aria-labelledby")
    ]
    assert unlabelled == []
    ids = [a["id"] for _, a in parsed.tags if a.get("id")]
    assert len(ids) == len(set(ids)), "duplicate ids"


def test_every_form_field_is_on_the_page(page):
    text = page[0]
    for kind in FORMS:
        for section in form(kind):
            for f in section.fields:
                assert f'data-path="{f.path}"' in text
                assert f'id="{kind}-{f.slug}-field"' in text
                assert f'id="{kind}-{f.slug}-error"' in text


def test_form_fields_are_keys_of_the_format():
    """Uncertain fields are number-or-distribution keys; choices are the schema's."""
    defs = scenario_json_schema()["$defs"]
    assert defs  # the schema the form is read from
    for kind in FORMS:
        for section in form(kind):
            for f in section.fields:
                if f.kind == "uncertain":
                    assert f.unit.startswith("[") and f.range, f.path
                if f.kind == "choice":
                    assert f.choices and f.default in f.choices, f.path
    pricing = next(f for s in form("scenario") for f in s.fields if f.path == "rent.pricing")
    assert pricing.choices == ("on_demand", "spot", "reserved_1y", "reserved_3y")


def _reference_rows() -> dict[str, list[str]]:
    """The key reference's cells (type, unit, range, default, meaning) by key path."""
    rows = {}
    for row in key_reference().splitlines():
        if row.startswith("| `"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
            rows.setdefault(cells[0].strip("`"), cells[1:])
    return rows


def test_form_units_and_ranges_are_the_bounds_of_the_format():
    """Each numeric field's unit is the schema's x-unit and its range the key reference's,
    open or closed ends and all (both from the field's bound): the discount rate is
    (-0.5, 1], not [-0.5, 1]."""
    rows = _reference_rows()
    numeric = ("integer", "number", "uncertain", "levels", "counts", "grid")
    checked = 0
    for kind in FORMS:
        for f in (f for section in form(kind) for f in section.fields if f.kind in numeric):
            key = f"{f.path}.{f.parts[0][0]}" if f.kind in ("levels", "counts") else f.path
            # Documented once: a reservation's and the added servers' counts as the servers',
            # an API burst's keys as the scenario's api keys.
            for other in ("reserve.instances", "own.add.servers"):
                key = key.replace(other, "own.servers")
            cells = rows[key.replace("burst.api.", "api.")]
            assert f.unit == cells[1] and f.unit.startswith("["), (kind, f.path)
            assert f.range == cells[2] and f"range {f.range}" in f.hint, (kind, f.path)
            assert f.unit not in f.description, (kind, f.path)
            checked += 1
    assert checked > 20
    discount = next(f for s in form("scenario") for f in s.fields if f.path == "discount_rate")
    assert "range (-0.5, 1]" in discount.hint


# --- the kind of work ------------------------------------------------------------------------

#: An inference scenario: Llama 3.3 70B at FP8 on 8x H100, owned, rented or from a hosted API.
INFERENCE = {
    "version": 1,
    "name": "70b-fp8-h100",
    "simulation": {"samples": 200},
    "workload": {
        "kind": "inference",
        "model": "llama-3.3-70b",
        "precision": "fp8",
        "input_tokens": 1000,
        "output_tokens": 1000,
        "min_tokens_per_s_per_user": 20,
    },
    "buy": {"gpu": "h100-sxm5-80gb", "gpu_count": 8},
    "rent": {"instance": "lambda/gpu_8x_h100_sxm5"},
    "api": {"model": "together/llama-3.3-70b-instruct-turbo"},
}
LAB = yaml.safe_load((EXAMPLES / "lab-4x-rtx2080ti-vs-p3-8xlarge.yaml").read_text("utf-8"))
PLAN = yaml.safe_load((EXAMPLES / "plan-lab-rtx4090-growth.yaml").read_text("utf-8"))
OFFER = INFERENCE["api"]["model"]


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = scenario_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _edited(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``doc`` with the key ``path`` set to ``value`` (``...``: removed)."""
    out = copy.deepcopy(doc)
    *parents, key = path.split(".")
    node = out
    for name in parents:
        node = node[name]
    if value is ...:
        del node[key]
    else:
        node[key] = value
    return out


@pytest.mark.parametrize(
    ("doc", "valid"),
    [
        (INFERENCE, True),
        (_edited(INFERENCE, "workload.model", ...), False),
        (_edited(INFERENCE, "workload.model", None), False),  # null is as good as absent
        (_edited(INFERENCE, "workload.output_tokens", ...), False),
        (_edited(INFERENCE, "workload.precision", "int8"), False),
        (_edited(INFERENCE, "workload.reference_gpu", "v100-sxm2-16gb"), False),
        (_edited(INFERENCE, "buy.relative_throughput", 1.5), False),
        (_edited(INFERENCE, "rent.tokens_per_s_per_gpu", 2000), True),
        (_edited(INFERENCE, "api", {"price_annual_change": -0.2}), False),
        (_edited(INFERENCE, "api", {"input_usd_per_mtok": 0.6, "output_usd_per_mtok": 0.8}), True),
        (_edited(INFERENCE, "api", ...), True),
        (_edited(LAB, "api", INFERENCE["api"]), False),
        (_edited(LAB, "workload.precision", "fp8"), False),
        (_edited(LAB, "workload.input_tokens", 1000), False),
        (_edited(LAB, "workload.kind", "training"), True),
        (_edited(LAB, "buy.tokens_per_s_per_gpu", 2000), False),
        (_edited(LAB, "buy.relative_throughput", 1.5), True),
        (_edited(PLAN, "own.tokens_per_s_per_gpu", 2000), False),
        (_edited(PLAN, "burst.relative_throughput", 1.5), True),
    ],
)
def test_the_schema_states_the_rules_of_the_kinds_of_work(validator, doc, valid):
    """The JSON Schema the form is read from refuses what the loader refuses for the kind of
    work (workload.kind): the keys it requires and its precisions, the other kind's workload
    keys, a side's throughput key and the api block; and an API without an offer or prices."""
    try:
        scenarios.load_mapping(doc)
        loaded = True
    except scenarios.ScenarioError:
        loaded = False
    assert loaded is valid
    assert validator.is_valid(doc) is valid


def test_the_form_follows_the_kind_of_work(page):
    """Fields and sections of one kind of work name it and start hidden unless training (the
    page arrives with a training scenario); the precision's choices are those of each kind;
    the page's rules of the kinds are the loader's."""
    parsed = _elements(page[0])
    marked = {a["id"]: a for _, a in parsed.tags if a.get("data-work") and a.get("id")}
    fields = [f for section in form("scenario") for f in section.fields]
    for f in fields:
        node = marked.get(f"scenario-{f.slug}-field")
        assert (node is None) == (f.work == ""), f.path
        if node:
            assert node["data-work"] == f.work and ("hidden" in node) == (f.work != "training")
    assert {f.path for f in fields if f.work == "inference"} >= {
        "workload.model",
        "workload.input_tokens",
        "workload.output_tokens",
        "workload.min_tokens_per_s_per_user",
        "workload.max_tpot_ms",
        "workload.max_ttft_ms",
        "buy.tokens_per_s_per_gpu",
        "rent.tokens_per_s_per_gpu",
    }
    api = next(s for s in form("scenario") if s.title == "Hosted API")
    assert api.work == "inference" and {f.path.split(".")[0] for f in api.fields} == {"api"}
    precision = next(f for f in fields if f.path == "workload.precision")
    kinds = dict(zip(precision.choices, precision.choice_work, strict=True))
    assert kinds == {
        "fp32": ("training",),
        "fp16": ("training", "inference"),
        "int8": ("training",),
        "fp8": ("inference",),
        "fp4": ("inference",),
    }
    options = [a for tag, a in parsed.tags if tag == "option" and a.get("data-work")]
    assert [(o["value"], o["data-work"], "hidden" in o) for o in options] == [
        (c, " ".join(k), "training" not in k) for c, k in kinds.items()
    ] * len(FORMS)  # the scenario's precision, then the plan's
    boot = re.search(r'<script type="application/json" id="boot">(.*?)</script>', page[0], re.S)
    assert boot and json.loads(html.unescape(boot.group(1)))["work"] == views.work_rules()
    rules = views.work_rules()
    assert rules["default"] == "training"
    assert rules["kinds"]["inference"] == {
        "only": [
            "model",
            "input_tokens",
            "output_tokens",
            "min_tokens_per_s_per_user",
            "max_tpot_ms",
            "max_ttft_ms",
        ],
        "precisions": ["fp16", "fp8", "fp4"],
        "throughput": "tokens_per_s_per_gpu",
        "blocks": ["api"],
        "paths": ["demand.million_tokens_per_month", "burst.api"],
    }
    assert rules["kinds"]["training"]["throughput"] == "relative_throughput"


def _field(kind: str, path: str) -> Any:
    return next(f for s in form(kind) for f in s.fields if f.path == path)


def test_the_scenario_form_takes_the_carbon_inputs(page):
    """The owned and rented grids are selects of the catalog's grids with a value of one's own
    (low / likely / high, hidden until chosen) in the format's unit and range; the grid's
    change, the provider's PUE, the API's emissions (inference only) and the carbon price
    are uncertain inputs; none has a value of the form's own (empty: the format's default)."""
    parsed = _elements(page[0])
    tags = {a["id"]: (tag, a) for tag, a in parsed.tags if a.get("id")}
    for path, empty in (("buy.grid", "default"), ("rent.grid", "the region's")):
        f = _field("scenario", path)
        assert (f.kind, f.select, f.empty) == ("grid", True, empty)
        assert (f.unit, f.range) == ("[gCO2e/kWh]", "[0, 2,000]")
        assert f.parts == (("low", "low"), ("mode", "likely"), ("high", "high"))
        id_ = f"scenario-{f.slug}"
        assert tags[id_][0] == "select" and "data-input" in tags[id_][1]
        for part, _ in f.parts:
            assert tags[f"{id_}-{part}"][1]["data-part"] == part
        own = [a for tag, a in parsed.tags if a.get("data-role") == "own-value"]
        assert own and all("hidden" in a for a in own)
    carbon = {
        "buy.grid_annual_change": ("[1/year]", ""),
        "rent.pue": ("[-]", ""),
        "api.g_co2e_per_mtok": ("[gCO2e/M tokens]", "inference"),
        "carbon.usd_per_tonne": ("[USD/t CO2e]", ""),
    }
    for path, (unit, work) in carbon.items():
        f = _field("scenario", path)
        section = next(s for s in form("scenario") if f in s.fields)
        assert (f.kind, f.unit, section.work or f.work) == ("uncertain", unit, work), path
        assert f.default is None and f.initial is None, path
    # An emptied grid is the default; a number, a distribution or a grid id are all the format's.
    for grid in (None, "DE", "aws/us-east-1", 250.0, {"dist": "uniform", "low": 100, "high": 300}):
        doc = _edited(LAB, "buy.grid", grid) if grid is not None else copy.deepcopy(LAB)
        doc = _edited(doc, "rent.grid", grid) if grid is not None else doc
        assert scenarios.load_mapping(doc)


def test_the_plan_form_takes_the_carbon_inputs(page, validator):
    """The plan's owned grid is the scenario's grid field at own.grid (the catalog's grids or a
    value of one's own, in the format's unit and range); the grid's change, the carbon price and
    an API burst's emissions (inference only) are uncertain inputs without a value of the form's
    own. Emptied, a key is absent and the plan counts no carbon; given, it counts carbon."""
    parsed = _elements(page[0])
    tags = {a["id"]: (tag, a) for tag, a in parsed.tags if a.get("id")}
    grid = _field("plan", "own.grid")
    assert replace(grid, path="buy.grid") == _field("scenario", "buy.grid")
    assert (grid.kind, grid.empty, grid.unit, grid.range) == (
        "grid",
        "default",
        "[gCO2e/kWh]",
        "[0, 2,000]",
    )
    assert tags["plan-own-grid"][0] == "select" and "data-input" in tags["plan-own-grid"][1]
    for part, _ in grid.parts:
        assert tags[f"plan-own-grid-{part}"][1]["data-part"] == part
    carbon = {
        "own.grid_annual_change": ("Own", "[1/year]", ""),
        "carbon.usd_per_tonne": ("Carbon", "[USD/t CO2e]", ""),
        "burst.api.g_co2e_per_mtok": ("Burst", "[gCO2e/M tokens]", "inference"),
    }
    for path, (title, unit, work) in carbon.items():
        f = _field("plan", path)
        section = next(s for s in form("plan") if f in s.fields)
        assert (section.title, f.kind, f.unit, f.work) == (title, "uncertain", unit, work), path
        assert f.default is None and f.initial is None and f.range in f.hint, path
    assert "never as 0" in _field("plan", "burst.api.g_co2e_per_mtok").hint
    # Emptied: no carbon counted; a catalog grid, a value or a distribution: carbon counted.
    assert scenarios.load_mapping(PLAN).inputs.carbon is None
    for path, value in (
        ("own.grid", "DE"),
        ("own.grid", {"dist": "uniform", "low": 100, "high": 300}),
        ("own.grid_annual_change", -0.03),
        ("carbon", {"usd_per_tonne": 100}),
    ):
        doc = _edited(PLAN, path, value)
        assert validator.is_valid(doc) and scenarios.load_mapping(doc).inputs.carbon, path
    api = _edited(PLAN, "burst", {"api": {"model": OFFER, "g_co2e_per_mtok": 400}})
    del api["reserve"], api["demand"]["reference_gpu_hours_per_month"], api["workload"]
    api = _edited(api, "demand.million_tokens_per_month", 20000)
    api = _edited(api, "own.gpu", "h100-sxm5-80gb")
    api["workload"] = INFERENCE["workload"]
    assert validator.is_valid(api) and scenarios.load_mapping(api).inputs.carbon


def test_the_plan_form_takes_inference_work(validator):
    """The plan form has the workload's fields (as the scenario's), the demand in tokens, the
    daily peak and a burst to a hosted API; a plan of inference work made of the form's keys
    loads. The page's rules name the plan keys of one kind of work only: each is refused in a
    plan of the other kind."""
    fields = {f.path: f for s in form("plan") for f in s.fields}
    scenario = {f.path: f for s in form("scenario") for f in s.fields}
    for path in [p for p in scenario if p.startswith("workload.")]:
        assert fields[path] == scenario[path], path
    inference = {p for p, f in fields.items() if f.work == "inference"}
    assert inference >= {
        "workload.model",
        "workload.input_tokens",
        "demand.million_tokens_per_month",
        "burst.api.model",
        "own.tokens_per_s_per_gpu",
        "burst.tokens_per_s_per_gpu",
    }
    assert fields["demand.reference_gpu_hours_per_month"].work == "training"
    assert fields["demand.peak_to_mean"].work == "" and fields["demand.peak_to_mean"].unit == "[-]"
    assert (fields["burst.api.model"].kind, fields["burst.api.model"].empty) == (
        "offer",
        "none (burst to the instance)",
    )
    # An inference plan in the form's keys (its own GPU, no reservation, an API burst).
    plan = copy.deepcopy(PLAN)
    del plan["reserve"], plan["demand"]["reference_gpu_hours_per_month"]
    for path, value in {
        "workload.kind": "inference",
        "workload.model": "llama-3.3-70b",
        "workload.precision": "fp8",
        "workload.input_tokens": 1000,
        "workload.output_tokens": 1000,
        "demand.million_tokens_per_month": 20000,
        "demand.peak_to_mean": 1.5,
        "own.gpu": "h100-sxm5-80gb",
        "own.gpu_count": 8,
    }.items():
        assert path in fields
        plan = _edited(plan, path, value)
    del plan["workload"]["reference_gpu"]
    plan["burst"] = {"api": {"model": "together/llama-3.3-70b-instruct-turbo"}}
    assert scenarios.load_mapping(plan) and validator.is_valid(plan)
    rules = views.work_rules()["kinds"]
    for kind, other in (("training", "inference"), ("inference", "training")):
        for path in rules[other]["paths"]:
            base = plan if kind == "inference" else PLAN
            value = {"demand.gpu": "a10g", "burst.api": plan["burst"]["api"]}.get(path, 100)
            with pytest.raises(scenarios.ScenarioError):
                scenarios.load_mapping(_edited(base, path, value))


def test_page_has_a_tab_and_a_module_per_view(page):
    """Each view of views.VIEWS is a tab (in order, the first selected), a panel, a template and
    a script, and main.js's VIEWS table lists the same views in the same order."""
    parsed = _elements(page[0])
    tabs = [a for tag, a in parsed.tags if a.get("role") == "tab"]
    ids = [id_ for id_, _ in views.VIEWS]
    assert [t["data-view"] for t in tabs] == ids == ["scenario", "plan", "compare"]
    assert [t["aria-selected"] for t in tabs] == ["true"] + ["false"] * (len(ids) - 1)
    assert [t["tabindex"] for t in tabs] == ["0"] + ["-1"] * (len(ids) - 1)
    panels = {a["id"]: a for tag, a in parsed.tags if a.get("role") == "tabpanel"}
    for tab in tabs:
        panel = panels[tab["aria-controls"]]
        assert panel["aria-labelledby"] == tab["id"]
        assert ("hidden" in panel) == (tab["data-view"] != "scenario")
    main = (STATIC / "js" / "main.js").read_text("utf-8")
    table = re.search(r"^const VIEWS = \{ ([\w, ]+) \};$", main, re.M)
    assert table and table.group(1).split(", ") == ids
    for id_ in ids:
        assert (WEB / "templates" / "web" / f"_{id_}.html").is_file()
        assert (STATIC / "js" / "views" / f"{id_}.js").is_file()
        assert f'import * as {id_} from "./views/{id_}.js";' in main


def test_the_page_names_the_sides_in_the_words_the_engine_registers(page):
    """The page lists every registered kind of side, in the registry's order, with its words
    (its "sides" element, read by static/js/sides.js), and its scripts and templates keep no
    copy of those words: a side's label or choosing words are never written in them."""
    from costmodel.sides import SIDES

    listed = re.search(r'<script type="application/json" id="sides">(.*?)</script>', page[0])
    assert listed
    words = [{k: s[k] for k in ("name", "label", "option", "doing", "owned")} for s in
             json.loads(html.unescape(listed.group(1)))]  # fmt: skip
    assert words == [
        {"name": s.name, "label": s.label, "option": s.option, "doing": s.doing, "owned": s.owned}
        for s in SIDES.values()
    ]
    assert [w["name"] for w in words] == ["buy", "rent", "api"]  # the owned side first
    copies = [f'"{w}"' for s in SIDES.values() for w in (s.label, s.doing)]
    for path in [*STATIC.glob("js/*.js"), *STATIC.glob("js/views/*.js")]:
        code = "\n".join(line for line in path.read_text("utf-8").splitlines()
                         if not line.lstrip().startswith(("//", "*", "/**")))  # fmt: skip
        assert not [c for c in copies if c in code], path.name
    template = (WEB / "templates" / "web" / "_scenario.html").read_text("utf-8")
    shown = re.sub(r"\{#.*?#\}", "", template, flags=re.S)  # what the comments say aside
    assert "renting" not in shown and "the API" not in shown


def test_each_side_has_a_colour_the_reports_share_and_the_page_draws_it_with(client):
    """sides.css gives every registered side a colour (the reports' for buy, rent and the API)
    and the rules that draw it: its band, line and swatch, and for each rival its tornado bars
    and (after renting, whose line is the dashed grey one) its dotted break-even line."""
    from costmodel.sides import SIDES
    from present.reports import colours

    response = client.get("/assets/sides.css")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/css; charset=utf-8"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    css = response.get_data(as_text=True)
    given = dict(re.findall(r"^  --(\w+): (#[0-9a-f]{6});$", css, re.M))
    assert given == colours.side_colours()
    assert list(given) == list(SIDES) == ["buy", "rent", "api"]
    assert (given["buy"], given["rent"], given["api"]) == (colours.BUY, colours.RENT, colours.API)
    rules = set(re.findall(r"^(\S[^{\n]*?) \{$", css, re.M))
    for side in SIDES:
        assert {f".chart-svg .band.{side}", f".chart-svg .line.{side}", f".swatch.{side}"} <= rules
    assert {f".chart-svg .tornado-bar.dearer.{s}" for s in ("rent", "api")} <= rules
    assert ".chart-svg .be-line.api" in rules and ".chart-svg .be-line.rent" not in rules
    # app.css leaves each side's colour and its rules to sides.css
    app = (STATIC / "css" / "app.css").read_text("utf-8")
    assert not re.search(r"--(buy|rent|api):|\.(band|line|swatch)\.(buy|rent|api)\b", app)


def test_further_sides_take_the_further_colours_in_order(monkeypatch):
    """A side beyond buy, rent and the API takes the next of FURTHER_COLOURS, in the
    registry's order, round again after the last: in the page and the reports alike."""
    from costmodel.sides import SIDES
    from present.reports import colours

    further = colours.FURTHER_COLOURS
    names = [f"extra{i}" for i in range(len(further) + 1)]
    monkeypatch.setattr(colours, "SIDES", {**SIDES, **{n: None for n in names}})
    got = colours.side_colours()
    assert [got[n] for n in names] == [*further, further[0]]
    assert [colours.side_colour(n) for n in names] == [*further, further[0]]
    assert got["rent"] == "#d9620b" and colours.side_colour("unregistered") == colours.OTHER


def _select_values(text: str, id_: str) -> list[str]:
    select = re.search(rf'<select id="{id_}"[^>]*>(.*?)</select>', text, re.S)
    assert select, id_
    return re.findall(r'<option value="([^"]*)"', select.group(1))


def test_compare_inputs_are_the_options_of_the_compare_api(page, client):
    """The compare view offers the options of POST /v1/compare as its OpenAPI document gives
    them: each field a key of the request, the choices its enum, the defaults and ranges its
    own (utilisation in per cent, starting at the example)."""
    text = page[0]
    request = client.get("/openapi.json").get_json()["components"]["schemas"]["Compare"]
    keys = request["properties"]
    fields = [f for section in compare_form() for f in section.fields]
    assert {f.path for f in fields} == set(keys) - {"samples", "seed"}
    for f in fields:
        key = keys[f.path]
        assert f'id="compare-{f.slug}-field"' in text and f'id="compare-{f.slug}-error"' in text
        assert f'data-path="{f.path}"' in text
        if "enum" in key:
            assert f.kind == "choice"
            choices = [c for c in key["enum"] if c is not None]
            assert _select_values(text, f"compare-{f.slug}") == ["", *choices]
        scale = 100 if f.kind == "percent" else 1
        if f.kind in ("integer", "number"):
            assert f.unit == key["x-unit"] and f.unit.startswith("["), f.path
        if "minimum" in key:
            shown = [float(x.replace(",", "")) for x in f.range.strip("[(])").split(", ")]
            bounds = [key[k] * scale for k in ("minimum", "maximum")]
            assert shown == pytest.approx(bounds, rel=1e-12), f.path  # 1e-6 x 100: 1e-4
            assert f"range {f.range}" in f.hint
        default = key.get("default")
        if default is not None:
            assert f.default == default
            assert f'data-default="{default}"' in text
    assert all(keys[k]["x-unit"] for k in keys if keys[k].get("type") in ("integer", "number"))
    utilisation = next(f for f in fields if f.path == "utilisation")
    assert utilisation.kind == "percent" and utilisation.range == "[0.0001, 100]"
    assert float(utilisation.initial) == keys["utilisation"]["example"] * 100
    match = re.search(r'<input id="compare-utilisation"[^>]*>', text)
    assert match and f'value="{utilisation.initial}"' in match.group(0)
    assert 'data-range="[0.0001, 100]"' in text
    # No default: the empty choice says what it means.
    empty = r'<select id="compare-{}"[^>]*>\s*<option value="">{}</option>'
    assert re.search(empty.format("tier", "all tiers"), text)
    assert re.search(empty.format("precision", "default: fp16"), text)
    # The view's answer goes where its script draws it, and the table can scroll on its own.
    for id_ in ("compare-verdict", "compare-status", "compare-table", "compare-show-all"):
        assert f'id="{id_}"' in text
    scroll = re.search(r'<div class="scroll"[^>]*id="compare-scroll"[^>]*>', text)
    assert scroll and 'tabindex="0"' in scroll.group(0)


def test_page_asks_for_a_key_when_keys_are_configured(tmp_path):
    client = make_app(tmp_path, API_KEYS="k1").test_client()
    response = client.get("/")
    assert response.status_code == 200  # the page itself is public
    text = response.get_data(as_text=True)
    auth = next(a for tag, a in _elements(text).tags if a.get("id") == "auth")
    assert "hidden" not in auth
    assert '"auth_required": true' in text
    # The API's contract is unchanged: POST needs the key.
    doc = yaml.safe_load((EXAMPLES / "worked-example.yaml").read_text("utf-8"))
    assert client.post("/v1/evaluate", json=doc).status_code == 401
    open_page = make_app(tmp_path / "open").test_client().get("/").get_data(as_text=True)
    auth = next(a for tag, a in _elements(open_page).tags if a.get("id") == "auth")
    assert "hidden" in auth


# --- assets ----------------------------------------------------------------------------------


@pytest.mark.parametrize("asset", ASSETS, ids=[str(p.relative_to(STATIC)) for p in ASSETS])
def test_assets_are_served_with_their_content_type(client, asset):
    response = client.get(f"/assets/{asset.relative_to(STATIC).as_posix()}")
    assert response.status_code == 200
    assert response.data == asset.read_bytes()
    expected = TYPES[asset.suffix]
    assert response.headers["Content-Type"].split(";")[0] == expected
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_page_links_its_assets(page):
    parsed = _elements(page[0])
    links = [a.get("src") or a.get("href") for tag, a in parsed.tags if tag in ("script", "link")]
    links = [x for x in links if x]
    assert "/assets/js/main.js" in links and "/assets/css/app.css" in links
    assert "/assets/sides.css" in links  # each side's colour, from the registry
    assert "/assets/favicon.svg" in links  # else the browser asks for /favicon.ico: a 404


@pytest.mark.parametrize(
    ("method", "path", "code"),
    [
        ("GET", "/assets/nope.js", 404),
        ("GET", "/assets/js/", 404),
        ("GET", "/assets/../views.py", 404),
        ("GET", "/assets/%2e%2e/views.py", 404),
        ("GET", "/index.html", 404),
        ("POST", "/", 405),
        ("DELETE", "/assets/js/main.js", 405),
    ],
)
def test_page_errors_have_the_one_error_shape(client, method, path, code):
    response = client.open(path, method=method)
    assert response.status_code == code
    body = response.get_json()
    assert set(body) == ERROR_KEYS and body["code"] == code and body["errors"] == []
    if code == 405:
        assert "GET" in response.headers["Allow"]


def test_page_is_not_in_the_openapi(client):
    paths = client.get("/openapi.json").get_json()["paths"]
    assert "/" not in paths
    assert not any(p.startswith("/assets") for p in paths)


# --- no other origin -------------------------------------------------------------------------

_URL = re.compile(r"""(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}""", re.I)
#: Strings that look like URLs but load nothing: the SVG namespace name, the vendored file's
#: licence header.
_NOT_LOADED = ("http://www.w3.org/2000/svg", "https://github.com/nodeca/js-yaml")


def _urls(text: str) -> list[str]:
    found = [m.group(0) for m in _URL.finditer(text)]
    return [u for u in found if not any(u in allowed for allowed in _NOT_LOADED)]


def test_page_loads_nothing_from_another_origin(page):
    parsed = _elements(page[0])
    for tag, attrs in parsed.tags:
        for name in ("src", "href", "action", "data", "poster", "srcset"):
            value = attrs.get(name)
            if value is not None:
                same_origin = value.startswith("/") and not value.startswith("//")
                assert same_origin or value.startswith("#"), (tag, name, value)
    assert not any(tag in ("iframe", "object", "embed", "base") for tag, _ in parsed.tags)
    scripts = [a for tag, a in parsed.tags if tag == "script"]
    assert all(a.get("src") or a.get("type") == "application/json" for a in scripts)
    assert not any(tag == "style" or "style" in a for tag, a in parsed.tags)  # CSP: no inline


@pytest.mark.parametrize(
    "asset",
    [p for p in ASSETS if p.suffix in (".js", ".mjs", ".css", ".svg")],
    ids=lambda p: str(p.relative_to(STATIC)),
)
def test_assets_load_nothing_from_another_origin(asset):
    text = asset.read_text("utf-8")
    if asset.suffix == ".svg":
        text = text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert _urls(text) == []
    if asset.suffix == ".css":
        assert "@import" not in text
        for target in re.findall(r"url\(([^)]*)\)", text):
            assert target.strip("'\" ").startswith(("/", "data:")), target
    if asset.suffix in (".js", ".mjs"):
        for target in re.findall(
            r"""\bfrom\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)""", text
        ):
            spec = next(t for t in target if t)
            assert spec.startswith(("./", "../")), spec
        for target in re.findall(r"""\bfetch\s*\(\s*["'`]([^"'`]+)""", text):
            assert target.startswith("/"), target


def test_module_imports_resolve():
    """Every relative import of the page's scripts names a file that is served."""
    for script in (STATIC / "js").rglob("*.js"):
        for spec in re.findall(r"""^import[^"']*["']([^"']+)["'];""", script.read_text(), re.M):
            assert (script.parent / spec).resolve().is_file(), (script, spec)


# --- vendored code and packaging -------------------------------------------------------------


def test_vendored_files_are_recorded():
    readme = (STATIC / "vendor" / "README.md").read_text("utf-8")
    rows = re.findall(
        r"^\| (\S+) \| (\S+) \| [^|]+\(`([^`]+)`\) \| `([^`]+)` \| [^|]+ \| `([0-9a-f]{64})` \|$",
        readme,
        re.M,
    )
    assert rows, "the vendor table lists nothing"
    vendored = {p for p in ASSETS if "vendor" in p.parts and p.name != "README.md"}
    recorded = set()
    for package, version, licence, file, sha256 in rows:
        path = STATIC / "vendor" / file
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256
        assert f"{package} {version}" in path.read_text("utf-8")[:200]
        assert (STATIC / "vendor" / licence).read_text().strip()
        recorded |= {path, STATIC / "vendor" / licence}
    assert vendored == recorded


def test_templates_and_assets_are_package_data():
    """pyproject.toml's package-data patterns install every file the page needs."""
    files, missing = package_data_files("api.web", WEB)
    assert any(p.suffix == ".html" for p in files) and any(p.suffix == ".js" for p in files)
    assert not missing, f"not package data: {missing}"
