""" "Did you mean": the closest valid names to a mistyped one, one rule for every message."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["closest", "did_you_mean"]

#: Least similarity (difflib's ratio) for a name to be suggested [-].
_CUTOFF = 0.6


def closest(key: str, valid: Sequence[str], n: int = 3) -> list[str]:
    """The valid names closest to ``key``, best first: difflib matches within 0.1 of the best
    score, else names containing ``key`` (so ``"h100"`` suggests every H100)."""
    import difflib  # here: only a mistyped name needs it, and a run imports this module

    matches = difflib.get_close_matches(key, valid, n=n, cutoff=_CUTOFF)
    if matches:
        best = difflib.SequenceMatcher(None, key, matches[0]).ratio()
        return [m for m in matches if difflib.SequenceMatcher(None, key, m).ratio() >= best - 0.1]
    return [v for v in sorted(valid) if key and key in v][:n]


def did_you_mean(key: str, valid: Sequence[str], sep: str = "; ") -> str:
    """``"; did you mean 'x'?"`` for the closest valid name, or ``""`` when none is close."""
    close = closest(key, valid, n=1)
    return f"{sep}did you mean {close[0]!r}?" if close else ""
