"""Units of work: one record per unit, in one registry.

The engine counts whatever unit a question names: a side's capacity is in units of work per
hour and a cost per unit is its TCO over the work done. What one unit is, how it is named and
how one GPU's rate becomes units of work per GPU-hour is the unit's :class:`Unit` record, and
every record is in :data:`UNITS` by its id. The catalog lookup that gives a GPU's rate belongs
to the scenario layer's workload (``scenarios.sides.Work``); the engine only scales the rate.

>>> UNITS["million_tokens"].per_gpu_hour(2500.0)   # tokens/s -> M tokens per GPU-hour
9.0
"""

from __future__ import annotations

from dataclasses import dataclass

from pricing.vocabulary import SERVING_LIMITS, Bound

__all__ = [
    "MTOK_PER_GPU_HOUR",
    "PER_GPU_HOUR",
    "UNITS",
    "Unit",
    "UnitError",
    "rates",
    "register",
    "unit",
]

#: M tokens per GPU-hour in one token per second [M tokens/GPU-hour per token/s]: 3600 / 1e6.
MTOK_PER_GPU_HOUR = 3600 / 1e6


#: The rate every unit of work may be given in: units of work per GPU-hour, as they are (for
#: training, the GPU's throughput relative to the reference GPU's). A unit whose ``rate`` is
#: another (tokens per second) takes that one as well.
PER_GPU_HOUR = "relative_throughput"


class UnitError(ValueError):
    """A unit of work that is not registered, or registered twice."""


@dataclass(frozen=True, kw_only=True)
class Unit:
    """One unit of work.

    ``id`` is its key in documents and results; ``words`` how sentences name one unit
    ("M tokens"); ``header`` and ``carbon_header`` how a table heads its cost [USD] and
    emissions [g CO2e] per unit; ``column`` the stem of the per-level table's columns
    (``cost_per_<column>``, ``carbon_<side>_g_per_<column>``); ``note`` the reports' note on
    the unit costs. ``rate`` is the side input that gives one GPU's rate and ``rate_unit``,
    ``rate_text``, ``rate_bound`` its unit, description and range; ``scale`` turns one of the
    rate's units into units of work per GPU-hour. ``demand`` is the key of a plan's month-1
    amount of work, with ``demand_unit``, ``demand_text`` and ``demand_bound``. ``fine``: the
    costs per unit are fractions of a cent apart (shown to three significant figures, and
    listed with the report's summary) rather than money to the cent.
    """

    id: str
    words: str
    header: str
    carbon_header: str
    column: str
    note: str
    rate: str
    rate_unit: str
    rate_text: str
    rate_bound: Bound
    scale: float = 1.0
    demand: str
    demand_unit: str
    demand_text: str
    demand_bound: Bound
    fine: bool = False

    def per_gpu_hour(self, rate: float) -> float:
        """Units of work one GPU does per hour at ``rate`` [the rate's unit]."""
        return rate if self.scale == 1.0 else rate * self.scale


#: Every unit of work by id, in the order they were registered.
UNITS: dict[str, Unit] = {}


def register(record: Unit) -> Unit:
    """Add ``record`` to :data:`UNITS`; a unit whose rate is another unit's takes the same
    scale (the engine reads one rate one way)."""
    if record.id in UNITS:
        raise UnitError(f"unit of work {record.id!r} is registered already")
    same = [u for u in UNITS.values() if u.rate == record.rate and u.scale != record.scale]
    if same:
        raise UnitError(f"rate {record.rate!r} is scaled by {same[0].scale} for {same[0].id!r}")
    UNITS[record.id] = record
    return record


def unit(unit_id: str) -> Unit:
    """The record of unit ``unit_id``; an error lists the registered ones."""
    try:
        return UNITS[unit_id]
    except KeyError:
        raise UnitError(f"unknown unit of work {unit_id!r}; valid: {', '.join(UNITS)}") from None


def rates() -> dict[str, float]:
    """Every rate input a side may give one GPU's throughput in, with its scale to units of
    work per GPU-hour."""
    return {u.rate: u.scale for u in UNITS.values()}


_THROUGHPUT = "[reference GPU-hours/GPU-hour]"

register(
    Unit(
        id="reference_gpu_hour",
        words="reference GPU-hour",
        header="$/ref GPU-h",
        carbon_header="g/ref GPU-h",
        column="ref_gpu_hour",
        note="unit cost per reference GPU-hour of work",
        rate="relative_throughput",
        rate_unit=_THROUGHPUT,
        rate_text="work of one GPU per hour, in units of work (reference GPU-hours for "
        "training); give it or tokens_per_s_per_gpu",
        # A GPU does between a thousandth and a thousand times the reference GPU's work:
        # wider ratios are typing errors, and would let costs overflow.
        rate_bound=Bound(0.001, 1000, _THROUGHPUT),
        demand="reference_gpu_hours_per_month",
        demand_unit="[reference GPU-hours/month]",
        demand_text="work in month 1 (training)",
        demand_bound=Bound(0, 1e9, "[reference GPU-hours/month]"),
    )
)
register(
    Unit(
        id="million_tokens",
        words="M tokens",
        header="$/M tokens",
        carbon_header="g/M tokens",
        column="million_tokens",
        note="unit cost per M tokens (input + output) served",
        rate="tokens_per_s_per_gpu",
        rate_unit="[tokens/s per GPU]",
        rate_text="serving throughput of one GPU, input + output tokens (inference work: "
        "M tokens per GPU-hour = tokens/s * 3600 / 1e6); give it or relative_throughput",
        rate_bound=SERVING_LIMITS["tokens_per_s_per_gpu"],
        scale=MTOK_PER_GPU_HOUR,
        demand="million_tokens_per_month",
        demand_unit="[M tokens/month]",
        demand_text="work in month 1 (inference), input + output tokens",
        demand_bound=Bound(0, 1e12, "[M tokens/month]"),
        fine=True,
    )
)
