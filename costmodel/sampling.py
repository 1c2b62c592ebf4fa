"""Seeds, samplers, correlations and ranks.

One seed entry point (:func:`stream`) returns a ``numpy.random.Generator`` for an input *name*:
the child ``SeedSequence`` is keyed by a hash of the name, not by the input's position, so adding
or removing one uncertain input leaves every other input's draws unchanged (for the ``random`` and
``lhs`` methods; ``sobol`` draws all dimensions from one sequence in name order).

A sampler returns a :class:`Sample`: percentiles strictly inside (0, 1) per input, which the
distributions map through ``ppf``, and, where the sampler knows it without sorting, the rank of
each draw (a Latin hypercube's stratum permutation is its rank). The sensitivity analysis reuses
those ranks instead of ranking the draws again.

``lhs`` and ``sobol`` samples of at least ``REPLICATES * MIN_REPLICATE`` draws are drawn as
:data:`REPLICATES` independent replicates (:func:`replicates`): contiguous blocks of draws, each
a Latin hypercube of its own or a Sobol' sequence with its own scrambling, so that the spread
of an estimate between the blocks measures its precision (the random-group method; the
stratified or balanced draws of one block are not independent of one another, so the formulas
of independent draws would overstate it). :attr:`Sample.blocks` gives their sizes.

Correlations are imposed through a Gaussian copula (:func:`gaussian_copula`) whatever the
sampler: each draw's correlated percentiles come from that draw's own independent ones, so every
draw has exactly the joint distribution asked for and the estimates of a replicate are unbiased
(a re-pairing of a whole sample, as Iman-Conover's, gets the joint distribution right only as the
draws grow: of the order of 1/m off in m draws, which replicates of a few hundred draws show).
"""

from __future__ import annotations

import hashlib
import itertools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "METHODS",
    "MIN_REPLICATE",
    "REPLICATES",
    "Sample",
    "Sampler",
    "SamplingError",
    "average_ranks",
    "gaussian_copula",
    "replicates",
    "sample",
    "stream",
]

METHODS = ("random", "lhs", "sobol")

_EPS = 2.0**-53
#: Independent replicates of an ``lhs`` or ``sobol`` sample with enough draws [-].
REPLICATES = 16
#: The fewest draws of one replicate [draw]: a sample of fewer than REPLICATES times this many
#: draws is one replicate.
MIN_REPLICATE = 32


class SamplingError(ValueError):
    """A sampling request that cannot be met (unknown method, impossible correlations)."""


@dataclass(frozen=True)
class Sample:
    """Percentiles in (0, 1) by input name, shape ``(n,)`` each, and the 0-based rank of each
    draw for the inputs whose ranks the sampler knows (a Latin hypercube of one replicate).
    ``blocks`` [draw]: the sizes of the independent replicates the draws are made of,
    consecutive in draw order, or ``()`` when the draws are one sample (``random``, whose draws
    are independent, or too few draws to split)."""

    q: dict[str, np.ndarray]
    ranks: dict[str, np.ndarray] = field(default_factory=dict)
    blocks: tuple[int, ...] = ()


def replicates(n: int, method: str) -> int:
    """The number of independent replicates a sample of ``n`` draws of ``method`` is drawn in:
    :data:`REPLICATES` for ``lhs`` and ``sobol`` with at least ``REPLICATES * MIN_REPLICATE``
    draws, else 1."""
    if method == "random" or n < REPLICATES * MIN_REPLICATE:
        return 1
    return REPLICATES


def _block_sizes(n: int, count: int) -> list[int]:
    """``count`` sizes adding up to ``n`` that differ by at most one, the larger first."""
    small, extra = divmod(n, count)
    return [small + 1] * extra + [small] * (count - extra)


def _name_key(name: str) -> tuple[int, ...]:
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))


def stream(seed: int, name: str) -> np.random.Generator:
    """The random generator of input ``name`` under ``seed`` (stable across runs and versions)."""
    return np.random.Generator(
        np.random.PCG64(np.random.SeedSequence(seed, spawn_key=_name_key(name)))
    )


def _open_unit(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` uniform draws strictly inside (0, 1): 53-bit integers offset by half a step.

    The integers are the top 53 bits of the stream's next ``n`` 64-bit words, which is what
    ``rng.integers(0, 2**53, n)`` draws (Lemire's bounded method on a power-of-two range
    rejects nothing and keeps the top bits), at about half its cost per call.
    """
    words = rng.bit_generator.random_raw(n)
    words >>= 11
    out = words.astype(np.float64)
    out += 0.5
    out *= _EPS
    return out


def sample(names: Sequence[str], n: int, seed: int, method: str) -> Sample:
    """Percentiles in (0, 1) of shape ``(n,)`` for each input name.

    ``random``: independent uniforms per name. ``lhs``: Latin hypercube, one stratum of width
    1/n per draw and per input, strata paired by an independent random permutation per name
    (the construction of ``scipy.stats.qmc.LatinHypercube``, kept per name so that draws are
    name-keyed); the permutation is each draw's rank. ``sobol``: scrambled Sobol' points
    (``scipy.stats.qmc.Sobol``), one dimension per name in sorted order; balance is best when
    ``n`` is a power of two. With enough draws (:func:`replicates`) ``lhs`` and ``sobol`` draw
    :data:`REPLICATES` independent replicates of n/R draws each, one after the other: a Latin
    hypercube of its own in each (from the same name-keyed stream, replicate after replicate),
    or a Sobol' sequence scrambled by its own stream (the first by the one a single sequence
    uses). The sample of a :class:`Sampler` of ``n`` draws.
    """
    return Sampler(names, n, seed, method).sample


def _sobol_key(block: int) -> str:
    """The name keying the scrambling of replicate ``block`` of a Sobol' sample."""
    return "__sobol__" if block == 0 else f"__sobol__:{block}"


class Sampler:
    """Percentiles that can grow: :meth:`double` adds as many draws again, keeping every draw
    made so far, so that a run can stop as soon as its answer is precise enough.

    ``random`` draws the new percentiles from the same name-keyed streams, so the first 2n are
    the draws of a plain run of 2n; ``sobol`` continues the sequence of each replicate;
    ``lhs`` fills the unused halves of each replicate's strata: each of its m strata of width
    1/m splits in two, the old draw lies in one half, and the m new draws take the other halves
    in a random order, so the union is a Latin hypercube of 2m (one draw in each stratum of
    width 1/(2m)). The replicates keep their number and each its new draws after its old ones,
    so a Sobol' sample doubled from n is the plain one of 2n when n is a multiple of the
    replicates. :attr:`sample` is the current :class:`Sample` of independent percentiles;
    correlations are imposed afterwards (:func:`gaussian_copula`), draw by draw, so the
    draws made so far keep their correlated values.
    """

    def __init__(self, names: Sequence[str], n: int, seed: int, method: str) -> None:
        if method not in METHODS:
            raise SamplingError(f"unknown sampling method {method!r}; valid: {', '.join(METHODS)}")
        if n < 1:
            raise SamplingError(f"samples must be at least 1, got {n}")
        self.method, self.n = method, n
        self.sizes = _block_sizes(n, replicates(n, method))
        # each input's percentiles (and, for lhs, strata) replicate by replicate
        self._q: dict[str, list[np.ndarray]] = {}
        self._strata: dict[str, list[np.ndarray]] = {}
        self._whole: dict[str, np.ndarray] = {}  # each input's replicates in one array, as drawn
        self._streams: dict[str, np.random.Generator] = {}
        self._names = sorted(names) if method == "sobol" else list(names)
        if method == "sobol":
            self._sobol = []
            if self._names:
                from scipy.stats import qmc

                self._sobol = [
                    qmc.Sobol(len(self._names), scramble=True, rng=stream(seed, _sobol_key(b)))
                    for b in range(len(self.sizes))
                ]
                points = [self._sobol_points(b, m) for b, m in enumerate(self.sizes)]
                self._q = {name: [p[:, i] for p in points] for i, name in enumerate(self._names)}
            return
        self._streams = {name: stream(seed, name) for name in self._names}
        for name, rng in self._streams.items():
            if method == "random":
                self._q[name] = [_open_unit(rng, n)]
            else:
                whole, self._q[name], self._strata[name] = _latin(rng, self.sizes)
                self._whole[name] = whole

    def _sobol_points(self, block: int, n: int) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # balance warning for n not a power of 2
            points = self._sobol[block].random(n)
        return np.clip(points, _EPS, 1.0 - _EPS)

    @property
    def sample(self) -> Sample:
        """The percentiles drawn so far, replicate after replicate (and, for ``lhs`` of one
        replicate, each draw's stratum as its rank)."""
        q = {
            name: self._whole[name] if name in self._whole else _joined(parts)
            for name, parts in self._q.items()
        }
        if len(self.sizes) > 1:
            return Sample(q, {}, tuple(self.sizes))
        ranks = {
            name: s[0].astype(np.int32) if self.n < 2**31 else s[0]
            for name, s in self._strata.items()
        }
        return Sample(q, ranks)

    def double(self) -> None:
        """Add as many new draws as there are, in each replicate."""
        self._whole = {}
        if self.method == "sobol":
            for b, m in enumerate(self.sizes if self._names else ()):
                points = self._sobol_points(b, m)
                for i, name in enumerate(self._names):
                    self._q[name][b] = np.concatenate((self._q[name][b], points[:, i]))
        for name, rng in self._streams.items():
            if self.method == "random":
                self._q[name] = [np.concatenate((self._q[name][0], _open_unit(rng, self.n)))]
                continue
            for b, m in enumerate(self.sizes):
                self._q[name][b], self._strata[name][b] = _split_strata(
                    self._q[name][b], self._strata[name][b], m, rng
                )
        self.sizes = [2 * m for m in self.sizes]
        self.n = 2 * self.n


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """``parts`` one after the other (the one part itself)."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _latin(
    rng: np.random.Generator, sizes: list[int]
) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """A Latin hypercube's percentiles and strata in each replicate of ``sizes``, replicate
    after replicate from ``rng``: a random permutation of the m strata, then m uniform
    offsets within them (as :func:`_open_unit` draws them), (stratum + offset) / m, in one
    array, the arithmetic done once for every replicate (the offsets' words are read into
    the array's own memory). Returns that array, the percentiles as consecutive views of it,
    and the strata."""
    ends = np.cumsum([0, *sizes])
    q, strata = np.empty(int(ends[-1])), []
    words = q.view(np.uint64)
    for (a, b), m in zip(itertools.pairwise(ends), sizes, strict=True):
        strata.append(rng.permutation(m))  # the stream's order: permutation, then offsets
        words[a:b] = rng.bit_generator.random_raw(m)
    words >>= 11
    np.add(words, 0.5, out=q)  # each word read before its place is written
    q *= _EPS
    q += np.concatenate(strata)
    q /= sizes[0] if len(set(sizes)) == 1 else np.repeat(np.asarray(sizes, dtype=float), sizes)
    return q, [q[a:b] for a, b in itertools.pairwise(ends)], strata


def _split_strata(
    q: np.ndarray, old: np.ndarray, m: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A Latin hypercube of ``m`` percentiles ``q`` in strata ``old`` of width 1/m doubled to
    one of 2m: each stratum split in two, the m new draws in the halves the old ones left
    free, in a random order. Returns the 2m percentiles and their strata of width 1/(2m)."""
    # the half of its stratum each old draw lies in; clipped so that rounding never moves a
    # draw out of the stratum it was drawn in
    half = np.clip(np.floor(q * (2 * m)).astype(np.int64), 2 * old, 2 * old + 1)
    free = (half ^ 1)[rng.permutation(m)]  # the other halves, in a random order
    fresh = (free + _open_unit(rng, m)) / (2 * m)
    return np.concatenate((q, fresh)), np.concatenate((half, free))


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


def gaussian_copula(drawn: Sample, pairs: Sequence[tuple[str, str, float]]) -> Sample:
    """Correlated percentiles, draw by draw, from independent ones through a Gaussian copula.

    Each correlated input's independent uniform percentiles (its name-keyed stream) become
    standard normals z = Phi^-1(q); the vector of a draw is multiplied by the lower Cholesky
    factor L of the target correlation (Pearson 2*sin(pi*rho/6) per pair, so that the
    Spearman correlation of the result is rho) and mapped back through the normal CDF:
    q' = Phi(L z), clipped to [2^-53, 1 - 2^-53]. Each draw depends only on its own
    percentiles, so each has exactly the correlated joint distribution (independent draws of
    it for ``random``; for ``lhs`` and ``sobol`` the replicates stay independent, and an
    input correlated with none before it in name order keeps its strata or balance), every
    marginal stays uniform, and the draws made so far keep their values as a sample grows
    (:class:`Sampler`). Inputs not named
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
    return Sample(q, ranks, drawn.blocks)


#: The fewest values :func:`ascending` sorts as packed keys (below, ``argsort`` is as fast).
_PACKED_FROM = 1 << 12


def ascending(values: np.ndarray) -> np.ndarray:
    """An ascending sort order of the floats ``values`` (n,), tied values in any order: as
    ``np.argsort`` finds one, in about half its time for many values.

    Each value's bits, mapped to an unsigned integer that sorts as the float does, keep their
    high bits and carry the value's index in the low ceil(log2 n) bits; one sort of these
    integers (a vectorised sort, where argsort is not) orders the values by their high bits,
    and the few runs of values that share them are ordered again by their whole bits. Values
    with a NaN are ordered by ``argsort``."""
    return _ascending(values)[0]


def _ascending(values: np.ndarray) -> tuple[np.ndarray, bool]:
    """:func:`ascending`'s order of ``values`` and whether it found no two of them equal
    (``False`` also where it did not look): values that differ in their high bits differ, so
    only those in a run that shares them can tie, and +0.0 with -0.0 (equal, of different
    bits)."""
    n = values.size
    shift = max(1, (n - 1).bit_length())
    if values.dtype != np.float64 or values.ndim != 1 or n < _PACKED_FROM or shift > 32:
        return np.argsort(values), False
    if np.isnan(values).any():
        return np.argsort(values), False
    key, order = _sortable(values), np.arange(n, dtype=np.intp)
    key >>= np.uint64(shift)
    key <<= np.uint64(shift)
    key |= order.view(np.uint64)
    key.sort()
    np.bitwise_and(key, np.uint64((1 << shift) - 1), out=order.view(np.uint64))
    key >>= np.uint64(shift)
    shared = np.flatnonzero(key[1:] == key[:-1])  # runs of equal high bits: by whole bits
    distinct = np.count_nonzero(values == 0.0) < 2
    if shared.size:
        at = np.union1d(shared, shared + 1)  # positions in a run, ascending
        run = np.cumsum(np.diff(at, prepend=-2) != 1)  # consecutive positions: one run
        order[at] = order[at][np.lexsort((_sortable(values[order[at]]), run))]
        ordered = values[order[at]]
        distinct = distinct and not np.any((ordered[1:] == ordered[:-1]) & (run[1:] == run[:-1]))
    return order, bool(distinct)


def _sortable(values: np.ndarray) -> np.ndarray:
    """Unsigned integers that sort as the floats ``values`` do (no NaN): a non-negative
    float's bits with the sign bit set, a negative one's bits all flipped."""
    bits = values.view(np.int64)
    mask = bits >> 63  # all ones for a negative float, else none
    mask |= np.int64(-(2**63))
    mask ^= bits
    return mask.view(np.uint64)


#: Ranks written at once by :func:`average_ranks` [draw].
_RANK_BLOCK = 1 << 16


def average_ranks(values: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """1-based ranks of ``values``, tied values sharing their average rank (as
    ``scipy.stats.rankdata``); ``order`` is an ascending sort order of ``values`` when known.

    Kept instead of ``rankdata`` because it is faster and can start from a known order
    (measured on 1M draws: 46 ms without ties and 38 ms with many, against rankdata's 149 and
    82 ms; 17-20 ms from a known order); tests/test_closed_forms.py checks it equals rankdata.
    """
    values = np.asarray(values)
    distinct = False  # no two values equal: each value's rank is its place in the order
    if order is None:  # any order of tied values gives the same average ranks
        order, distinct = _ascending(values)
    n = values.size
    if not distinct:
        ordered = values[order]
        new = np.empty(n, dtype=bool)
        new[:1] = True
        np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
        del ordered  # before the ranks are made: a run of a million draws holds every 8 MB
        distinct = bool(new.all())
    ranks = np.empty(n)
    if distinct:  # 1..n in blocks, without an array of n of them beside the ranks
        for start in range(0, n, _RANK_BLOCK):
            stop = min(n, start + _RANK_BLOCK)
            ranks[order[start:stop]] = np.arange(start + 1, stop + 1)
        return ranks
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], n)
    ranks[order] = ((starts + ends + 1) / 2.0)[np.cumsum(new) - 1]
    return ranks
