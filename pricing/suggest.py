""" "Did you mean": the closest valid names to a mistyped one, one rule for every message."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

__all__ = ["closest", "closest_hint", "closest_instances", "did_you_mean"]

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


def closest_hint(close: Sequence[str]) -> str:
    """``"; closest: a, b"`` for the names ``close`` (from :func:`closest`), or ``""``."""
    return f"; closest: {', '.join(close)}" if close else ""


def did_you_mean(key: str, valid: Sequence[str], sep: str = "; ") -> str:
    """``"; did you mean 'x'?"`` for the closest valid name, or ``""`` when none is close."""
    close = closest(key, valid, n=1)
    return f"{sep}did you mean {close[0]!r}?" if close else ""


def _words(text: str) -> set[str]:
    return set(re.split(r"[^a-z0-9]+", text.casefold())) - {""}


def closest_instances(key: str, gpu_of: Mapping[str, str], n: int = 3) -> list[str]:
    """The instance ids closest to ``key``, given each id's GPU id (``gpu_of``): the ids ``key``
    begins (``"aws/p5"``, also written ``"AWS p5"``), else those of its provider whose GPU it
    names (``"lambda/h100"``: Lambda's H100 instances, not its A100s), the most alike first,
    else :func:`closest`."""
    key = key.strip().casefold()
    if "/" not in key:  # "AWS p5": a provider and a name written apart
        key = re.sub(r"\s+", "/", key, count=1)
    ids = sorted(gpu_of)
    begun = [i for i in ids if i.startswith(key)]
    if key and begun:
        return begun[:n]
    provider, slash, name = key.partition("/")
    pool = [i for i in ids if slash and i.startswith(f"{provider}/")] or ids
    named = _words(name if slash else key)
    carrying = [i for i in pool if named & _words(gpu_of[i]) - {"pcie", "sxm"}]
    if carrying:
        import difflib  # as in closest: only a mistyped id needs it

        alike = sorted(carrying, key=lambda i: -difflib.SequenceMatcher(None, key, i).ratio())
        return alike[:n]
    return closest(key, ids, n)
