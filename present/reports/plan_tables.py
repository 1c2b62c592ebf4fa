"""A fleet plan's tables, from a :class:`~costmodel.plan_result.PlanResult`: formatted for HTML
and Markdown, raw for CSV and XLSX.

Money in [USD] present value; shares, utilisation and probabilities as fractions [-] (shown as
percentages); work in [reference GPU-hours/month]; emissions in [t CO2e] (a plan that counts
carbon only). A candidate is named by ``servers`` owned and ``instances`` reserved; the rest of
its work is burst.
"""

from __future__ import annotations

from costmodel.plan_result import Candidate, PlanResult
from costmodel.result import Column, Quantity

from ..answer import Answer
from ..formatting import fmt_servers, fmt_share, fmt_usd
from .tables import Table, run_items

__all__ = [
    "WORK_LAYERS",
    "best_plan_table",
    "candidate_columns",
    "candidates_table",
    "frontier_columns",
    "plan_summary_items",
    "work_split_columns",
]

#: What each objective minimises, in words.
_OBJECTIVES = {"mean": "mean cost", "p90": "P90 cost", "cvar95": "CVaR95 (mean of the worst 5 %)"}
_STATS = ("mean", "p10", "p50", "p90", "cvar95")
#: Where the best plan's work runs: the column of :func:`work_split_columns` and its label.
WORK_LAYERS = (
    ("owned_ref_gpu_hours", "owned servers"),
    ("reserved_ref_gpu_hours", "reserved instances"),
    ("burst_ref_gpu_hours", "burst instances"),
)


def _key(c: Candidate) -> tuple:
    return c.key


def _marks(result: PlanResult, c: Candidate) -> str:
    """``c``'s roles: "best", "frontier", "carbon frontier", "all-cloud", comma-separated, or
    ``""``."""
    found = [
        ("best", _key(c) == _key(result.best)),
        ("frontier", _key(c) in {_key(f) for f in result.frontier}),
        ("carbon frontier", _key(c) in {_key(f) for f in result.carbon_frontier or ()}),
        ("all-cloud", _key(c) == (0, 0, 0, None)),
    ]
    return ", ".join(label for label, yes in found if yes)


def _shown(result: PlanResult) -> list[Candidate]:
    """The candidates, after the all-cloud reference when it is not one of them."""
    extra = [result.all_cloud] if result.candidate(0, 0) is None else []
    return extra + list(result.candidates)


def candidates_table(result: PlanResult) -> Table:
    """Every candidate with its cost statistics, shares and marks (and, with downtime, the
    share of its GPUs in service; in a plan that counts carbon, its mean emissions); the best
    row highlighted."""
    rows = _shown(result)
    up = ("GPUs in service",) if result.downtime else ()
    up += ("Carbon mean [t CO2e]",) if result.counts_carbon else ()
    headers = (
        "Servers",
        "Reserved",
        "Cost mean",
        "Cost P10",
        "Cost P50",
        "Cost P90",
        "CVaR95",
        "Owned share",
        "Owned utilisation",
        "P(cheaper than cloud)",
        *up,
        "Plan",
    )
    cells = tuple(
        (
            fmt_servers(c),
            str(c.instances),
            *(fmt_usd(getattr(c.cost, s)) for s in _STATS),
            fmt_share(c.share_owned),
            fmt_share(c.owned_utilisation),
            fmt_share(c.prob_cheaper_than_cloud),
            *((f"{c.availability * 100:.5g} %",) if result.downtime else ()),
            *((_tonnes(c),) if result.counts_carbon else ()),
            _marks(result, c),
        )
        for c in rows
    )
    best = tuple(_key(c) == _key(result.best) for c in rows)
    return Table(headers, cells, (True,) * (10 + len(up)) + (False,), best)


def _tonnes(c: Candidate) -> str:
    return "unknown" if c.carbon is None else f"{c.carbon.mean:,.1f}"


def _carbon_rows(result: PlanResult) -> tuple[tuple[str, str], ...]:
    """The best plan's emissions and the carbon frontier's size; none without carbon."""
    if not result.counts_carbon:
        return ()
    c = result.best.carbon
    if c is None:
        return (("Emissions", "unknown (see the warnings)"),)
    band = f"{c.p10:,.1f} / {c.p50:,.1f} / {c.p90:,.1f}"
    front = f"{len(result.carbon_frontier)} of {len(result.candidates)} candidates"
    return (
        ("Emissions mean [t CO2e]", f"{c.mean:,.1f}"),
        ("Emissions P10 / P50 / P90 [t CO2e]", band),
        ("Emissions per unit of work [g CO2e]", f"{c.per_unit:,.4g}"),
        ("Carbon frontier (cost against carbon)", front),
    )


def best_plan_table(result: PlanResult) -> Table:
    """The best candidate's figures next to the all-cloud reference."""
    b, cloud = result.best, result.all_cloud
    rows = (
        ("Servers owned", str(b.servers)),
        ("Instances reserved", str(b.instances)),
        ("Cost mean", fmt_usd(b.cost.mean)),
        ("Cost P10 / P50 / P90", " / ".join(fmt_usd(getattr(b.cost, s)) for s in _STATS[1:4])),
        ("Cost CVaR95 (mean of the worst 5 % of draws)", fmt_usd(b.cost.cvar95)),
        ("All-cloud cost P50 / P90", f"{fmt_usd(cloud.cost.p50)} / {fmt_usd(cloud.cost.p90)}"),
        ("Draws cheaper than all-cloud", fmt_share(b.prob_cheaper_than_cloud)),
        ("Share of the work on owned servers", fmt_share(b.share_owned)),
        ("Utilisation of the owned servers", fmt_share(b.owned_utilisation)),
        ("Chosen by", _OBJECTIVES.get(result.objective, result.objective)),
        ("Frontier", f"{len(result.frontier)} of {len(result.candidates)} candidates"),
        *_carbon_rows(result),
    )
    return Table(("Figure", "Value"), rows, (False, True))


def candidate_columns(result: PlanResult) -> list[Column]:
    """One value per candidate, in ``result.candidates`` order: the columns of
    :meth:`~costmodel.plan_result.PlanResult.columns` and the ``best``, ``frontier`` (and in a
    plan that counts carbon ``carbon_frontier``) flags as ``bool``."""
    cs = result.candidates
    frontier = {_key(f) for f in result.frontier}
    green = {_key(f) for f in result.carbon_frontier or ()}
    return [
        *result.columns(),
        Column("best", [_key(c) == _key(result.best) for c in cs]),
        Column("frontier", [_key(c) in frontier for c in cs]),
        *(
            [Column("carbon_frontier", [_key(c) in green for c in cs])]
            if result.counts_carbon
            else []
        ),
    ]


def frontier_columns(result: PlanResult) -> list[Column]:
    """The frontier's candidates, cheapest mean first (then lowest P90), with the columns of
    :func:`candidate_columns` but its ``frontier`` flag."""
    at = {_key(c): i for i, c in enumerate(result.candidates)}
    front = sorted(result.frontier, key=lambda c: (c.cost.mean, c.cost.p90))
    rows = [at[_key(c)] for c in front]
    return [
        Column(col[0], [col[1][i] for i in rows], col.quantity)
        for col in candidate_columns(result)
        if col[0] != "frontier"
    ]


#: A staged plan's further columns of :func:`work_split_columns` and the field of each.
CAPACITY_COLUMNS = (
    ("owned_capacity_ref_gpu_hours", "capacity"),
    ("work_p10_ref_gpu_hours", "demand_p10"),
    ("work_p90_ref_gpu_hours", "demand_p90"),
)


def work_split_columns(result: PlanResult) -> list[Column]:
    """The best plan's mean work of each month m = 1..H [reference GPU-hours/month]; for a
    plan that adds servers later, also its mean owned capacity and the work's P10 and P90."""
    split = result.work_split
    layers = (split.owned, split.reserved, split.burst)
    staged = () if split.capacity is None else CAPACITY_COLUMNS
    return [
        Column("month", list(range(1, len(split.owned) + 1))),
        *(
            Column(name, v.tolist(), Quantity.WORK)
            for (name, _), v in zip(WORK_LAYERS, layers, strict=True)
        ),
        *(Column(name, getattr(split, key).tolist(), Quantity.WORK) for name, key in staged),
    ]


def plan_summary_items(result: Answer[PlanResult]) -> list[Column]:
    """The XLSX summary sheet of a plan: raw values (money [USD], fractions [-], counts)."""
    b, cloud = result.best, result.all_cloud
    usd, share = Quantity.USD, Quantity.SHARE
    items = [
        Column("verdict", result.verdict),
        Column("objective", result.objective),
        Column("best_servers", b.servers),
        Column("best_instances", b.instances),
    ]
    items += [Column(f"best_cost_{s}", getattr(b.cost, s), usd) for s in _STATS]
    items += [
        Column("best_share_owned", b.share_owned, share),
        Column("best_owned_utilisation", b.owned_utilisation, share),
        Column("best_prob_cheaper_than_cloud", b.prob_cheaper_than_cloud, share),
    ]
    items += [Column(f"all_cloud_cost_{s}", getattr(cloud.cost, s), usd) for s in _STATS]
    items += [
        Column("candidates_count", len(result.candidates)),
        Column("frontier_count", len(result.frontier)),
    ]
    if result.counts_carbon:
        known = result.best.carbon is not None
        items += [
            Column(f"best_carbon_t_{s}", getattr(b.carbon, s) if known else None, Quantity.TONNES)
            for s in ("mean", "p10", "p50", "p90")
        ]
        items.append(Column("carbon_frontier_count", len(result.carbon_frontier or ())))
    return items + run_items(result)
