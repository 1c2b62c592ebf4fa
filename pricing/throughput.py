"""Relative training throughput of one GPU against another.

Figures in the catalog are relative to the V100 SXM2 16 GB baseline at one precision; most are
measured, the rest are estimates the catalog marks (``estimated_fields``) and explains (a
measured GPU of the same kind scaled by like-for-like peaks, data/NOTES.md).

Each GPU runs a precision's work at one peak (:func:`work_peak`): its tensor-core peak at that
precision (TF32 for fp32 work on tensor cores that have it, NVIDIA Ampere and later and AMD
CDNA 3), else the FP32 peak of its CUDA cores for fp32, else the next lower precision's (no
INT8 tensor cores: INT8 at the FP16 rate). A peak is of kind ``tensor`` or ``vector`` (CUDA
cores); real training reaches a different share of the two, so peaks of different kinds are
never set against each other. The throughput of ``gpu`` in units of ``reference`` at
``precision`` is, in order:

1. a GPU against itself: exactly 1;
2. ``measured``: both GPUs have a figure at the precision: the ratio of the figures
   (``estimated`` when either figure is an estimate);
3. ``scaled``: both have a figure at the nearest precision (int8 -> fp16 -> fp32, fp32 ->
   fp16): that ratio, times the ratio of each GPU's *own* peaks at the two precisions, where
   each GPU runs both on the same kind of unit (``estimated`` when a figure is an estimate);
4. ``peaks``: where one of the two has no figure, the ratio of their work peaks when they are
   of the same kind. Otherwise there is no like-for-like figure and the lookup fails.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ThroughputUnavailableError, UnknownIdError
from .models import GPU
from .vocabulary import PRECISIONS

__all__ = ["Peak", "Throughput", "relative_throughput", "work_peak"]

#: Tensor-core peak column of each precision's work.
_TENSOR = {"fp32": "tf32_tflops", "fp16": "fp16_tflops", "int8": "int8_tops"}
#: Precisions to scale from, nearest first.
_NEAREST = {"int8": ("fp16", "fp32"), "fp16": ("fp32",), "fp32": ("fp16",)}
#: The precision whose rate a GPU without tensor cores at this one falls back to.
_LOWER = {"int8": "fp16", "fp16": "fp32"}


@dataclass(frozen=True)
class Peak:
    """The peak a GPU runs one precision's work at [TFLOPS or TOPS], from catalog ``column``."""

    value: float
    column: str

    @property
    def kind(self) -> str:
        """``"vector"`` for the FP32 peak of the CUDA cores, ``"tensor"`` for tensor cores."""
        return "vector" if self.column == "fp32_tflops" else "tensor"


@dataclass(frozen=True)
class Throughput:
    """Per-GPU throughput [reference GPU-hours per GPU-hour] and how it was obtained.

    ``basis`` is ``"identity"``, ``"measured"``, ``"scaled"``, ``"estimated"`` or ``"peaks"``
    (module docstring); ``how`` says it in words, for the result's assumptions.
    """

    value: float
    basis: str
    how: str


def _check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise UnknownIdError("precision", str(precision), [], PRECISIONS)


def work_peak(gpu: GPU, precision: str) -> Peak | None:
    """The peak at which ``gpu`` runs ``precision`` work, or None without one (module
    docstring)."""
    value = getattr(gpu, _TENSOR[precision])
    if value is not None:
        return Peak(float(value), _TENSOR[precision])
    if precision == "fp32":
        return None if gpu.fp32_tflops is None else Peak(float(gpu.fp32_tflops), "fp32_tflops")
    return work_peak(gpu, _LOWER[precision])


def _estimated(gpu: GPU, precision: str) -> bool:
    return f"measured_{precision}" in gpu.estimated_fields


def _own_ratio(gpu: GPU, precision: str, nearest: str) -> float | None:
    """``gpu``'s peak at ``precision`` over its peak at ``nearest`` when both are of one kind."""
    target, source = work_peak(gpu, precision), work_peak(gpu, nearest)
    if target is None or source is None or target.kind != source.kind:
        return None
    return target.value / source.value


def _figures(gpu: GPU, reference: GPU, precision: str) -> Throughput | None:
    """The ratio of the two GPUs' catalog figures at ``precision``, direct or scaled."""
    if precision in gpu.measured and precision in reference.measured:
        value = gpu.measured[precision] / reference.measured[precision]
        if _estimated(gpu, precision) or _estimated(reference, precision):
            which = " and ".join(g.id for g in (gpu, reference) if _estimated(g, precision))
            how = f"estimated {precision} figure of {which}: see its catalog note"
            return Throughput(value, "estimated", how)
        return Throughput(value, "measured", f"measured {precision}")
    for nearest in _NEAREST[precision]:
        if nearest not in gpu.measured or nearest not in reference.measured:
            continue
        mine = _own_ratio(gpu, precision, nearest)
        theirs = _own_ratio(reference, precision, nearest)
        if mine is None or theirs is None:
            continue
        value = gpu.measured[nearest] / reference.measured[nearest] * mine / theirs
        how = (
            f"{nearest} figures x their own {precision}/{nearest} peak ratios "
            f"{mine:.3g} / {theirs:.3g}"
        )
        if _estimated(gpu, nearest) or _estimated(reference, nearest):
            return Throughput(value, "estimated", f"estimated {how}")
        return Throughput(value, "scaled", how)
    return None


def _like_for_like(gpu: GPU, reference: GPU, precision: str) -> Throughput:
    mine, theirs = work_peak(gpu, precision), work_peak(reference, precision)
    if mine is None or theirs is None:
        missing = gpu if mine is None else reference
        other = reference if missing is gpu else gpu
        raise ThroughputUnavailableError(
            f"GPU {missing.id!r} has no {precision} throughput figure to compare with "
            f"{other.id!r} (no measurement, no like-for-like peak)"
        )
    if mine.kind != theirs.kind:
        raise ThroughputUnavailableError(
            f"no like-for-like {precision} figure for {gpu.id!r} against {reference.id!r}: "
            f"one runs {precision} work on {mine.kind} units ({mine.column}), the other on "
            f"{theirs.kind} units ({theirs.column}), whose peaks real training reaches to "
            "different degrees"
        )
    return Throughput(
        mine.value / theirs.value,
        "peaks",
        f"peak {mine.column} {mine.value:g} / {theirs.column} {theirs.value:g}",
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
        ThroughputUnavailableError: no figure and no like-for-like peak (names the GPUs).
        UnknownIdError: unknown precision.
    """
    _check_precision(precision)
    if gpu.id == reference.id:
        return Throughput(1.0, "identity", f"the reference GPU itself ({reference.id})")
    found = _figures(gpu, reference, precision)
    return found if found is not None else _like_for_like(gpu, reference, precision)
