"""What a request costs the server, the limits it is held to, and where the OpenAPI document
states them.

Work is counted in one unit for every kind of request, :data:`UNIT_S` (3 ns) of CPU. Each
piece of work is counted as the units it takes, as ``benchmarks/bench_limits.py`` measures and
fits (a constant may be a fraction of a unit; each count is rounded to a whole unit):

* a scenario: draws x (months x :data:`SCENARIO_MONTH_WORK` + levels x
  :data:`SCENARIO_LEVEL_WORK` + :data:`SCENARIO_DRAW_WORK`): each draw's month-by-month cash
  flows, each level's statistics over the draws, and each draw's sampling and summary (the
  levels' own month-by-month sums cost next to nothing beside these); a hosted API adds its
  own payback pass (months x :data:`SCENARIO_API_MONTH_WORK`; its bands cost next to nothing
  beside the levels' statistics);
* a plan (:func:`plan_work`): :data:`PLAN_REQUEST_WORK` to answer it; per draw and month
  whatever the candidates, :data:`PLAN_MONTH_WORK` for each pass over the draws' months
  (:func:`plan_passes`), counting carbon :data:`PLAN_CARBON_MONTH_WORK` for each table
  of emissions in each pass that evaluates candidates, and under a daily peak
  :data:`PLAN_PEAK_MONTH_WORK` (the best plan's monthly split); per draw,
  :data:`PLAN_SAMPLE_WORK` and :data:`PLAN_SERVER_WORK` per server count (and
  :data:`PLAN_SERVER_CHUNK_WORK` per server count and chunk of draws); per draw and
  candidate, :data:`PLAN_DRAW_WORK` (its cost summed in closed form over the months, its
  statistics), :data:`PLAN_CARBON_DRAW_WORK` more counting carbon, under a daily peak months x
  :data:`PLAN_BAND_WORK` for each candidate with a capacity (and months x
  :data:`PLAN_CARBON_BAND_WORK` more counting carbon) and
  :data:`PLAN_STAGED_WORK` for one that adds servers later; per candidate
  :data:`PLAN_CANDIDATE_WORK` (and :data:`PLAN_STAGED_CANDIDATE_WORK`), and the result's
  bytes x :data:`RESULT_BYTE_WORK`;
* a comparison: options x (draws x :data:`COMPARE_OPTION_WORK` (and
  :data:`COMPARE_MODEL_OPTION_WORK` more by model) + :data:`COMPARE_RESOLVE_WORK`), and owned
  options x draws x :data:`COMPARE_OWNED_OPTION_WORK` more.

``COSTMODEL_MAX_WORK`` bounds the sum, so the largest request the defaults allow takes about
1.5 s of CPU (at most 1.74 s over the benchmark's shapes, whose CPU is within 0.68 to 1.37
times the count, each process's BLAS on one thread: :mod:`costmodel.threads`). A
run (``POST /v1/runs``) asking for more is a job instead, up to ``COSTMODEL_MAX_JOB_WORK``.
A plan is also held to ``COSTMODEL_MAX_CANDIDATES`` and to the size
its result may reach (``COSTMODEL_MAX_RESULT_BYTES``), and a scenario or plan to the memory its
whole evaluation holds (:mod:`api.memory`, ``COSTMODEL_MAX_MEMORY``), all known before anything
is evaluated. Every 422 names the setting that refused the request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flask import current_app
from flask_smorest import abort

from costmodel.fleet import block_rows
from scenarios import Plan, Scenario

from .memory import (
    CHUNK_ARRAYS,
    CHUNK_ELEMENTS,
    PLAN_SAMPLE_BYTES,
    PROCESS_BYTES,
    held,
    plan_memory,
    scenario_memory,
    scenario_terms,
)

__all__ = [
    "COMPARE_MODEL_OPTION_WORK",
    "COMPARE_OPTION_WORK",
    "COMPARE_OWNED_OPTION_WORK",
    "COMPARE_RESOLVE_WORK",
    "LIMITS",
    "PLAN_BAND_WORK",
    "PLAN_CANDIDATE_WORK",
    "PLAN_CARBON_BAND_WORK",
    "PLAN_CARBON_DRAW_WORK",
    "PLAN_CARBON_MONTH_WORK",
    "PLAN_DRAW_WORK",
    "PLAN_MONTH_WORK",
    "PLAN_PEAK_MONTH_WORK",
    "PLAN_SAMPLE_WORK",
    "PLAN_SERVER_CHUNK_WORK",
    "PLAN_SERVER_WORK",
    "PLAN_STAGED_CANDIDATE_WORK",
    "PLAN_STAGED_WORK",
    "PLAN_REQUEST_WORK",
    "PlanShape",
    "plan_passes",
    "RESULT_BYTE_WORK",
    "SCENARIO_API_MONTH_WORK",
    "SCENARIO_DRAW_WORK",
    "SCENARIO_LEVEL_WORK",
    "SCENARIO_MONTH_WORK",
    "UNIT_S",
    "Check",
    "abort_over_limits",
    "check_document",
    "compare_checks",
    "compare_work",
    "over_sync_work",
    "plan_memory",
    "plan_result_bytes",
    "plan_work",
    "query_maxima",
    "scenario_memory",
    "scenario_work",
    "write_limits",
]

#: CPU time of one unit of work [s].
UNIT_S = 3e-9
#: Work of the cash flows of one draw and month, whatever the levels [unit] (fitted by
#: ``benchmarks/bench_limits.py``, as every constant below: 2.8 to 4.2 with the API's pass
#: counted apart; the lab example's thirteen uncertain inputs, several of them changing by the
#: month, cost some 4.2 a month, the inference example's few 2.0).
SCENARIO_MONTH_WORK = 3
#: What a hosted API adds to one draw and month: its own payback pass [unit] (measured: 2.2,
#: the inference example over 240 months at 100,000 draws with and without its API, 0.38 s
#: and 0.22 s of CPU).
SCENARIO_API_MONTH_WORK = 2
#: Work of one level's statistics over one draw [unit] (fitted: 10 to 15).
SCENARIO_LEVEL_WORK = 13
#: Work of one draw whatever its months and levels: its sampling, its share of the summary
#: [unit] (fitted: 190 to 330).
SCENARIO_DRAW_WORK = 250
#: Work of answering a plan whatever its draws and candidates: its words, advice and JSON
#: [unit] (fitted: 0 to 0.3 million, lost in the noise of the shapes; a few ms).
PLAN_REQUEST_WORK = 1_000_000
#: Work of one draw and month of a plan whatever its candidates, for each pass over the draws
#: (:func:`plan_passes`) [unit]: the month's work and prices, their suffix sums, the best
#: plan's monthly split (fitted: 2.7 to 3.1).
PLAN_MONTH_WORK = 3
#: Work of one draw, month and table of emissions of a plan that counts carbon (one for the
#: burst, one more with servers, one more with reservations), for each pass that evaluates
#: candidates (every pass but the monthly split's): their suffix sums [unit] (fitted: 2.2 to
#: 4.4).
PLAN_CARBON_MONTH_WORK = 2.5
#: What a daily peak adds to one draw and month of a plan whatever its candidates: the best
#: plan's monthly split, each month's work set against the band of two capacities [unit]
#: (fitted: 0.8 to 1.5; one all-cloud candidate over 240 months took 0.08 s of CPU more per
#: 100,000 draws under a peak, 1.1 units a month, which the band of candidates counted).
PLAN_PEAK_MONTH_WORK = 1.5
#: Work of one server count over one draw: its owned work and energy in closed form, its
#: shares [unit] (fitted: 3.8 to 11.6).
PLAN_SERVER_WORK = 9
#: ... and whatever the draws, in each chunk of draws: its turn of the loop, some twenty numpy
#: calls [unit] (fitted: 9,000 to 15,000; without it 1,001 server counts at 2,000 draws over
#: 240 months took 1.4 times their count, 101 at 20,000 draws over 12 months 0.7 times).
PLAN_SERVER_CHUNK_WORK = 15_000
#: Work of one candidate over one draw: its burst in closed form over the months, its
#: statistics (selecting its percentiles one rank at a time: most of it) and holding its
#: outcomes [unit] (fitted: 2.1 to 3.9; 10,201 candidates over 12 months at 12,708 draws took
#: 1.22 times a count of 3, some 3.5 to 4 units a draw and candidate).
PLAN_DRAW_WORK = 4
#: What counting carbon adds to one candidate over one draw: its emissions in the same
#: look-ups, their statistics [unit] (fitted: 4.4 to 12).
PLAN_CARBON_DRAW_WORK = 7.5
#: Work of one candidate with a capacity (servers or reservations) over one draw and month
#: under a daily peak: the band's months summed one by one, counted over every month (the
#: band is a share of them: most months for 21 x 5 candidates over 48 months, 2.4 units a
#: candidate-month; few for 201 x 5, whose larger fleets are above every draw's peak, 1.5)
#: [unit] (fitted: 1.7 to 2.0). The all-cloud candidate has no band.
PLAN_BAND_WORK = 1.8
#: What counting carbon adds to the band of one candidate over one draw and month: each
#: table of emissions summed over the band's months too [unit] (fitted: 0 to 2.5; without
#: it a plan of 3 x 2 candidates over 240 months with carbon and a daily peak took 1.9 times
#: its count).
PLAN_CARBON_BAND_WORK = 1.5
#: What adding servers later adds to one candidate over one draw: the cohort's price, two
#: runs of months [unit] (fitted: 18 to 28 over the grid; 7 x 3 x 6 such candidates over 36
#: months at 94,626 draws took 1.25 times a count of 27).
PLAN_STAGED_WORK = 35
#: ... and whatever the draws: its turn of the loops [unit] (fitted: 15,000 to 31,000).
PLAN_STAGED_CANDIDATE_WORK = 25_000
#: Work of one draw of a plan whatever its months and candidates: its sampling, more with
#: more uncertain inputs [unit] (fitted: 0 to 30 with one uncertain input).
PLAN_SAMPLE_WORK = 20
#: Work of one candidate whatever the draws: its summary [unit] (fitted: 4,100 to 6,500
#: beside the bytes of its result; 10,201 candidates at one draw took 0.22 s of CPU).
PLAN_CANDIDATE_WORK = 6_000
#: Work of writing one byte of a plan's result as JSON, per byte :func:`plan_result_bytes`
#: counts [unit] (an upper bound of the bytes: a candidate takes some 250 of the 680 counted).
RESULT_BYTE_WORK = 4
#: Work of one option of a comparison over one draw [unit] (fitted: 0 to 3: a rented option's
#: few uncertain inputs drawn, its line at one utilisation).
COMPARE_OPTION_WORK = 2
#: What an owned option adds over one draw: its many uncertain inputs widened and drawn, its
#: line [unit] (fitted: 25 to 31; counted per option alone, 10 to 19 units a draw and option
#: were measured as the share of owned options went from a third, 32 of the 98 options of
#: 80 GB or more, to 184 of all 324).
COMPARE_OWNED_OPTION_WORK = 25
#: What a comparison by model adds to one option over one draw: its throughput's lognormal
#: error drawn and carried [unit] (fitted: 17 to 22).
COMPARE_MODEL_OPTION_WORK = 20
#: Work of one option of a comparison whatever its draws: resolving it from the catalog, its
#: row of the answer [unit] (fitted: 113,000 to 131,000; a comparison of 1,000 draws is
#: nearly all this).
COMPARE_RESOLVE_WORK = 115_000

#: The most bytes one candidate takes in a plan's JSON result: two counts, ten numbers of
#: 24 characters at most (``-1.2345678901234567e-100``; two of them the Wilson interval of
#: its share cheaper than all-cloud) and the keys [byte].
_CANDIDATE_BYTES = 340 + 2 * 24 + 26
#: The most bytes a candidate's carbon adds to its JSON: five numbers of 24 characters at most
#: and the keys (52 bytes) [byte] (measured: 150 bytes a candidate).
_CARBON_BYTES = 5 * 24 + 52
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


def plan_result_bytes(candidates: int, months: int, *, carbon: bool = False) -> int:
    """The most bytes a plan's JSON result can take [byte]: every candidate twice (the
    frontier may hold them all), all-cloud and the best, the monthly work split and the rest;
    counting ``carbon``, every candidate's carbon and a third time (the carbon frontier)."""
    if carbon:
        listed = (3 * candidates + 2) * (_CANDIDATE_BYTES + _CARBON_BYTES)
    else:
        listed = (2 * candidates + 2) * _CANDIDATE_BYTES
    return listed + months * _MONTH_BYTES + _PLAN_BASE_BYTES


def scenario_work(samples: int, levels: int, months: int, *, api: bool = False) -> int:
    """The work of a scenario of ``levels`` utilisation levels over ``months`` [unit], with a
    hosted API as a third side when ``api``, rounded to a whole unit."""
    month = SCENARIO_MONTH_WORK + api * SCENARIO_API_MONTH_WORK
    return round(samples * (months * month + levels * SCENARIO_LEVEL_WORK + SCENARIO_DRAW_WORK))


@dataclass(frozen=True)
class PlanShape:
    """What a plan's work follows: its ``candidates`` (``staged`` of them adding servers
    later; one ``all_cloud``, no servers and no reservations, when both ranges start at 0),
    ``servers`` server counts, whether it ``reserves``, its ``months``, a daily peak
    (``peaked``) and ``carbon``."""

    candidates: int
    months: int
    servers: int = 1
    reserves: bool = False
    peaked: bool = False
    carbon: bool = False
    staged: int = 0
    all_cloud: bool = False

    @classmethod
    def of(cls, inputs: Any) -> PlanShape:
        """The shape of a plan's :class:`~costmodel.inputs.PlanInputs`."""
        servers = inputs.servers[1] - inputs.servers[0] + 1
        pairs = servers * (inputs.instances[1] - inputs.instances[0] + 1)
        return cls(
            inputs.candidates,
            inputs.horizon_months,
            servers,
            inputs.instances[1] > 0,
            inputs.demand.peak_to_mean.support() != (1.0, 1.0),
            inputs.carbon is not None,
            inputs.candidates - pairs,
            inputs.servers[0] == 0 and inputs.instances[0] == 0,
        )


def plan_passes(samples: int, shape: PlanShape) -> int:
    """How many times a plan builds each chunk of draws' months [-]: once when one chunk holds
    every draw (it is kept), else once for each block of candidates, once more for the few
    candidates the summary compares when there are several blocks, and once for the best
    plan's monthly split."""
    if samples * shape.months <= CHUNK_ELEMENTS:
        return 1
    rows = block_rows(samples, carbon=shape.carbon, staged=shape.staged > 0)
    blocks = -(-shape.candidates // rows)
    return blocks + (blocks > 1) + 1


def plan_work(samples: int, shape: PlanShape) -> int:
    """The work of a plan of ``shape`` over ``samples`` draws [unit]: per draw and month
    whatever the candidates (per pass, per table of emissions and pass that evaluates
    candidates, and under a daily peak), per draw and server count, per draw and candidate
    (and month, under a daily peak, for those with a capacity), per candidate and per byte of
    its result; rounded to a whole unit."""
    s = shape
    tables = 1 + (s.servers > 1) + s.reserves
    passes = plan_passes(samples, s)
    evaluating = passes - (passes > 1)  # the monthly split's pass has no emissions' sums
    month = (
        passes * PLAN_MONTH_WORK
        + s.carbon * tables * evaluating * PLAN_CARBON_MONTH_WORK
        + s.peaked * PLAN_PEAK_MONTH_WORK
    )
    band = s.peaked * s.months * (PLAN_BAND_WORK + s.carbon * PLAN_CARBON_BAND_WORK)
    draw = PLAN_DRAW_WORK + s.carbon * PLAN_CARBON_DRAW_WORK
    per_draw = (
        s.months * month
        + PLAN_SAMPLE_WORK
        + s.servers * PLAN_SERVER_WORK
        + s.candidates * draw
        + (s.candidates - s.all_cloud) * band
        + s.staged * PLAN_STAGED_WORK
    )
    chunks = -(-samples // max(1, CHUNK_ELEMENTS // s.months))  # each holds every server count
    return round(
        PLAN_REQUEST_WORK
        + samples * per_draw
        + s.servers * chunks * PLAN_SERVER_CHUNK_WORK
        + s.candidates * PLAN_CANDIDATE_WORK
        + s.staged * PLAN_STAGED_CANDIDATE_WORK
        + plan_result_bytes(s.candidates, s.months, carbon=s.carbon) * RESULT_BYTE_WORK
    )


def compare_work(samples: int, options: int, owned: int = 0, *, model: bool = False) -> int:
    """The work of a comparison of ``options`` (``owned`` of them owned builds) over
    ``samples`` draws [unit], by ``model`` (cost per M tokens) or not; rounded to a whole
    unit."""
    per_draw = COMPARE_OPTION_WORK + model * COMPARE_MODEL_OPTION_WORK
    owned_work = owned * samples * COMPARE_OWNED_OPTION_WORK
    return round(options * (samples * per_draw + COMPARE_RESOLVE_WORK) + owned_work)


def _samples_check(document: Scenario | Plan, samples: int | None) -> Check:
    path = "simulation.samples" if samples is None else "query.samples"
    given = document.samples if samples is None else samples
    wanted = document.max_draws(samples)  # doubling toward a target may add draws
    if wanted > given:
        path = "simulation.max_samples"
    return Check(path, wanted, "MAX_SAMPLES", LIMITS["MAX_SAMPLES"].counts)


def compare_checks(
    samples: int, months: int, options: int, owned: int = 0, *, model: bool = False
) -> list[Check]:
    """The limits of a comparison of ``options`` (``owned`` of them owned builds) over
    ``samples`` draws and ``months``, by ``model`` or not."""
    per_draw = COMPARE_OPTION_WORK + model * COMPARE_MODEL_OPTION_WORK
    return [
        Check("samples", samples, "MAX_SAMPLES", LIMITS["MAX_SAMPLES"].counts),
        Check("horizon_months", months, "MAX_HORIZON", _MONTHS),
        Check(
            "samples",
            compare_work(samples, options, owned, model=model),
            "MAX_WORK",
            f"units of work ({options} options x (samples x {per_draw:g} + "
            f"{COMPARE_RESOLVE_WORK:,}) + {owned} owned x samples x "
            f"{COMPARE_OWNED_OPTION_WORK})",
        ),
    ]


def _held_text(terms: str) -> str:
    """What a memory check counts: the process, one chunk's arrays, then ``terms``."""
    return (
        f"bytes of memory ({PROCESS_BYTES // 2**20} MiB for the process + {CHUNK_ARRAYS} "
        f"arrays of a chunk of draws x months x 8 + {terms})"
    )


def _plan_checks(plan: Plan, draws: int, work_limit: str) -> list[Check]:
    inputs = plan.inputs
    months, candidates = inputs.horizon_months, inputs.candidates
    carbon = inputs.carbon is not None
    size = plan_result_bytes(candidates, months, carbon=carbon)
    shape = PlanShape.of(inputs)
    draw, candidate = held(carbon)
    terms = [
        f"{PLAN_REQUEST_WORK:,}",
        f"samples x months x {PLAN_MONTH_WORK:g} a pass over the draws",
        *(
            [f"samples x months x {PLAN_CARBON_MONTH_WORK:g} a table of emissions and pass"]
            * carbon
        ),
        *([f"samples x months x {PLAN_PEAK_MONTH_WORK:g} under a daily peak"] * shape.peaked),
        f"samples x {PLAN_SAMPLE_WORK}",
        f"samples x server counts x {PLAN_SERVER_WORK}",
        f"{PLAN_SERVER_CHUNK_WORK:,} per server count and chunk of draws",
        f"samples x candidates x {PLAN_DRAW_WORK + carbon * PLAN_CARBON_DRAW_WORK:g}",
        *(
            [
                f"samples x candidates with a capacity x months x "
                f"{PLAN_BAND_WORK + carbon * PLAN_CARBON_BAND_WORK:g}"
            ]
            * shape.peaked
        ),
        *([f"samples x later purchases x {PLAN_STAGED_WORK}"] * bool(shape.staged)),
        f"{PLAN_CANDIDATE_WORK:,} per candidate",
        f"{RESULT_BYTE_WORK} per byte of result",
    ]
    counted = f"units of work ({' + '.join(terms)})"
    memory = plan_memory(draws, candidates, months, carbon=carbon)
    return [
        Check("own.servers", candidates, "MAX_CANDIDATES", "candidates (servers x reservations)"),
        Check("own.servers", size, "MAX_RESULT_BYTES", "bytes of result at most"),
        Check("own.servers", plan_work(draws, shape), work_limit, counted),
        Check(
            "own.servers",
            memory,
            "MAX_MEMORY",
            _held_text(
                f"samples x {PLAN_SAMPLE_BYTES} + samples x min(candidates, a block of "
                f"{block_rows(draws, carbon=carbon):,}) x {draw} + {candidate:,} per candidate"
            ),
        ),
    ]


def _document_checks(
    document: Scenario | Plan, samples: int | None, work_limit: str
) -> list[Check]:
    """Every limit the evaluation of ``document`` is held to, its work to ``work_limit``."""
    samples_check = _samples_check(document, samples)
    draws = samples_check.value
    if isinstance(document, Plan):
        horizon = document.inputs.horizon_months
        checks = [samples_check, Check("horizon_months", horizon, "MAX_HORIZON", _MONTHS)]
        return [*checks, *_plan_checks(document, draws, work_limit)]
    inputs = document.resolved.inputs
    horizon, levels = inputs.horizon_months, len(inputs.utilisation)
    api = inputs.api is not None
    work = scenario_work(draws, levels, horizon, api=api)
    month = SCENARIO_MONTH_WORK + api * SCENARIO_API_MONTH_WORK
    return [
        samples_check,
        Check("horizon_months", horizon, "MAX_HORIZON", _MONTHS),
        Check("utilisation", levels, "MAX_LEVELS", LIMITS["MAX_LEVELS"].counts),
        Check(
            "utilisation",
            work,
            work_limit,
            f"units of work (samples x (months x {month:g} + levels x {SCENARIO_LEVEL_WORK} + "
            f"{SCENARIO_DRAW_WORK:,}))",
        ),
        _scenario_memory_check(samples_check.path, inputs, draws),
    ]


def _scenario_memory_check(path: str, inputs: Any, draws: int) -> Check:
    """The memory a scenario's evaluation over ``draws`` holds, its sides and a carbon price
    counted."""
    sides = (inputs.api is not None) + len(inputs.further_sides)
    priced = inputs.carbon is not None and inputs.carbon.priced
    levels, months = len(inputs.utilisation), inputs.horizon_months
    memory = scenario_memory(draws, levels, months, sides=sides, priced=priced)
    terms = scenario_terms(draws, levels, sides, priced)
    return Check(path, memory, "MAX_MEMORY", _held_text(terms))


def check_document(document: Scenario | Plan, samples: int | None, *, job: bool = False) -> None:
    """422 naming every limit the evaluation of ``document`` (with ``samples`` overriding its
    draws) would exceed, its work counted against ``MAX_JOB_WORK`` for a ``job`` and against
    ``MAX_WORK`` otherwise; nothing is evaluated first."""
    if job:
        abort_over_limits(_document_checks(document, samples, "MAX_JOB_WORK"))
        return
    checks = _document_checks(document, samples, "MAX_WORK")
    config = current_app.config
    as_job = _document_checks(document, samples, "MAX_JOB_WORK")
    hint = None
    if config["JOB_WORKERS"] > 0 and not any(c.value > config[c.setting] for c in as_job):
        hint = (
            "POST it to /v1/runs to have it run as a job (202 Accepted, then poll its "
            "Location), or ask for less work"
        )
    abort_over_limits(checks, hint)


def over_sync_work(document: Scenario | Plan, samples: int | None) -> bool:
    """Whether ``document`` asks for more work than ``MAX_WORK``, the most a request is
    answered at once."""
    limit = current_app.config["MAX_WORK"]
    checks = _document_checks(document, samples, "MAX_WORK")
    return any(c.value > limit for c in checks if c.setting == "MAX_WORK")


def abort_over_limits(checks: Sequence[Check], hint: str | None = None) -> None:
    """422 naming every limit exceeded, each with its key path and setting; ``hint`` (what the
    client can do instead) ends the message when the work limit is one of them."""
    config = current_app.config
    over = [c for c in checks if c.value > config[c.setting]]
    if not over:
        return
    problems = [
        {
            "path": c.path,
            "message": f"{c.value:,} exceeds the limit of {config[c.setting]:,} {c.counts} "
            f"(COSTMODEL_{c.setting})",
        }
        for c in over
    ]
    message = "the request exceeds a limit of this service: " + "; ".join(
        p["message"] for p in problems
    )
    if hint and any(c.setting == "MAX_WORK" for c in over):
        message += f". {hint}"
    abort(422, message=message, errors=problems)


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
