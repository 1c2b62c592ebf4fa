"""Relative training throughput of one GPU against another.

Measured figures in the catalog are relative to the V100 SXM2 16 GB baseline at one precision.
The throughput of ``gpu`` in units of ``reference`` at ``precision`` is, in order:

1. a GPU against itself: exactly 1;
2. ``measured``: both GPUs are measured at the precision: the ratio of the measured figures;
3. ``scaled``: each GPU is measured at the nearest precision (int8 -> fp16 -> fp32, fp32 ->
   fp16), scaled by the ratio of that GPU's *own* peaks at the two precisions (its int8 and
   fp16 tensor peaks, say); a GPU without a peak at a precision runs that work at the rate of
   the next lower one (no INT8 tensor cores: INT8 at its FP16 rate);
4. ``peaks``: where one of the two has nothing measured, the ratio of like-for-like peaks of
   the two GPUs: tensor peak against tensor peak when both have tensor cores at the precision,
   otherwise FP32 against FP32. A tensor peak of one GPU is never set against a non-tensor peak
   of the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ThroughputUnavailableError, UnknownIdError
from .models import GPU
from .vocabulary import PRECISIONS

__all__ = ["Throughput", "relative_throughput"]

#: Peak column of each precision's tensor cores; fp32 is the plain FP32 peak.
_PEAK = {"fp32": "fp32_tflops", "fp16": "fp16_tflops", "int8": "int8_tops"}
#: Measured precisions to scale from, nearest first.
_NEAREST = {"int8": ("fp16", "fp32"), "fp16": ("fp32",), "fp32": ("fp16",)}
#: The precision whose rate a GPU without a peak at this one falls back to.
_LOWER = {"int8": "fp16", "fp16": "fp32"}


@dataclass(frozen=True)
class Throughput:
    """Per-GPU throughput [reference GPU-hours per GPU-hour] and how it was obtained.

    ``basis`` is ``"identity"``, ``"measured"``, ``"scaled"`` or ``"peaks"`` (module docstring);
    ``how`` says it in words, for the result's assumptions.
    """

    value: float
    basis: str
    how: str


def _check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise UnknownIdError("precision", str(precision), [], PRECISIONS)


def _own_rate(gpu: GPU, precision: str) -> float | None:
    """The peak at which ``gpu`` runs ``precision`` work [TFLOPS or TOPS], or None."""
    value = getattr(gpu, _PEAK[precision])
    if value is not None:
        return float(value)
    lower = _LOWER.get(precision)
    return _own_rate(gpu, lower) if lower else None


def _from_measurements(gpu: GPU, precision: str) -> tuple[float, str] | None:
    """Throughput relative to the V100 baseline from the GPU's own measurements, or None."""
    if precision in gpu.measured:
        return gpu.measured[precision], f"measured {precision}"
    for nearest in _NEAREST[precision]:
        if nearest not in gpu.measured:
            continue
        target, source = _own_rate(gpu, precision), _own_rate(gpu, nearest)
        if target and source:
            ratio = target / source
            how = f"measured {nearest} x its own {precision}/{nearest} peak ratio {ratio:.3g}"
            return gpu.measured[nearest] * ratio, how
    return None


def _like_for_like(gpu: GPU, reference: GPU, precision: str) -> tuple[float, str]:
    for column in dict.fromkeys((_PEAK[precision], "fp32_tflops")):
        mine, theirs = getattr(gpu, column), getattr(reference, column)
        if mine is not None and theirs is not None:
            return mine / theirs, f"peak {column} {mine:g} / {theirs:g}"
    missing = gpu if gpu.fp32_tflops is None else reference
    raise ThroughputUnavailableError(
        f"GPU {missing.id!r} has no {precision} throughput figure to compare with "
        f"{(reference if missing is gpu else gpu).id!r} (no measurement, no like-for-like "
        "peak)"
    )


def relative_throughput(gpu: GPU, reference: GPU, precision: str) -> Throughput:
    """Per-GPU training throughput of ``gpu`` in units of ``reference`` at ``precision``.

    Args:
        gpu: the GPU being priced.
        reference: the unit of normalised work (usually ``v100-sxm2-16gb``).
        precision: ``"fp32" | "fp16" | "int8"``.

    Returns:
        A :class:`Throughput` by the rules of the module docstring.

    Raises:
        ThroughputUnavailableError: no measurement and no like-for-like peak (names the GPU).
        UnknownIdError: unknown precision.
    """
    _check_precision(precision)
    if gpu.id == reference.id:
        return Throughput(1.0, "identity", f"the reference GPU itself ({reference.id})")
    mine = _from_measurements(gpu, precision)
    theirs = _from_measurements(reference, precision)
    if mine is not None and theirs is not None:
        both_direct = precision in gpu.measured and precision in reference.measured
        how = mine[1] if theirs[1] == f"measured {precision}" else f"{mine[1]} / {theirs[1]}"
        return Throughput(mine[0] / theirs[0], "measured" if both_direct else "scaled", how)
    value, how = _like_for_like(gpu, reference, precision)
    return Throughput(value, "peaks", how)
