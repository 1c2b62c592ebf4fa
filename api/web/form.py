"""The inputs the web page offers as form fields, described once and completed from the
scenario format's JSON Schema (:func:`scenarios.jsonschema.scenario_json_schema`).

Each :class:`Field` names a key path of a scenario (or of a plan) and how it is edited; its
meaning, unit, range, default and choices are read from the schema, so the form cannot drift
from the format. Everything else is edited in the page's YAML editor.

Kinds of field:

- ``text``, ``integer``, ``number``: one input;
- ``choice``: a select of the schema's choices (``""``: the default); where the kind of work
  decides the choices (``workload.precision``), each choice names the kinds it is for;
- ``gpu``, ``instance``, ``model``, ``offer``: a select filled from ``GET /v1/catalog/gpus``,
  ``/instances``, ``/models`` or ``/api-offers``;
- ``grid``: a select filled from ``GET /v1/catalog/grids``, or a value of one's own (low /
  likely / high, as ``uncertain``) where the format takes a number or a distribution;
- ``uncertain``: low / likely / high inputs: likely alone is a fixed number, low and high alone
  a uniform distribution, all three a triangular one (a PERT distribution stays PERT);
- ``levels``: ``utilisation`` as start / stop / step;
- ``counts``: a ``{min, max}`` range of candidate counts (``own.servers``);
- ``numbers``: one input of numbers separated by commas, a list (``own.add.at_month``: "12, 24");
- ``percent``: one input in per cent for a share of the request (``utilisation``: 50 is 0.5).

A field or a section of one kind of work only (``work``: ``training`` or ``inference``) is
shown while the document's ``workload.kind`` is that kind.

The compare view's inputs (:func:`compare_form`) are the options of ``POST /v1/compare``,
completed the same way from its request schema (:class:`scenarios.compare.CompareSchema`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from marshmallow import missing, validate

from present.formatting import fmt_number
from pricing import load_catalog
from scenarios.compare import CompareSchema
from scenarios.jsonschema import scenario_json_schema

__all__ = ["COMPARE", "FORMS", "Field", "Section", "compare_form", "form"]

#: The inputs of each part of a kind of field, in the order shown.
PARTS = {
    "uncertain": (("low", "low"), ("mode", "likely"), ("high", "high")),
    "levels": (("start", "from"), ("stop", "to"), ("step", "step")),
    "counts": (("min", "fewest"), ("max", "most")),
}
PARTS["grid"] = PARTS["uncertain"]
#: The kinds of field shown as a select (a ``grid`` also has a value's parts).
_SELECTS = ("choice", "gpu", "instance", "model", "offer", "grid")
#: The kinds of field whose range the hint does not give (a grid's is its own value's).
_NO_RANGE = ("choice", "gpu", "instance", "model", "offer", "text")


@dataclass(frozen=True)
class Field:
    """One form field: the key ``path`` it edits and how (``kind``); the rest from the schema."""

    path: str
    label: str
    kind: str
    note: str = ""
    #: Words replacing the schema's description.
    words: str = ""
    #: The empty choice of a select when the schema has no default ("all tiers", "none").
    empty: str = ""
    #: The kind of work the field is for (``training``, ``inference``); "" for every kind.
    work: str = ""
    #: Read from the schema by :func:`form` (or :func:`compare_form`):
    description: str = ""
    unit: str = ""
    range: str = ""
    default: Any = None
    choices: tuple[str, ...] = field(default_factory=tuple)
    #: The kinds of work each choice is for, in the order of ``choices`` (() when every choice
    #: is for every kind).
    choice_work: tuple[tuple[str, ...], ...] = field(default_factory=tuple)
    #: The value the input starts with (a required key without a default: its example).
    initial: Any = None

    @property
    def slug(self) -> str:
        """The path as an HTML id fragment: ``buy-pue``."""
        return self.path.replace(".", "-").replace("_", "-")

    @property
    def select(self) -> bool:
        """Shown as a select (of choices or of catalog rows)."""
        return self.kind in _SELECTS

    @property
    def parts(self) -> tuple[tuple[str, str], ...]:
        """``(part, label)`` of each input of a multi-input field; ``()`` for one input."""
        return PARTS.get(self.kind, ())

    @property
    def hint(self) -> str:
        """The words under the field: meaning, range and any note."""
        words = [self.description]
        if self.range:
            words.append(f"range {self.range}")
        if self.note:
            words.append(self.note)
        return "; ".join(w for w in words if w)


@dataclass(frozen=True)
class Section:
    title: str
    fields: tuple[Field, ...]
    #: The kind of work the section is for; "" for every kind.
    work: str = ""


def _throughputs(side: str) -> tuple[Field, ...]:
    """A side's GPU throughput, one field per kind of work (empty: the catalog's)."""
    return (
        Field(
            f"{side}.relative_throughput",
            "Throughput",
            "uncertain",
            work="training",
            words="work of one GPU per hour in reference GPU-hours",
            note="empty: the catalog's measurement",
        ),
        Field(
            f"{side}.tokens_per_s_per_gpu",
            "Serving throughput",
            "uncertain",
            work="inference",
            words="tokens (input + output) one GPU serves per second",
            note="empty: the catalog's measurement of the model",
        ),
    )


def _owned_grid(side: str) -> tuple[Field, ...]:
    """The owned side's grid (a catalog grid or a value of one's own) and its annual change."""
    return (
        Field(
            f"{side}.grid",
            "Grid",
            "grid",
            empty="default",
            note="a value of your own: low / likely / high",
        ),
        Field(
            f"{side}.grid_annual_change",
            "Grid intensity change",
            "uncertain",
            note="-0.03 is 3 % less carbon per kWh each year",
        ),
    )


#: The unknown-is-not-zero note of an API's emissions per M tokens.
_API_CARBON_NOTE = "empty: unknown, reported so (never as 0)"

#: The carbon price, shared by the scenario and the plan forms.
_CARBON = Section(
    "Carbon",
    (
        Field(
            "carbon.usd_per_tonne",
            "Carbon price",
            "uncertain",
            note="empty: no price, the costs without carbon",
        ),
    ),
)


#: The workload's fields, shared by the scenario and the plan forms.
_WORK = (
    Field("workload.kind", "Kind of work", "choice"),
    Field(
        "workload.reference_gpu",
        "Reference GPU",
        "gpu",
        empty="default",
        work="training",
        words="an hour of work on this GPU is the unit of work",
    ),
    Field(
        "workload.model",
        "Model",
        "model",
        work="inference",
        words="the model served, from the catalog; an inline model is edited in the YAML",
    ),
    Field("workload.precision", "Precision", "choice"),
    Field("workload.input_tokens", "Input tokens", "integer", work="inference"),
    Field("workload.output_tokens", "Output tokens", "integer", work="inference"),
    Field(
        "workload.min_tokens_per_s_per_user",
        "Interactivity floor",
        "number",
        work="inference",
        words="only measured operating points that serve each request at least this fast",
        note="empty: no floor",
    ),
)

_SCENARIO = (
    Section(
        "The question",
        (
            Field("name", "Name", "text"),
            Field("horizon_months", "Horizon", "integer"),
            Field("discount_rate", "Discount rate", "number", note="0.08 is 8 % a year"),
            Field("tax_rate", "Tax rate", "number"),
            Field(
                "utilisation",
                "Utilisation levels",
                "levels",
                words="the share of hours the GPUs work: from, to and step (0.05 is 5 %)",
            ),
        ),
    ),
    Section("The work", _WORK),
    Section(
        "Buy",
        (
            Field(
                "buy.gpu",
                "GPU",
                "gpu",
                words="from the catalog; an inline GPU is edited in the YAML",
            ),
            Field("buy.gpu_count", "GPU count", "integer"),
            Field("buy.gpu_price_usd", "GPU price", "uncertain"),
            Field("buy.electricity_usd_per_kwh", "Electricity price", "uncertain"),
            Field("buy.pue", "PUE", "uncertain"),
            Field("buy.hosting_usd_per_kw_month", "Hosting fee", "uncertain"),
            Field("buy.resale_annual_decay", "Resale value lost", "uncertain"),
            *_throughputs("buy"),
            *_owned_grid("buy"),
        ),
    ),
    Section(
        "Rent",
        (
            Field(
                "rent.instance",
                "Cloud instance",
                "instance",
                words="from the catalog; an inline instance is edited in the YAML",
            ),
            Field("rent.pricing", "Pricing", "choice"),
            Field("rent.price_usd_per_hour", "Cloud price", "uncertain"),
            Field("rent.price_annual_change", "Cloud price change", "uncertain"),
            *_throughputs("rent"),
            Field(
                "rent.grid",
                "Grid",
                "grid",
                empty="the region's",
                note="empty: the grid of the instance's region",
            ),
            Field("rent.pue", "PUE", "uncertain", note="empty: the provider's published PUE"),
        ),
    ),
    Section(
        "Hosted API",
        (
            Field(
                "api.model",
                "API offer",
                "offer",
                empty="none (no API)",
                words="a hosted API from the catalog, billed per token, or prices of your own",
            ),
            Field("api.input_usd_per_mtok", "Input price", "uncertain"),
            Field("api.output_usd_per_mtok", "Output price", "uncertain"),
            Field("api.cached_input_share", "Cached input share", "uncertain"),
            Field("api.price_annual_change", "API price change", "uncertain"),
            Field(
                "api.g_co2e_per_mtok",
                "API emissions",
                "uncertain",
                note=_API_CARBON_NOTE,
            ),
        ),
        work="inference",
    ),
    _CARBON,
)

_PLAN = (
    Section(
        "The question",
        (
            Field("name", "Name", "text"),
            Field("horizon_months", "Horizon", "integer"),
            Field("discount_rate", "Discount rate", "number", note="0.08 is 8 % a year"),
            Field("tax_rate", "Tax rate", "number"),
            Field("objective", "Best plan minimises", "choice"),
        ),
    ),
    Section("The work", _WORK),
    Section(
        "Demand",
        (
            Field(
                "demand.reference_gpu_hours_per_month",
                "Work in month 1",
                "uncertain",
                work="training",
            ),
            Field(
                "demand.million_tokens_per_month",
                "Tokens in month 1",
                "uncertain",
                work="inference",
            ),
            Field("demand.annual_growth", "Annual growth", "uncertain", note="1.0 doubles"),
            Field("demand.peak_to_mean", "Daily peak", "uncertain", note="empty: 1, a flat load"),
        ),
    ),
    Section(
        "Own",
        (
            Field(
                "own.gpu",
                "GPU",
                "gpu",
                words="from the catalog; an inline GPU is edited in the YAML",
            ),
            Field("own.gpu_count", "GPUs per server", "integer"),
            Field("own.servers", "Servers to consider", "counts"),
            Field("own.gpu_price_usd", "GPU price", "uncertain"),
            Field("own.electricity_usd_per_kwh", "Electricity price", "uncertain"),
            Field("own.pue", "PUE", "uncertain"),
            *_throughputs("own"),
            *_owned_grid("own"),
        ),
    ),
    Section(
        "Add servers later",
        (
            Field("own.add.servers", "Servers to add", "counts"),
            Field(
                "own.add.when_demand_above",
                "When the work passes",
                "numbers",
                note="0.8, 1: 80 % or 100 % of the first servers' capacity",
            ),
            Field(
                "own.add.at_month",
                "Or in month",
                "numbers",
                note="12, 24: bought at fixed months instead of a trigger",
            ),
            Field("own.add.lead_time_months", "Lead time", "integer"),
            Field(
                "own.add.price_annual_change",
                "Server price change",
                "uncertain",
                note="-0.2 is 20 % cheaper each year",
            ),
        ),
    ),
    Section(
        "Reserve",
        (
            Field(
                "reserve.instance",
                "Reserved instance",
                "instance",
                empty="none (no reservation)",
                words="from the catalog, or none: no reservation",
            ),
            Field("reserve.pricing", "Term", "choice"),
            Field("reserve.instances", "Reservations to consider", "counts"),
        ),
    ),
    Section(
        "Burst",
        (
            Field(
                "burst.instance",
                "Burst instance",
                "instance",
                words="from the catalog; an inline instance is edited in the YAML",
            ),
            Field("burst.pricing", "Pricing", "choice"),
            Field("burst.price_usd_per_hour", "Burst price", "uncertain"),
            *_throughputs("burst"),
            Field(
                "burst.api.model",
                "Burst to an API",
                "offer",
                empty="none (burst to the instance)",
                work="inference",
                words="a hosted API from the catalog takes the rest instead of instances",
            ),
            Field(
                "burst.api.g_co2e_per_mtok",
                "API emissions",
                "uncertain",
                work="inference",
                note=f"{_API_CARBON_NOTE}; shown with an API burst",
            ),
        ),
    ),
    _CARBON,
)

#: The form of each kind of document.
FORMS = {"scenario": _SCENARIO, "plan": _PLAN}
_ROOTS = {"scenario": "Scenario", "plan": "Plan"}


def _deref(defs: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with a ``$ref`` (also inside ``anyOf`` with null) replaced by its target; the
    node's own description is kept."""
    options = node.get("anyOf") or []
    ref = node.get("$ref") or next((o["$ref"] for o in options if "$ref" in o), None)
    if ref is None:
        return node
    target = defs[ref.rsplit("/", 1)[-1]]
    return {**target, **{k: v for k, v in node.items() if k in ("description", "default")}}


@cache
def _defs() -> dict[str, Any]:
    """The definitions of the scenario format's JSON Schema, made once (read only)."""
    return scenario_json_schema()["$defs"]


def _property(kind: str, path: str) -> dict[str, Any]:
    """The JSON Schema of the key ``path`` of a document of ``kind``; KeyError if none."""
    defs = _defs()
    node: dict[str, Any] = defs[_ROOTS[kind]]
    for name in path.split("."):
        node = _deref(defs, node)["properties"][name]
    return node


def _num(x: float) -> str:
    return fmt_number(x) if float(x).is_integer() else f"{x:g}"


def _interval(low: float, high: float, low_open: bool, high_open: bool, scale: float = 1) -> str:
    """ "[1, 5]", "(-0.5, 1]": a range with its open or closed ends, times ``scale``."""
    if math.isinf(low) or math.isinf(high):
        return ""
    left, right = "(" if low_open else "[", ")" if high_open else "]"
    return f"{left}{_num(low * scale)}, {_num(high * scale)}{right}"


def _range(node: dict[str, Any]) -> str:
    """The range of a number (or of a distribution's number option) as the schema bounds it:
    an ``exclusiveMinimum`` (a number in JSON Schema 2020-12) opens the low end."""
    number = next((o for o in node.get("oneOf", []) if o.get("type") == "number"), node)
    low_open = number.get("exclusiveMinimum") is not None
    low = number.get("exclusiveMinimum", number.get("minimum"))
    high = number.get("maximum")
    if low is None or high is None:
        return ""
    return _interval(low, high, low_open, False)


def _choice_work(path: str, choices: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """The kinds of work each of ``choices`` of the workload key ``path`` is for, as the
    schema's rules of the kinds of work state them (``if kind ... then enum``); () when no
    rule narrows them."""
    parent, _, key = path.rpartition(".")
    if parent != "workload":
        return ()
    allowed: dict[str, list[str]] = {}
    for rule in _defs()["Workload"].get("allOf", []):
        enum = rule["then"]["properties"].get(key, {}).get("enum")
        if enum is not None:
            allowed[rule["if"]["properties"]["kind"]["const"]] = enum
    if not allowed:
        return ()
    return tuple(tuple(k for k, enum in allowed.items() if c in enum) for c in choices)


def _completed(kind: str, f: Field) -> Field:
    node = _property(kind, f.path)
    unit = node.get("x-unit", "")
    description = f.words or node.get("description", "")
    if f.kind == "numbers":  # a list: its items' unit and range
        items = _deref(_defs(), node)["items"]
        return replace(f, description=description, unit=items["x-unit"], range=_range(items))
    if f.kind in ("levels", "counts"):
        node = _deref(_defs(), node)
        if f.kind == "levels":
            node = next((o for o in node["oneOf"] if "$ref" in o), node)
            node = _deref(_defs(), node)
        first = node["properties"][f.parts[0][0]]
        return replace(
            f, description=description, unit=unit or first["x-unit"], range=_range(first)
        )
    choices = tuple(c for c in node.get("enum", ()) if c is not None)
    return replace(
        f,
        description=description,
        unit=unit,
        range="" if f.kind in _NO_RANGE else _range(node),
        default=node.get("default"),
        choices=choices,
        choice_work=_choice_work(f.path, choices),
    )


@cache
def form(kind: str) -> tuple[Section, ...]:
    """The sections of the form for a document of ``kind`` (``scenario`` or ``plan``), every
    field completed from the schema."""
    return tuple(
        replace(s, fields=tuple(_completed(kind, f) for f in s.fields)) for s in FORMS[kind]
    )


#: The options of a comparison (``POST /v1/compare``) the compare view offers; ``samples`` and
#: ``seed`` keep their defaults.
COMPARE = (
    Section(
        "The question",
        (
            Field(
                "utilisation",
                "Utilisation",
                "percent",
                words="the share of wall-clock hours the GPUs work (50 is half the time)",
            ),
            Field(
                "precision",
                "Precision",
                "choice",
                empty="default: fp16",
                note="with a model: fp16, fp8 or fp4, by default the first the catalog measures",
            ),
            Field("horizon_months", "Horizon", "integer"),
        ),
    ),
    Section(
        "Serving a model",
        (
            Field(
                "model",
                "Model",
                "choice",
                empty="none: training work",
                words="a catalog model: rank the ways to serve it by cost per M tokens, its API "
                "offers among them",
            ),
            Field("input_tokens", "Input tokens per request", "integer"),
            Field("output_tokens", "Output tokens per request", "integer"),
            Field(
                "min_tokens_per_s_per_user",
                "Minimum tokens/s per user",
                "number",
                note="empty: any measurement",
            ),
        ),
    ),
    Section(
        "Which options",
        (
            Field("min_memory_gb", "Minimum GPU memory", "number", note="empty: every GPU"),
            Field(
                "tier",
                "Provider tier",
                "choice",
                empty="all tiers",
                note="owned options are not filtered",
            ),
        ),
    ),
    Section(
        "Carbon",
        (
            Field(
                "grid",
                "Owned options' grid",
                "choice",
                words="the catalog grid the owned options' electricity comes from; rented "
                "options use their region's",
            ),
            Field(
                "sort",
                "Rank by",
                "choice",
                note="carbon: lowest P50 g CO2e first, the options of unknown carbon last",
            ),
        ),
    ),
)

#: What a ``percent`` field's value is multiplied by on the page (the request holds a share).
PERCENT = 100


def _bounds(node: Any, scale: float) -> str:
    """The range of a request option as "[1, 240]" or "(0, 100]", times ``scale``."""
    rng = next((v for v in node.validators if isinstance(v, validate.Range)), None)
    if rng is None or rng.min is None or rng.max is None:
        return ""
    return _interval(rng.min, rng.max, not rng.min_inclusive, not rng.max_inclusive, scale)


#: The request options whose choices are catalog ids, not a schema enum.
_CATALOG_CHOICES = {
    "model": lambda: tuple(sorted(load_catalog().models)),
    "grid": lambda: tuple(sorted(g.id for g in load_catalog().grids.values())),
}


def _compare_completed(f: Field) -> Field:
    node = CompareSchema().fields[f.path]
    text = node.metadata.get("description", "")
    unit = "[%]" if f.kind == "percent" else node.metadata.get("unit", "")
    scale = PERCENT if f.kind == "percent" else 1
    choices = next((v.choices for v in node.validators if isinstance(v, validate.OneOf)), ())
    if f.path in _CATALOG_CHOICES:
        choices = _CATALOG_CHOICES[f.path]()
    default = None if node.load_default is missing else node.load_default
    example = node.metadata.get("example")
    return replace(
        f,
        description=f.words or text,
        unit=unit,
        range="" if f.kind == "choice" else _bounds(node, scale),
        default=default,
        choices=tuple(choices),
        initial=_num(example * scale) if node.required and example is not None else None,
    )


@cache
def compare_form() -> tuple[Section, ...]:
    """The sections of the compare view's form, every field completed from the request schema
    of ``POST /v1/compare`` (its choices, range, default; a required option starts at its
    example)."""
    return tuple(Section(s.title, tuple(_compare_completed(f) for f in s.fields)) for s in COMPARE)
