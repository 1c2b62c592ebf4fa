"""A one-sentence answer from the summarised result."""

from __future__ import annotations

__all__ = ["verdict"]


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def verdict(summary: dict) -> str:
    """Break-even P50 with its P10-P90 range, then the picture at the report utilisation."""
    be = summary["breakeven_utilisation"]
    if be["p50"] is None:
        head = (
            f"Renting is cheaper at every utilisation in most draws: buying never breaks "
            f"even in {_pct(be['prob_never'])} of draws"
        )
    elif be["p50"] == 0.0:
        head = f"Buying is cheaper even when idle in {_pct(be['prob_always'])} of draws"
    else:
        p10 = _pct(be["p10"]) if be["p10"] is not None else "never"
        p90 = _pct(be["p90"]) if be["p90"] is not None else "never"
        head = f"Buying breaks even at {_pct(be['p50'])} utilisation (P10-P90: {p10} to {p90})"
    grid = summary["utilisation"]
    u = summary["cumulative_cost"]["utilisation"]
    if u not in grid:
        return head + "."
    j = grid.index(u)
    prob = summary["prob_buy_cheaper"][j]
    payback = summary["payback_months"]["p50"][j]
    tail = f"; at {_pct(u)} utilisation buying is cheaper in {_pct(prob)} of draws"
    if payback is not None:
        tail += f" and pays back in {payback:.1f} months (P50)"
    return head + tail + "."
