"""The sentences a result is read by, written once for the CLI, the reports and the page: the
one-sentence answers of a comparison and of a plan, the precision of the break-even and that
of a plan's choice."""

from __future__ import annotations

import math

from costmodel.plan_result import Candidate, PlanResult
from costmodel.result import Breakeven, Result
from costmodel.sides import side as side_of
from pricing.text import counted

from .formatting import (
    fmt_candidate,
    fmt_margin,
    fmt_mix,
    fmt_share,
    fmt_usd,
    fmt_usd_margin,
    fmt_utilisation,
    missing,
)

__all__ = ["OBJECTIVE_WORDS", "plan_precision_text", "plan_verdict", "precision_text", "verdict"]

#: How sentences name each objective of a plan.
OBJECTIVE_WORDS = {"mean": "mean cost", "p90": "P90 cost", "cvar95": "CVaR95 cost"}


def verdict(result: Result) -> str:
    """Break-even P50 with its P10-P90 range, then the picture at the report utilisation
    (that of the cumulative cost by month); with more sides than renting (a hosted API, a
    further side), the option cheapest in most draws at the report utilisation and each
    break-even (:func:`_many_sides`).

    The part at the report utilisation is left out when that level is not one of the
    ``utilisation`` levels.
    """
    if len(result.sides) > 2:
        return _many_sides(result)
    be = result.breakeven_utilisation
    if missing(be.p50):
        head = (
            "Renting is cheaper at every utilisation in most draws: buying never breaks "
            f"even in {fmt_share(be.prob_never)} of draws"
        )
    elif be.p50 == 0.0:
        head = f"Buying is cheaper even when idle in {fmt_share(be.prob_always)} of draws"
    else:
        head = f"Buying breaks even at {fmt_utilisation(be.p50)} utilisation"
        head += _spread(be)
    j = result.level(result.cumulative_cost.utilisation)
    if j is None:
        return head + "."
    level, payback = result.cumulative_cost.utilisation, result.payback_months
    tail = (
        f"; at {fmt_utilisation(level)} utilisation buying is cheaper in "
        f"{fmt_share(result.prob_buy_cheaper[j])} of draws"
    )
    if not missing(float(payback.p50[j])):
        tail += f" and pays back in {payback.p50[j]:.1f} months (P50)"
    return head + tail + "."


def _spread(be: Breakeven) -> str:
    """ " (P10-P90: a to b)" when the break-even varies ("never", NaN, counts as one value)."""
    if be.p10 == be.p90:
        return ""
    return f" (P10-P90: {fmt_utilisation(be.p10)} to {fmt_utilisation(be.p90)})"


def _breakeven(be: Breakeven, against: str) -> str:
    """Where buying breaks even against one side, as what buying does."""
    if missing(be.p50):
        return f"never breaks even with {against} in most draws"
    if be.p50 == 0.0:
        return f"is cheaper than {against} even when idle in most draws"
    return f"breaks even with {against} at {fmt_utilisation(be.p50)}{_spread(be)}"


def _many_sides(result: Result) -> str:
    """The option cheapest in most draws at the report utilisation, with the others' shares,
    then where buying breaks even with each other side (renting, the API, ...)."""
    said = [_breakeven(result.against(s).breakeven, side_of(s).doing) for s in result.sides[1:]]
    tail = f"buying {', '.join(said[:-1])} and {said[-1]}"
    j = result.level(result.cumulative_cost.utilisation)
    if j is None:
        return tail[0].upper() + tail[1:] + "."
    shares = {side: float(share[j]) for side, share in result.cheapest_share.items()}
    best = max(shares, key=lambda side: shares[side])  # the first in the sides' order on ties
    others = ", ".join(f"{side_of(s).doing} {fmt_share(v)}" for s, v in shares.items() if s != best)
    level = fmt_utilisation(result.cumulative_cost.utilisation)
    head = (
        f"At {level} utilisation {side_of(best).doing} is the cheapest option in "
        f"{fmt_share(shares[best])} of draws ({others})"
    )
    return f"{head}; {tail}."


def _mix(best: Candidate) -> str:
    parts = []
    if best.servers:
        parts.append(f"own {counted(best.servers, 'server')}{' now' if best.add else ''}")
    if best.add:
        parts.append(_added(best))
    if best.instances:
        parts.append(f"reserve {counted(best.instances, 'instance')}")
    plan = " and ".join(parts)
    return plan[0].upper() + plan[1:]


def _added(best: Candidate) -> str:
    """ "add 2 when the work passes 90 % of their capacity, in month 14 in the median draw"
    (the first month of service), or the month they are bought for ``at_month``."""
    a = best.add
    verb = "add" if best.servers else "buy"
    if a.at_month is not None:
        when = f"in month {a.at_month}"
    elif best.servers:
        when = f"when the work passes {fmt_share(a.when_demand_above)} of their capacity"
    else:
        when = "when the work arrives"
    month = a.month.p50
    served = (
        f"in service from month {month:.0f} in the median draw"
        if not missing(month)
        else "which in the median draw does not happen within the horizon"
    )
    return f"{verb} {counted(a.servers, 'server')} {when}, {served}"


#: How a plan's verdict says where the work beyond the fleet goes: all of it, and the rest.
_BURST_WORDS = {
    "on_demand": ("Rent everything (on-demand)", "burst the rest (on-demand)"),
    "spot": ("Rent everything (spot)", "burst the rest (spot)"),
    "api": ("Send everything to the API", "send the rest to the API"),
}


def plan_verdict(
    result: PlanResult, burst: str, edges: tuple[tuple[int, str], tuple[int, str] | None]
) -> str:
    """The best plan and its P50 saving [-] against all-cloud (``result.saving``), with its
    probability.

    ``burst`` is the burst pricing model, or ``"api"`` for a hosted API; ``edges`` the most
    servers and reserved instances considered, each with the key that raises it (``None``
    without reservations): a best plan at the edge of the range says so.
    """
    return _plan_sentence(result, burst, edges) + _greenest(result)


def _greenest(result: PlanResult) -> str:
    """ " Lowest carbon: ...", the carbon frontier's lowest-emission candidate when it is not
    the best; "" without a carbon frontier."""
    if not result.carbon_frontier:
        return ""
    low = min(result.carbon_frontier, key=lambda c: (c.carbon.mean, c.cost.mean))
    best = result.best
    if (low.servers, low.instances) == (best.servers, best.instances):
        return f" It is also the lowest-carbon mix ({best.carbon.mean:,.1f} t CO2e)."
    fewer = best.carbon.mean - low.carbon.mean
    dearer = low.cost.mean - best.cost.mean
    mix = fmt_candidate(low)
    return (
        f" Lowest carbon: {mix}, {fewer:,.1f} t CO2e fewer for {fmt_usd(dearer)} more on the "
        "mean cost."
    )


def _plan_sentence(
    result: PlanResult, burst: str, edges: tuple[tuple[int, str], tuple[int, str] | None]
) -> str:
    best, saving = result.best, result.saving
    everything, rest = _BURST_WORDS.get(burst, _BURST_WORDS["on_demand"])
    if best.servers == 0 and best.instances == 0:
        return (
            f"{everything}: no mix of owned servers and reservations considered "
            f"beats it on the {result.objective} cost."
        )
    plan = _mix(best)
    rest = "" if best.share_owned >= 1.0 else f" and {rest}"
    if saving is None or math.isnan(saving):
        return f"{plan}{rest}."  # no work to compare against
    if saving >= 0:
        change = f"P50 saving {fmt_share(saving)}"
    else:
        change = f"P50 {fmt_share(-saving)} dearer"
    cheaper = fmt_share(best.prob_cheaper_than_cloud)
    (servers, servers_key), instances = edges
    edge = ""
    if 0 < servers == best.servers:
        edge = f" It owns the most servers considered: raise {servers_key} to see if more pay."
    elif instances is not None and 0 < instances[0] == best.instances:
        edge = f" It reserves the most instances considered: raise {instances[1]}."
    return f"{plan}{rest}: {change} against all-cloud (cheaper in {cheaper} of draws).{edge}"


def precision_text(result: Result, versus: str = "rent") -> str | None:
    """ "Break-even P50 36.2 % ± 0.4 % (95 % interval, 10,000 draws)", against renting, or
    "Break-even vs the API P50 ..." against another side (``versus="api"``, or a further
    side's name); None without that ``convergence``."""
    if versus == "rent":
        c, name = result.convergence, "Break-even"
    else:
        rival = result.rival(versus)
        c = None if rival is None else rival.convergence
        name = f"Break-even vs {side_of(versus).doing}"
    if c is None:
        return None
    be = result.against(versus).breakeven
    p50 = be.p50
    lo, hi = c.breakeven_p50_ci95
    if missing(c.breakeven_p50_halfwidth) or missing(p50):
        text = (
            f"{name} P50 {fmt_utilisation(p50)} (95 % interval "
            f"{fmt_utilisation(lo, none='—')} to {fmt_utilisation(hi)}"
        )
    else:
        text = f"{name} P50 {fmt_margin(p50, c.breakeven_p50_halfwidth)} (95 % interval"
    text += f", {counted(c.samples, 'draw')}"
    if c.samples != c.initial_samples:
        text += f", doubled from {c.initial_samples:,}"
    text += ")"
    if c.met is False:
        text += f"; short of the target ± {c.target_halfwidth * 100:.3g} %"
    elif c.met:
        text += f"; within the target ± {c.target_halfwidth * 100:.3g} %"
    return text + "."


def plan_precision_text(result: PlanResult) -> str | None:
    """ "Best against the runner-up (5 servers, 0 reserved): mean cost lower by $1,950 ± $610
    (95 %, 10,000 draws); cheaper in 71 % of draws.": the plan's ``precision`` in words (the
    margin 1.96 standard errors); None with one candidate, or for a result stored before it."""
    p = result.precision
    if p is None:
        return None
    runner_up = fmt_mix(p.second)
    what = OBJECTIVE_WORDS.get(p.objective, f"{p.objective} cost")
    draws = counted(result.samples, "draw")
    if missing(p.difference_se):
        lower = f"{fmt_usd(p.difference)} (no margin from {draws})"
    else:
        lower = f"{fmt_usd_margin(p.difference, p.halfwidth)} (95 %, {draws})"
    return (
        f"Best against the runner-up ({runner_up}): {what} lower by {lower}; cheaper in "
        f"{fmt_share(p.prob_first_cheaper)} of draws."
    )
