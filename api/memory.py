"""What an evaluation holds in memory: the whole process of a job, counted before it runs.

A job runs in a process of its own, so what it costs the machine is that process's peak
resident memory: the interpreter with numpy, scipy and the catalog, the engine's arrays of one
chunk of draws x months, each draw's sampled inputs and outcomes, a plan's outcomes of every
candidate over every draw, and the result. ``benchmarks/bench_memory.py`` measures the peak of
each shape in a process of its own and prints it beside the count of this module; the
constants are fitted to those figures (least squares, rounded up), and the count stays within
10 % of the measured peak for the large shapes that come near ``COSTMODEL_MAX_MEMORY``.

A request answered at once is counted the same way, though the server process it runs in is
already there: one rule for what an evaluation may hold.
"""

from __future__ import annotations

from costmodel.engine import CUMULATIVE_DRAWS
from costmodel.fleet import block_rows
from costmodel.stats import HELD_PAYBACKS

__all__ = [
    "CHUNK_ARRAYS",
    "PLAN_CANDIDATE_BYTES",
    "PLAN_CARBON_CANDIDATE_BYTES",
    "PLAN_CARBON_DRAW_BYTES",
    "PLAN_DRAW_BYTES",
    "PLAN_SAMPLE_BYTES",
    "PROCESS_BYTES",
    "SCENARIO_CARBON_DRAW_BYTES",
    "SCENARIO_CODED_LEVEL_BYTES",
    "SCENARIO_DRAW_BYTES",
    "SCENARIO_LEVEL_BYTES",
    "SCENARIO_SIDE_CODED_LEVEL_BYTES",
    "SCENARIO_SIDE_DRAW_BYTES",
    "SCENARIO_SIDE_LEVEL_BYTES",
    "held",
    "plan_memory",
    "scenario_memory",
    "scenario_terms",
]

#: The memory of a job's process before its draws: the interpreter with numpy and scipy, the
#: catalog and the document [byte] (measured: 71 MiB for a scenario of one draw).
PROCESS_BYTES = 80 * 2**20
#: Elements of one chunk of draws x months, the most the engine evaluates at once [-].
CHUNK_ELEMENTS = 2_000_000
#: Arrays of one chunk the engine holds at once, 8 bytes an element [-] (fitted: 7.0 for a
#: scenario, 4.8 for a plan).
CHUNK_ARRAYS = 7
#: Memory of one draw of a scenario whatever its levels: its sampled inputs, costs and
#: summaries [byte] (fitted: 251).
SCENARIO_DRAW_BYTES = 256
#: Memory of one utilisation level's outcomes over one draw [byte] (fitted: 9.2), while the
#: levels x draws are at most :data:`~costmodel.stats.HELD_PAYBACKS`: a payback month of 8
#: bytes among them.
SCENARIO_LEVEL_BYTES = 10
#: ... beyond that, each payback month held as a 2-byte code (:class:`costmodel.stats.Paybacks`)
#: [byte]: 6 fewer (200,000 draws x 101 levels x 240 months peaked at 298 MiB, counted 465 MiB
#: at 10 bytes a level and 350 MiB at 4).
SCENARIO_CODED_LEVEL_BYTES = 4
#: Memory of one draw of each side beyond buying and renting (the API, a further side)
#: whatever the levels [byte] (fitted: 47, the API's).
SCENARIO_SIDE_DRAW_BYTES = 48
#: Memory of one utilisation level's outcomes over one draw of each side beyond buying and
#: renting [byte] (fitted: 8.4, the API's), while the levels x draws are at most
#: :data:`~costmodel.stats.HELD_PAYBACKS` ...
SCENARIO_SIDE_LEVEL_BYTES = 9
#: ... and beyond, its payback months as 2-byte codes [byte] (with an API side and an uncertain
#: carbon price 200,000 x 101 x 240 peaked at 466 MiB, counted 806 MiB at 9 and 575 MiB at 3).
SCENARIO_SIDE_CODED_LEVEL_BYTES = 3
#: Memory of one draw's emissions in money, with a carbon price, whatever the levels [byte]
#: (fitted: 64).
SCENARIO_CARBON_DRAW_BYTES = 64
#: Memory of one draw of a plan whatever its candidates: its sampled inputs [byte] (fitted: 29).
PLAN_SAMPLE_BYTES = 32
#: Memory of one candidate's outcomes over one draw: cost, owned share, utilisation [byte],
#: held for one block of candidates at a time (:func:`costmodel.fleet.block_rows`).
PLAN_DRAW_BYTES = 24
#: Memory of one candidate whatever the draws: its summary and its share of the result
#: [byte] (measured: 4,050 over 101,101 candidates at one draw, 471 MiB; 2,400 over 10,201).
PLAN_CANDIDATE_BYTES = 4_400
#: Memory of one candidate's emissions over one draw [byte].
PLAN_CARBON_DRAW_BYTES = 8
#: Memory of one candidate's carbon whatever the draws: its figures, their JSON, its place in
#: the carbon frontier [byte] (measured: 7.6 MiB more for 10,000 candidates at 10 draws,
#: 10,000 x (10 x 8 + 720)).
PLAN_CARBON_CANDIDATE_BYTES = 800


def _chunk(samples: int, months: int) -> int:
    """The bytes of the arrays of one chunk of ``samples`` draws over ``months``."""
    return CHUNK_ARRAYS * 8 * min(samples, max(1, CHUNK_ELEMENTS // months)) * months


def _level_bytes(samples: int, levels: int) -> tuple[int, int]:
    """The bytes of one level over one draw, of buying against renting and of each further
    side: payback months held as they are, or as 2-byte codes beyond
    :data:`~costmodel.stats.HELD_PAYBACKS` levels x draws."""
    if levels * samples > HELD_PAYBACKS:
        return SCENARIO_CODED_LEVEL_BYTES, SCENARIO_SIDE_CODED_LEVEL_BYTES
    return SCENARIO_LEVEL_BYTES, SCENARIO_SIDE_LEVEL_BYTES


def scenario_memory(
    samples: int, levels: int, months: int, *, sides: int = 0, priced: bool = False
) -> int:
    """The peak memory of a job evaluating a scenario of ``levels`` utilisation levels over
    ``months`` with ``sides`` beyond buying and renting (the API, further sides), ``priced``
    when carbon has a price [byte]: the process, one chunk's arrays, the cumulative cost by
    month of the first :data:`~costmodel.engine.CUMULATIVE_DRAWS` draws (with a carbon price
    3 more such lines, and one a side beyond buying and renting: the priced emissions by
    month), and each draw's inputs and outcomes (measured: 298 MiB for 200,000 draws x 101
    levels x 240 months, counted as 83,886,080 + 111,995,520 + 38,400,000 + 132,000,000 =
    366,281,600 bytes, 349 MiB; with the API 319 MiB, with the API and an uncertain carbon
    price 466 MiB, counted 575 MiB. A fixed price held less: counted as an uncertain one)."""
    lines = 1 + priced * (3 + sides)
    cumulative = min(samples, CUMULATIVE_DRAWS) * months * 8 * lines
    level, side_level = _level_bytes(samples, levels)
    per_draw = (
        SCENARIO_DRAW_BYTES
        + levels * level
        + sides * (SCENARIO_SIDE_DRAW_BYTES + levels * side_level)
        + priced * SCENARIO_CARBON_DRAW_BYTES
    )
    return PROCESS_BYTES + _chunk(samples, months) + cumulative + samples * per_draw


def scenario_terms(samples: int, levels: int, sides: int, priced: bool) -> str:
    """The words of :func:`scenario_memory`'s terms after the process and the chunk."""
    lines = 1 + priced * (3 + sides)
    level, side_level = _level_bytes(samples, levels)
    per_draw = f"{SCENARIO_DRAW_BYTES} + levels x {level}"
    if sides:
        per_draw += f" + {sides} x ({SCENARIO_SIDE_DRAW_BYTES} + levels x {side_level})"
    if priced:
        per_draw += f" + {SCENARIO_CARBON_DRAW_BYTES}"
    times = f" x {lines}" if lines > 1 else ""
    return (
        f"months x 8{times} for each of the first {CUMULATIVE_DRAWS:,} samples + samples x "
        f"({per_draw})"
    )


def plan_memory(samples: int, candidates: int, months: int, *, carbon: bool = False) -> int:
    """The peak memory of a job evaluating a plan of ``candidates`` over ``months`` [byte],
    counting ``carbon``: the process, one chunk's arrays, each draw's inputs, one block of
    candidates' outcomes over every draw (:func:`costmodel.fleet.block_rows`: the plan is
    evaluated block by block) and every candidate's summary (measured: 146 MiB for 4,000
    draws of 10,201 candidates over 12 months, counted as 83,886,080 + 2,688,000 + 128,000 +
    50,304,000 + 44,884,400 = 181,890,480 bytes, 173 MiB)."""
    draw, candidate = held(carbon)
    block = min(candidates, block_rows(samples, carbon=carbon))
    return (
        PROCESS_BYTES
        + _chunk(samples, months)
        + samples * PLAN_SAMPLE_BYTES
        + block * samples * draw
        + candidates * candidate
    )


def held(carbon: bool) -> tuple[int, int]:
    """The bytes a plan holds per draw and candidate, and per candidate, counting ``carbon``."""
    if carbon:
        return (
            PLAN_DRAW_BYTES + PLAN_CARBON_DRAW_BYTES,
            PLAN_CANDIDATE_BYTES + PLAN_CARBON_CANDIDATE_BYTES,
        )
    return PLAN_DRAW_BYTES, PLAN_CANDIDATE_BYTES
