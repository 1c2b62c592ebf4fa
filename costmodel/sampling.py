"""Seeds, samplers, correlations and ranks.

One seed entry point (:func:`stream`) returns a ``numpy.random.Generator`` for an input *name*:
the child ``SeedSequence`` is keyed by a hash of the name, not by the input's position, so adding
or removing one uncertain input leaves every other input's draws unchanged (for the ``random`` and
``lhs`` methods; ``sobol`` draws all dimensions from one sequence in name order).

A sampler returns a :class:`Sample`: percentiles strictly inside (0, 1) per input, which the
distributions map through ``ppf``, and, where the sampler knows it without sorting, the rank of
each draw (a Latin hypercube's stratum permutation is its rank). The sensitivity analysis reuses
those ranks instead of ranking the draws again.

Correlations (:func:`correlate`) are imposed in one of two ways. ``random`` draws go through a
Gaussian copula (:func:`gaussian_copula`): each draw's correlated percentiles come from that
draw's own independent ones, so the draws stay independent draws of the correlated inputs and
the precision figures made for independent draws hold. ``lhs`` and ``sobol`` are re-paired by
Iman-Conover (:func:`induce_rank_correlation`), which keeps each input's stratified or balanced
values and only reorders them.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "METHODS",
    "Sample",
    "Sampler",
    "SamplingError",
    "average_ranks",
    "correlate",
    "gaussian_copula",
    "induce_rank_correlation",
    "sample",
    "stream",
]

METHODS = ("random", "lhs", "sobol")

_EPS = 2.0**-53


class SamplingError(ValueError):
    """A sampling request that cannot be met (unknown method, impossible correlations)."""


@dataclass(frozen=True)
class Sample:
    """Percentiles in (0, 1) by input name, shape ``(n,)`` each, and the 0-based rank of each
    draw for the inputs whose ranks the sampler knows (Latin hypercube, inputs re-paired by
    Iman-Conover)."""

    q: dict[str, np.ndarray]
    ranks: dict[str, np.ndarray] = field(default_factory=dict)


def _name_key(name: str) -> tuple[int, ...]:
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))


def stream(seed: int, name: str) -> np.random.Generator:
    """The random generator of input ``name`` under ``seed`` (stable across runs and versions)."""
    return np.random.Generator(
        np.random.PCG64(np.random.SeedSequence(seed, spawn_key=_name_key(name)))
    )


def _open_unit(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` uniform draws strictly inside (0, 1): 53-bit integers offset by half a step."""
    return (rng.integers(0, 2**53, size=n, dtype=np.int64) + 0.5) * _EPS


def sample(names: Sequence[str], n: int, seed: int, method: str) -> Sample:
    """Percentiles in (0, 1) of shape ``(n,)`` for each input name.

    ``random``: independent uniforms per name. ``lhs``: Latin hypercube, one stratum of width
    1/n per draw and per input, strata paired by an independent random permutation per name
    (the construction of ``scipy.stats.qmc.LatinHypercube``, kept per name so that draws are
    name-keyed); the permutation is each draw's rank. ``sobol``: scrambled Sobol' points
    (``scipy.stats.qmc.Sobol``), one dimension per name in sorted order; balance is best when
    ``n`` is a power of two.
    """
    if method not in METHODS:
        raise SamplingError(f"unknown sampling method {method!r}; valid: {', '.join(METHODS)}")
    if n < 1:
        raise SamplingError(f"samples must be at least 1, got {n}")
    if method == "random":
        return Sample({name: _open_unit(stream(seed, name), n) for name in names})
    if method == "lhs":
        q, ranks = {}, {}
        for name in names:
            rng = stream(seed, name)
            perm = rng.permutation(n)
            q[name] = (perm + _open_unit(rng, n)) / n
            ranks[name] = perm.astype(np.int32) if n < 2**31 else perm
        return Sample(q, ranks)
    ordered = sorted(names)
    if not ordered:
        return Sample({})
    from scipy.stats import qmc

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # balance warning for n not a power of 2
        points = qmc.Sobol(len(ordered), scramble=True, rng=stream(seed, "__sobol__")).random(n)
    points = np.clip(points, _EPS, 1.0 - _EPS)
    return Sample({name: points[:, i] for i, name in enumerate(ordered)})


class Sampler:
    """Percentiles that can grow: :meth:`double` adds as many draws again, keeping every draw
    made so far, so that a run can stop as soon as its answer is precise enough.

    ``random`` draws the new percentiles from the same name-keyed streams, so the first 2n are
    the draws of a plain run of 2n; ``sobol`` continues its sequence (the same property);
    ``lhs`` fills the unused halves of its strata: each of the n strata of width 1/n splits in
    two, the old draw lies in one half, and the n new draws take the other halves in a random
    order, so the union is a Latin hypercube of 2n (one draw in each stratum of width 1/(2n)).
    :attr:`sample` is the current :class:`Sample` of independent percentiles; correlations are
    imposed afterwards (:func:`correlate`): draw by draw for ``random``, so the first n
    correlated draws stay as they were, and on the whole sample for ``lhs`` and ``sobol``.
    """

    def __init__(self, names: Sequence[str], n: int, seed: int, method: str) -> None:
        if method not in METHODS:
            raise SamplingError(f"unknown sampling method {method!r}; valid: {', '.join(METHODS)}")
        if n < 1:
            raise SamplingError(f"samples must be at least 1, got {n}")
        self.method, self.n = method, n
        self._q: dict[str, np.ndarray] = {}
        self._strata: dict[str, np.ndarray] = {}
        self._streams: dict[str, np.random.Generator] = {}
        if method == "sobol":
            self._names = sorted(names)
            self._sobol = None
            if self._names:
                from scipy.stats import qmc

                self._sobol = qmc.Sobol(
                    len(self._names), scramble=True, rng=stream(seed, "__sobol__")
                )
                self._q = dict(zip(self._names, self._sobol_points(n).T, strict=True))
            return
        self._names = list(names)
        self._streams = {name: stream(seed, name) for name in self._names}
        for name, rng in self._streams.items():
            if method == "random":
                self._q[name] = _open_unit(rng, n)
            else:
                perm = rng.permutation(n)
                self._q[name] = (perm + _open_unit(rng, n)) / n
                self._strata[name] = perm

    def _sobol_points(self, n: int) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # balance warning for n not a power of 2
            points = self._sobol.random(n)
        return np.clip(points, _EPS, 1.0 - _EPS)

    @property
    def sample(self) -> Sample:
        """The percentiles drawn so far (and, for ``lhs``, each draw's stratum as its rank)."""
        ranks = {
            name: s.astype(np.int32) if self.n < 2**31 else s for name, s in self._strata.items()
        }
        return Sample(dict(self._q), ranks)

    def double(self) -> None:
        """Add n new draws to the n there are."""
        n = self.n
        if self.method == "sobol" and self._names:
            points = self._sobol_points(n)
            for i, name in enumerate(self._names):
                self._q[name] = np.concatenate((self._q[name], points[:, i]))
        for name, rng in self._streams.items():
            if self.method == "random":
                self._q[name] = np.concatenate((self._q[name], _open_unit(rng, n)))
                continue
            q, old = self._q[name], self._strata[name]
            # the half of its stratum each old draw lies in; clipped so that rounding never
            # moves a draw out of the stratum it was drawn in
            half = np.clip(np.floor(q * (2 * n)).astype(np.int64), 2 * old, 2 * old + 1)
            free = (half ^ 1)[rng.permutation(n)]  # the other halves, in a random order
            fresh = (free + _open_unit(rng, n)) / (2 * n)
            self._q[name] = np.concatenate((q, fresh))
            self._strata[name] = np.concatenate((half, free))
        self.n = 2 * n


def _correlation_factor(pairs: Sequence[tuple[str, str, float]]) -> tuple[list[str], np.ndarray]:
    """The names of the correlated inputs, sorted, and the lower Cholesky factor of their
    normal-score correlation matrix: Pearson 2*sin(pi*rho/6) for each pair's Spearman rho, the
    Pearson correlation of two standard normals whose Spearman correlation is rho (for normals
    Spearman = (6/pi)*asin(r/2)). Raises :class:`SamplingError` for a target matrix that is not
    positive definite."""
    names = sorted({p[0] for p in pairs} | {p[1] for p in pairs})
    index = {name: i for i, name in enumerate(names)}
    target = np.eye(len(names))
    for a, b, rho in pairs:
        pearson = 2.0 * np.sin(np.pi * rho / 6.0)
        target[index[a], index[b]] = target[index[b], index[a]] = pearson
    try:
        return names, np.linalg.cholesky(target)
    except np.linalg.LinAlgError:
        raise SamplingError(
            "the correlations are inconsistent (the correlation matrix is not positive definite)"
        ) from None


def correlate(
    drawn: Sample, pairs: Sequence[tuple[str, str, float]], seed: int, method: str
) -> Sample:
    """``drawn`` (independent percentiles of ``method``) with the Spearman rank correlations
    ``pairs``: a Gaussian copula for ``random`` (:func:`gaussian_copula`), Iman-Conover for
    ``lhs`` and ``sobol`` (:func:`induce_rank_correlation`, seeded by ``seed``)."""
    if method == "random":
        return gaussian_copula(drawn, pairs)
    return induce_rank_correlation(drawn, pairs, seed)


def gaussian_copula(drawn: Sample, pairs: Sequence[tuple[str, str, float]]) -> Sample:
    """Correlated percentiles, draw by draw, from independent ones through a Gaussian copula.

    Each correlated input's independent uniform percentiles (its name-keyed stream) become
    standard normals z = Phi^-1(q); the vector of a draw is multiplied by the lower Cholesky
    factor L of the target correlation (Pearson 2*sin(pi*rho/6) per pair, so that the
    Spearman correlation of the result is rho) and mapped back through the normal CDF:
    q' = Phi(L z), clipped to [2^-53, 1 - 2^-53]. Each draw depends only on its own
    percentiles, so the draws stay independent and identically distributed, every marginal
    stays uniform, and the first n draws of a larger sample are those of n. Inputs not named
    in ``pairs`` are returned as they were; the ranks of the correlated ones are left unknown.
    Raises :class:`SamplingError` for a target matrix that is not positive definite.
    """
    if not pairs:
        return drawn
    from scipy.special import ndtr, ndtri

    names, lower = _correlation_factor(pairs)
    z = [ndtri(np.clip(drawn.q[name], _EPS, 1.0 - _EPS)) for name in names]
    q, ranks = dict(drawn.q), dict(drawn.ranks)
    for i, name in enumerate(names):  # row i of L z, one input at a time (no BLAS threads)
        mixed = lower[i, 0] * z[0]
        for j in range(1, i + 1):
            mixed += lower[i, j] * z[j]
        q[name] = np.clip(ndtr(mixed), _EPS, 1.0 - _EPS)
        ranks.pop(name, None)
    return Sample(q, ranks)


def induce_rank_correlation(
    drawn: Sample, pairs: Sequence[tuple[str, str, float]], seed: int
) -> Sample:
    """Reorder draws so that named pairs get the target Spearman rank correlations.

    Iman & Conover (1982): van der Waerden scores, randomly permuted per column, are
    decorrelated with the Cholesky factor of their own correlation and recorrelated with
    the target's (:func:`_correlation_factor`); each input's draws are then rearranged to the
    ranks of its score column. Marginals are untouched (values are only permuted), which keeps
    a Latin hypercube's strata and a Sobol sequence's balance; but the reordering ties the
    draws to one another (the mean of each input over the sample is that of its own stream,
    whatever the correlation), so the sample is no longer one of independent draws. Inputs not
    named in ``pairs`` are returned as they were. Raises :class:`SamplingError` for a target
    matrix that is not positive definite.
    """
    if not pairs:
        return drawn
    from scipy.special import ndtri

    names, p_target = _correlation_factor(pairs)
    index = {name: i for i, name in enumerate(names)}
    n = len(next(iter(drawn.q.values())))
    base = ndtri(np.arange(1, n + 1) / (n + 1))
    rng = stream(seed, "__iman_conover__")
    scores = np.column_stack([rng.permutation(base) for _ in names])
    current = np.corrcoef(scores, rowvar=False) if n > 2 else np.eye(len(names))
    try:
        q_current = np.linalg.cholesky(np.atleast_2d(current))
    except np.linalg.LinAlgError:
        raise SamplingError("too few samples to induce rank correlations") from None
    adjusted = scores @ np.linalg.inv(q_current).T @ p_target.T
    q, ranks = dict(drawn.q), dict(drawn.ranks)
    for name in names:
        order = np.argsort(adjusted[:, index[name]], kind="stable")
        rank = np.empty(n, dtype=order.dtype)
        rank[order] = np.arange(n)  # the inverse permutation: each draw's rank
        ranks[name] = rank
        q[name] = np.sort(drawn.q[name])[rank]
    return Sample(q, ranks)


def average_ranks(values: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """1-based ranks of ``values``, tied values sharing their average rank (as
    ``scipy.stats.rankdata``); ``order`` is an ascending sort order of ``values`` when known.

    Kept instead of ``rankdata`` because it is faster and can start from a known order
    (measured on 1M draws: 46 ms without ties and 38 ms with many, against rankdata's 149 and
    82 ms; 17-20 ms from a known order); tests/test_closed_forms.py checks it equals rankdata.
    """
    values = np.asarray(values)
    if order is None:
        order = np.argsort(values)  # any order of tied values gives the same average ranks
    ordered = values[order]
    n = ordered.size
    new = np.empty(n, dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    ranks = np.empty(n)
    if new.all():
        ranks[order] = np.arange(1, n + 1)
        return ranks
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], n)
    ranks[order] = ((starts + ends + 1) / 2.0)[np.cumsum(new) - 1]
    return ranks
