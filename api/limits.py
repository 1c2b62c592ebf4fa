"""What a request costs the server, the limits it is held to, and where the OpenAPI document
states them.

Work is counted in one unit for every kind of request: one draw of one utilisation level over
one month of the rent-versus-buy engine (about 3 ns of CPU). Each other piece of work is
counted as the units it takes in the same time, as ``benchmarks/bench_limits.py`` measures:

* a scenario: draws x months x (levels + :data:`SCENARIO_MONTH_WORK`), the last for the
  month-by-month cash flows every draw needs whatever the levels;
* a plan: draws x candidates x (months x :data:`PLAN_MONTH_WORK` + :data:`PLAN_DRAW_WORK`),
  the evaluation and then each candidate's statistics over its draws and the memory they are
  held in (24 bytes a draw), plus candidates x :data:`PLAN_CANDIDATE_WORK` and the result's
  bytes x :data:`RESULT_BYTE_WORK` for the work done once per candidate;
* a comparison: draws x options x :data:`COMPARE_OPTION_WORK`.

``COSTMODEL_MAX_WORK`` bounds the sum, so the largest request the defaults allow takes about
2 s of CPU and well under 1 GiB. A plan is also held to ``COSTMODEL_MAX_CANDIDATES`` and
to the size its result may reach (``COSTMODEL_MAX_RESULT_BYTES``), both known before anything
is evaluated. Every 422 names the setting that refused the request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flask import current_app
from flask_smorest import abort

from scenarios import Plan, Scenario

__all__ = [
    "COMPARE_OPTION_WORK",
    "LIMITS",
    "PLAN_CANDIDATE_WORK",
    "PLAN_DRAW_WORK",
    "PLAN_MONTH_WORK",
    "RESULT_BYTE_WORK",
    "SCENARIO_MONTH_WORK",
    "Check",
    "abort_over_limits",
    "check_document",
    "compare_checks",
    "compare_work",
    "plan_result_bytes",
    "plan_work",
    "query_maxima",
    "scenario_work",
    "write_limits",
]

#: Work of the cash flows of one draw and month, whatever the levels [unit] (measured: 9).
SCENARIO_MONTH_WORK = 8
#: Work of one candidate over one draw and month of a plan [unit] (measured: 6 to 10).
PLAN_MONTH_WORK = 8
#: Work of one candidate's statistics over one draw, and of holding its three outcomes
#: (24 bytes, about one unit a byte) [unit].
PLAN_DRAW_WORK = 24
#: Work of one candidate whatever the draws: its turn of the loops, its summary [unit]
#: (measured: 7.5 us, 2,500 units).
PLAN_CANDIDATE_WORK = 2_500
#: Work of writing one byte of a result as JSON, per byte :func:`plan_result_bytes` counts
#: [unit] (measured: 16 us for a candidate's 250 bytes, counted as 680).
RESULT_BYTE_WORK = 8
#: Work of one option of a comparison over one draw [unit] (measured: 23 to 28 of CPU, and some
#: 17 bytes; more for the time a first comparison spends resolving the options).
COMPARE_OPTION_WORK = 40

#: The most bytes one candidate takes in a plan's JSON result: two counts, eight numbers of
#: 24 characters at most (``-1.2345678901234567e-100``) and the keys [byte].
_CANDIDATE_BYTES = 340
#: The most bytes a month takes in the best plan's work split (three numbers) [byte].
_MONTH_BYTES = 3 * 25
#: The rest of a plan's result: the plan itself, assumptions, warnings, verdict [byte].
_PLAN_BASE_BYTES = 64 * 1024


@dataclass(frozen=True)
class Check:
    """One limit applied to one request: the key path to blame, the value counted, the
    setting (app config key, ``MAX_SAMPLES``) and what is counted."""

    path: str
    value: int
    setting: str
    counts: str


@dataclass(frozen=True)
class _Limit:
    """A setting that bounds one number of a request, and every place of the OpenAPI document
    where that number is given: ``(component, property)``, component ``query`` for a query
    parameter; ``items`` bounds the length of a list rather than its values."""

    counts: str
    places: tuple[tuple[str, str], ...]
    items: bool = False


#: The limits the OpenAPI document states as maxima, by setting; the checks use the same words.
LIMITS: Mapping[str, _Limit] = {
    "MAX_SAMPLES": _Limit(
        "samples per request",
        (
            ("query", "samples"),
            ("Draws", "samples"),
            ("Simulation", "samples"),
            ("Simulation", "max_samples"),
            ("Compare", "samples"),
        ),
    ),
    "MAX_HORIZON": _Limit(
        "months",
        (("Scenario", "horizon_months"), ("Plan", "horizon_months"), ("Compare", "horizon_months")),
    ),
    "MAX_LEVELS": _Limit("utilisation levels", (("Scenario", "utilisation"),), items=True),
    "MAX_PAGE_SIZE": _Limit("runs per page", (("query", "page_size"),)),
}


_MONTHS = LIMITS["MAX_HORIZON"].counts


def plan_result_bytes(candidates: int, months: int) -> int:
    """The most bytes a plan's JSON result can take [byte]: every candidate twice (the
    frontier may hold them all), all-cloud and the best, the monthly work split and the rest."""
    return (2 * candidates + 2) * _CANDIDATE_BYTES + months * _MONTH_BYTES + _PLAN_BASE_BYTES


def scenario_work(samples: int, levels: int, months: int) -> int:
    """The work of a scenario of ``levels`` utilisation levels over ``months`` [unit]."""
    return samples * months * (levels + SCENARIO_MONTH_WORK)


def plan_work(samples: int, candidates: int, months: int) -> int:
    """The work of a plan of ``candidates`` over ``months`` [unit]."""
    return (
        samples * candidates * (months * PLAN_MONTH_WORK + PLAN_DRAW_WORK)
        + candidates * PLAN_CANDIDATE_WORK
        + plan_result_bytes(candidates, months) * RESULT_BYTE_WORK
    )


def compare_work(samples: int, options: int) -> int:
    """The work of a comparison of ``options`` over ``samples`` draws [unit]."""
    return samples * options * COMPARE_OPTION_WORK


def _samples_check(document: Scenario | Plan, samples: int | None) -> Check:
    path = "simulation.samples" if samples is None else "query.samples"
    given = document.samples if samples is None else samples
    wanted = document.max_draws(samples)  # doubling toward a target may add draws
    if wanted > given:
        path = "simulation.max_samples"
    return Check(path, wanted, "MAX_SAMPLES", LIMITS["MAX_SAMPLES"].counts)


def compare_checks(samples: int, months: int, options: int) -> list[Check]:
    """The limits of a comparison of ``options`` over ``samples`` draws and ``months``."""
    return [
        Check("samples", samples, "MAX_SAMPLES", LIMITS["MAX_SAMPLES"].counts),
        Check("horizon_months", months, "MAX_HORIZON", _MONTHS),
        Check(
            "samples",
            compare_work(samples, options),
            "MAX_WORK",
            f"units of work (samples x {options} options x {COMPARE_OPTION_WORK})",
        ),
    ]


def _plan_checks(plan: Plan, draws: int) -> list[Check]:
    inputs = plan.inputs
    months, candidates = inputs.horizon_months, inputs.candidates
    size = plan_result_bytes(candidates, months)
    work = plan_work(draws, candidates, months)
    counted = (
        f"units of work (samples x candidates x months x {PLAN_MONTH_WORK} + samples x "
        f"candidates x {PLAN_DRAW_WORK} + {PLAN_CANDIDATE_WORK:,} per candidate + "
        f"{RESULT_BYTE_WORK} per byte of result)"
    )
    return [
        Check("own.servers", candidates, "MAX_CANDIDATES", "candidates (servers x reservations)"),
        Check("own.servers", size, "MAX_RESULT_BYTES", "bytes of result at most"),
        Check("own.servers", work, "MAX_WORK", counted),
    ]


def check_document(document: Scenario | Plan, samples: int | None) -> None:
    """422 naming every limit the evaluation of ``document`` (with ``samples`` overriding its
    draws) would exceed; nothing is evaluated first."""
    samples_check = _samples_check(document, samples)
    draws = samples_check.value
    if isinstance(document, Plan):
        horizon = document.inputs.horizon_months
        checks = [samples_check, Check("horizon_months", horizon, "MAX_HORIZON", _MONTHS)]
        abort_over_limits([*checks, *_plan_checks(document, draws)])
        return
    inputs = document.resolved.inputs
    horizon, levels = inputs.horizon_months, len(inputs.utilisation)
    work = scenario_work(draws, levels, horizon)
    abort_over_limits(
        [
            samples_check,
            Check("horizon_months", horizon, "MAX_HORIZON", _MONTHS),
            Check("utilisation", levels, "MAX_LEVELS", LIMITS["MAX_LEVELS"].counts),
            Check(
                "utilisation",
                work,
                "MAX_WORK",
                f"units of work (samples x months x (levels + {SCENARIO_MONTH_WORK}))",
            ),
        ]
    )


def abort_over_limits(checks: Sequence[Check]) -> None:
    """422 naming every limit exceeded, each with its key path and setting."""
    config = current_app.config
    problems = [
        {
            "path": c.path,
            "message": f"{c.value:,} exceeds the limit of {config[c.setting]:,} {c.counts} "
            f"(COSTMODEL_{c.setting})",
        }
        for c in checks
        if c.value > config[c.setting]
    ]
    if problems:
        abort(
            422,
            message="the request exceeds a limit of this service: "
            + "; ".join(p["message"] for p in problems),
            errors=problems,
        )


def query_maxima(config: Mapping[str, Any]) -> dict[str, int]:
    """The maximum of each bounded query parameter, by name, as ``config`` sets the limits."""
    return {
        name: int(config[setting])
        for setting, limit in LIMITS.items()
        for component, name in limit.places
        if component == "query"
    }


def write_limits(schemas: Mapping[str, dict[str, Any]], config: Mapping[str, Any]) -> None:
    """Lower the maxima of the OpenAPI ``schemas`` (components by name) to the limits of
    :data:`LIMITS` as ``config`` sets them, where a schema allows more."""
    for setting, limit in LIMITS.items():
        value = int(config[setting])
        key = "maxItems" if limit.items else "maximum"
        for component, name in limit.places:
            prop = schemas.get(component, {}).get("properties", {}).get(name)
            if component == "query" or prop is None:
                continue
            forms = [f for f in prop.get("oneOf", [prop]) if f.get("type") == "array"]
            for target in forms if limit.items else [prop]:
                target[key] = min(value, target.get(key, value))
