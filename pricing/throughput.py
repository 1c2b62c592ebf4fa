"""Relative training throughput of one GPU against another (DESIGN section 4).

Rule: if both GPUs have a *measured* figure for the precision, the result is the ratio of the
measured figures (both are relative to v100-sxm2-16gb). Otherwise both sides fall back to catalog
peaks, so one basis is never mixed with the other:

- fp32 -> ``fp32_tflops``;
- fp16 -> ``fp16_tflops`` (dense tensor), falling back to ``fp32_tflops`` for GPUs without
  tensor cores;
- int8 -> ``int8_tops``, falling back to the fp16 rule.
"""

from __future__ import annotations

from .errors import ThroughputUnavailableError, UnknownIdError
from .models import GPU, PRECISIONS

__all__ = ["peak_throughput", "relative_throughput"]


def _check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise UnknownIdError("precision", str(precision), [], PRECISIONS)


def peak_throughput(gpu: GPU, precision: str) -> float:
    """Catalog peak used for ``precision`` [TFLOPS or TOPS], after the fallbacks above.

    Raises:
        ThroughputUnavailableError: the GPU has no usable figure (names GPU and precision).
        UnknownIdError: ``precision`` is not ``"fp32" | "fp16" | "int8"``.
    """
    _check_precision(precision)
    chain = {
        "fp32": ("fp32_tflops",),
        "fp16": ("fp16_tflops", "fp32_tflops"),
        "int8": ("int8_tops", "fp16_tflops", "fp32_tflops"),
    }[precision]
    for name in chain:
        value = getattr(gpu, name)
        if value is not None:
            return float(value)
    raise ThroughputUnavailableError(
        f"GPU {gpu.id!r} has no {precision} throughput figure (looked for "
        f"{', '.join(chain)}); give relative_throughput explicitly"
    )


def relative_throughput(gpu: GPU, reference: GPU, precision: str) -> float:
    """Per-GPU training throughput of ``gpu`` in units of ``reference`` [-].

    Args:
        gpu: the GPU being priced.
        reference: the unit of normalised work (usually ``v100-sxm2-16gb``).
        precision: ``"fp32" | "fp16" | "int8"``.

    Returns:
        measured(gpu) / measured(reference) when both are measured at ``precision``, else
        peak(gpu) / peak(reference) with the fallbacks in the module docstring.

    Raises:
        ThroughputUnavailableError: no figure exists for one of the GPUs (names GPU and
            precision).
        UnknownIdError: unknown precision.
    """
    _check_precision(precision)
    mine = gpu.measured.get(precision)
    theirs = reference.measured.get(precision)
    if mine is not None and theirs is not None:
        return mine / theirs
    return peak_throughput(gpu, precision) / peak_throughput(reference, precision)
