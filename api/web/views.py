"""``GET /``: the service's web page, and its scripts and style sheets under ``/assets/`` (the
sides' colours and the rules that draw them, ``sides.css``, written from the registry).

The page edits a scenario or a fleet plan (a form for the common inputs, a YAML editor for the
whole format), or the options of a market comparison, and shows the answer as one types,
through the API's own endpoints (``POST /v1/evaluate``, ``POST /v1/plans``,
``POST /v1/compare``, ``/v1/runs``, ``/v1/catalog``). A scenario's form follows its kind of
work (training or inference, with a hosted API as a third side). It arrives with an
example already evaluated, so the verdict is in the HTML before any script runs. Every asset is
served from this package: the page makes no request to another origin, and its
Content-Security-Policy forbids any.

These routes are not part of the ``/v1`` API and not in its OpenAPI document. A missing asset is
a 404 in the API's one error shape, like every other unknown path.
"""

from __future__ import annotations

import threading
from importlib import resources
from pathlib import PurePosixPath
from typing import Any

import yaml
from flask import Blueprint, Response, current_app, render_template, request

from costmodel.sides import SIDES
from present import reports, to_dict
from present.reports.colours import side_colours
from pricing import Catalog, load_catalog
from scenarios import evaluate
from scenarios.schema import (
    DEMAND_WORK,
    WORK_BLOCKS,
    WORK_KINDS,
    WORK_ONLY,
    WORK_PRECISIONS,
    WORK_THROUGHPUT,
    WorkloadSchema,
)

from ..openapi import scenario_examples
from .form import FORMS, compare_form, form

__all__ = ["DEFAULT_EXAMPLES", "VIEWS", "asset_headers", "blp", "work_rules"]

blp = Blueprint(
    "web",
    __name__,
    static_folder="static",
    static_url_path="/assets",
    template_folder="templates",
)

#: The page's views, in tab order: (id, tab label). A view ``x`` is the template
#: ``web/_x.html`` and the script ``static/js/views/x.js``.
VIEWS = (("scenario", "Scenario"), ("plan", "Fleet plan"), ("compare", "Compare"))

#: The example each view opens with (``scenarios/examples/<name>.yaml``).
DEFAULT_EXAMPLES = {
    "scenario": "lab-4x-rtx2080ti-vs-p3-8xlarge",
    "plan": "plan-lab-rtx4090-growth",
}

#: Only this origin: scripts, styles, fonts, images and requests (blob: for downloads).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)

#: Content types of the assets, whatever the host's MIME table says (a module script must be
#: served as JavaScript).
ASSET_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    "": "text/plain; charset=utf-8",  # LICENSE
}

_lock = threading.Lock()

#: The key paths of a plan of one kind of work only, beyond its workload: the demand in that
#: kind's unit, and (inference) an API to burst to.
PLAN_ONLY = {
    "training": (
        f"demand.{DEMAND_WORK['training']}",
        "demand.gpu_hours_per_month",
        "demand.gpu",
    ),
    "inference": (f"demand.{DEMAND_WORK['inference']}", "burst.api"),
}


def _examples() -> list[dict[str, str]]:
    """Every example document: name, kind, summary and its YAML text with the comments."""
    folder = resources.files("scenarios") / "examples"
    out = []
    for kind in ("scenario", "plan"):
        for name, example in scenario_examples(kind).items():
            text = (folder / f"{name}.yaml").read_text(encoding="utf-8")
            out.append({"name": name, "kind": kind, "summary": example["summary"], "text": text})
    return out


def work_rules() -> dict[str, Any]:
    """What the page changes with the kind of work (``workload.kind``): the default kind, and
    of each kind its workload keys only it has, its precisions, a side's throughput key, the
    document's blocks only it has (``api``) and the key paths of a plan only it has."""
    return {
        "default": WorkloadSchema().fields["kind"].load_default,
        "kinds": {
            kind: {
                "only": list(WORK_ONLY[kind]),
                "precisions": list(WORK_PRECISIONS[kind]),
                "throughput": WORK_THROUGHPUT[kind],
                "blocks": list(WORK_BLOCKS[kind]),
                "paths": list(PLAN_ONLY[kind]),
            }
            for kind in WORK_KINDS
        },
    }


def side_words() -> dict[str, dict[str, Any]]:
    """The words of each kind of side the engine registers (:data:`costmodel.sides.SIDES`), in
    its order (the owned side first): its ``name``, ``label``, ``option``, ``doing`` and
    ``owned``, with which the page names the sides of a result, keeping no copy of them (the
    page reads them as a list: its JSON keeps their order, which a mapping's would not)."""
    return {
        s.name: {
            "name": s.name,
            "label": s.label,
            "option": s.option,
            "doing": s.doing,
            "owned": s.owned,
        }
        for s in SIDES.values()
    }


def _catalog() -> Catalog:
    """The catalog the app resolves ids in (the shipped one, or an operator's prices over it)."""
    return current_app.extensions["costmodel"].get("catalog") or load_catalog()


def _initial_result(name: str) -> dict[str, Any]:
    """The result of the example ``name`` as the API would answer it, evaluated once per app
    and process."""
    cache: dict[str, dict[str, Any]] = current_app.extensions.setdefault("costmodel.web", {})
    with _lock:
        cached = cache.get(name)
    if cached is None:
        text = (resources.files("scenarios") / "examples" / f"{name}.yaml").read_text("utf-8")
        cached = to_dict(evaluate(yaml.safe_load(text), catalog=_catalog()))
        with _lock:
            cache[name] = cached
    return cached


@blp.route("/", methods=["GET"])
def index() -> Response:
    """The page, with the default scenario example evaluated."""
    kind = "scenario"
    result = _initial_result(DEFAULT_EXAMPLES[kind])
    catalog = _catalog()
    examples = _examples()
    boot = {
        "examples": examples,
        "defaults": DEFAULT_EXAMPLES,
        "initial": {"kind": kind, "example": DEFAULT_EXAMPLES[kind], "result": result},
        "auth_required": bool(current_app.config.get("API_KEYS")),
        "work": work_rules(),
    }
    html = render_template(
        "web/index.html",
        boot=boot,
        views=VIEWS,
        forms={**{kind: form(kind) for kind in FORMS}, "compare": compare_form()},
        verdict=result["verdict"],
        initial_text=next(e["text"] for e in examples if e["name"] == DEFAULT_EXAMPLES[kind]),
        auth_required=boot["auth_required"],
        formats=reports.FORMATS,
        catalog=catalog,
        sides=side_words(),
    )
    response = Response(html, mimetype="text/html")
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@blp.route("/assets/sides.css", methods=["GET"])
def sides_css() -> Response:
    """The style sheet of the sides: each registered side's colour (``--<side>``) and the rules
    that draw it (its bands, lines, legend swatches and, for a side buying is weighed against,
    its tornado bars and dotted break-even line), so that a side registered later is drawn in a
    colour of its own."""
    css = render_template("web/sides.css", sides=list(SIDES.values()), colours=side_colours())
    return Response(css, mimetype="text/css")


@blp.after_request
def asset_headers(response: Response) -> Response:
    """A blueprint's assets get their content type by suffix; nothing of its pages is sniffed
    or framed (also the after-request hook of :mod:`api.docs`)."""
    if request.endpoint == f"{request.blueprint}.static" and response.status_code == 200:
        suffix = PurePosixPath(request.path).suffix.lower()
        if suffix in ASSET_TYPES:
            response.headers["Content-Type"] = ASSET_TYPES[suffix]
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    return response
