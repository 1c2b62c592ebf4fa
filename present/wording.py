"""The sentences a scenario's result is read by beside its verdict, written once here for the
command line, the reports and the web page (which gets them in the JSON the server answers,
as ``wording``): how often buying is cheaper whatever the utilisation, or never; each side's
cost per unit of work at the report utilisation; the note on payback without resale; what
knowing the inputs before deciding would save, and the inputs worth naming for it.

Shares of draws and utilisations as percentages, money in [USD] at present value, unit costs
as :func:`~.formatting.fmt_per_unit` writes them [USD per reference GPU-hour or per M tokens].
Every sentence is written from the result's figures alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from costmodel.result import Breakeven, Result
from costmodel.sides import side as side_of

from .formatting import fmt_per_unit, fmt_share, fmt_utilisation, missing
from .reports.uncertainty import rival_voi_sentence, voi_sentence, worth_naming

if TYPE_CHECKING:
    from .answer import Answer

__all__ = ["PAYBACK_NOTE", "Wording", "words_of", "wording"]

#: Why buying can be cheaper over the horizon and still not pay back within it.
PAYBACK_NOTE = (
    "Payback counts no resale: buying can cost less over the horizon (its TCO credits resale) "
    'and still not pay back in cash within it (payback "never").'
)


@dataclass(frozen=True)
class Wording:
    """The sentences of a scenario's result ("": the sentence does not apply).

    Attributes:
        shares: for each side buying is weighed against (renting, then the API, then any
            further side), the shares of draws in which buying is cheaper even idle and dearer
            even at 100 % utilisation.
        cost: each side's P50 cost per unit of work at the report utilisation ("" when that
            level was not run).
        payback_note: :data:`PAYBACK_NOTE` when buying is cheaper in most draws at a level
            where it does not pay back within the horizon (P50), else "".
        value_of_information: what knowing the inputs before deciding would save, against
            renting and then each other side in the result's ``rivals`` (none in a result
            stored before it).
        worth_naming: the inputs whose value of information against any side is worth naming,
            largest first.
    """

    shares: tuple[str, ...]
    cost: str
    payback_note: str
    value_of_information: tuple[str, ...]
    worth_naming: tuple[str, ...]


def _shares(be: Breakeven, rival: str) -> str:
    """ "Buying is cheaper than renting even when idle in 3 % of draws, and dearer even at
    100 % utilisation in 12 %." """
    return (
        f"Buying is cheaper than {rival} even when idle in {fmt_share(be.prob_always)} of "
        f"draws, and dearer even at 100 % utilisation in {fmt_share(be.prob_never)}."
    )


def _cost(result: Result) -> str:
    """ "Cost at 50 % utilisation (P50): buy $0.21/reference GPU-hour, rent $3.06/..." """
    j = result.level(result.cumulative_cost.utilisation)
    if j is None:
        return ""
    cost = ", ".join(
        f"{side_of(side).option} {fmt_per_unit(bands.p50[j], result.unit)}"
        for side, bands in result.cost_per_unit.items()
    )
    u = fmt_utilisation(result.cumulative_cost.utilisation)
    return f"Cost at {u} utilisation (P50): {cost}"


def _payback_note(result: Result) -> str:
    pay = result.payback_months
    cheaper_without_payback = any(
        missing(float(pay.p50[j])) and result.prob_buy_cheaper[j] >= 0.5
        for j in range(len(result.utilisation))
    )
    return PAYBACK_NOTE if cheaper_without_payback else ""


def _worth_naming(result: Result) -> tuple[str, ...]:
    """The inputs worth naming against renting or any other side, by their largest EVPPI
    [USD]."""
    rivals = [result.value_of_information, *(r.value_of_information for r in result.rivals)]
    largest: dict[str, float] = {}
    for voi in filter(None, rivals):
        for v in worth_naming(voi):
            if v.evppi > 0:
                largest[v.input] = max(largest.get(v.input, 0.0), v.evppi)
    return tuple(sorted(largest, key=lambda name: -largest[name]))  # ties: renting's order


def wording(result: Result) -> Wording:
    """The :class:`Wording` of a scenario's ``result``."""
    shares = [_shares(result.against(s).breakeven, side_of(s).doing) for s in result.sides[1:]]
    voi = (voi_sentence(result), *(rival_voi_sentence(result, r.versus) for r in result.rivals))
    return Wording(
        shares=tuple(shares),
        cost=_cost(result),
        payback_note=_payback_note(result),
        value_of_information=tuple(filter(None, voi)),
        worth_naming=_worth_naming(result),
    )


def words_of(answer: Answer) -> Wording:
    """The answer's wording as it was written, or for a result stored before it, written now."""
    return answer.wording if answer.wording is not None else wording(answer.result)
