"""The serving throughput of a side that nothing measures: the calibrated estimate, with its error.

Where no value is given and no measured row holds (:func:`pricing.tokens_per_s`: another
model or GPU, a GPU count that is no multiple of a row's replica size, an inline model or GPU),
a side's throughput is the estimate of :func:`pricing.estimate.estimate` at the question's
request shape and targets, with the published calibration (:func:`pricing.calibration.published`).
The estimate is the median; its error is a factor E ~ LogNormal(0, sigma), sigma the
calibration's leave-one-out standard deviation of ln(predicted / measured) for the model's kind
(mixture of experts or dense, where each is published; overall otherwise).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from .calibration import Fit, published
from .errors import CatalogError
from .estimate import Architecture, Estimate, Targets, estimate
from .models import GPU, Model
from .serving_options import Z90

__all__ = ["EstimatedServing", "error_words", "lognormal_p90", "serving_estimate"]


def error_words(sigma: float, what: str = "calibrated roofline") -> str:
    """The source of an estimated throughput in words: ``"estimated: calibrated roofline,
    leave-one-out error ±32 %"``, the error being sigma as a percentage (one standard deviation
    of the ln error)."""
    return f"estimated: {what}, leave-one-out error ±{100 * sigma:.0f} %"


@dataclass(frozen=True)
class EstimatedServing:
    """An estimated serving throughput of one GPU and how it was found.

    Attributes:
        value: the estimate [tokens/s per GPU, input + output], the median.
        sigma: the lognormal sigma of its error [-].
        point: the estimated operating point (replica size, batch, bound, per-user speed).
        fit: the calibration used.
        how: the estimate in words, for the result's assumptions.
    """

    origin: ClassVar[str] = "estimated"
    shape_differs: ClassVar[bool] = False
    caveats: ClassVar[tuple[str, ...]] = ()
    value: float
    sigma: float
    point: Estimate
    fit: Fit
    how: str

    @property
    def source(self) -> str:
        """``"estimated: calibrated roofline, leave-one-out error ±X %"``."""
        return error_words(self.sigma)


def _words(gpus: int, e: Estimate) -> str:
    size, replicas = e.gpus_per_replica, gpus // e.gpus_per_replica
    return (
        f"{e.tokens_per_s_per_gpu:,.1f} tokens/s per GPU on {replicas} replica"
        f"{'s' * (replicas != 1)} of {size} GPU{'s' * (size != 1)} at batch {e.batch:g}, "
        f"{e.tokens_per_s_per_user:.1f} tokens/s per user, {e.bound}-bound"
    )


def _checked(model: Model, gpu: GPU) -> Architecture:
    """The model's architecture, once the GPU has the specifications to estimate from."""
    if not gpu.bandwidth_gbs or (gpu.fp16_tflops is None and gpu.fp32_tflops is None):
        raise CatalogError(
            f"GPU {gpu.name!r} has no memory bandwidth or peak rate to estimate its throughput "
            "from (bandwidth_gbs, fp16_tflops)"
        )
    return Architecture.of(model)


def serving_estimate(
    model: Model,
    gpu: GPU,
    gpus: int,
    precision: str,
    input_tokens: float,
    output_tokens: float,
    targets: Targets,
    fit: Fit | None = None,
) -> EstimatedServing:
    """The estimated serving throughput of one ``gpu`` of a build of ``gpus`` for ``model``.

    Args:
        model, gpu: catalog or inline. gpus: GPUs of the build or instance [GPU].
        precision: ``"fp16" | "fp8" | "fp4"``. input_tokens, output_tokens: per request
            [tokens]. targets: what each user is served. fit: the calibration, default the
            published one.

    Raises:
        CatalogError: the model has no architecture, the GPU no bandwidth or peak, the weights
            and one request do not fit, or no batch meets the targets (naming the best).
    """
    fit = fit or published()
    arch = _checked(model, gpu)
    e = estimate(arch, gpu, gpus, precision, input_tokens, output_tokens, targets, fit.calibration)
    if e is None:
        raise CatalogError(
            f"{model.id} at {precision} and one request of {input_tokens:g} + {output_tokens:g} "
            f"tokens do not fit in {gpus} x {gpu.memory_gb:g} GB"
        )
    if not e.meets_targets:
        raise CatalogError(
            f"no batch of {model.id} on {gpus} x {gpu.name} meets the targets; the best is "
            f"{e.tokens_per_s_per_user:.1f} tokens/s per user, TPOT {e.tpot_ms:.1f} ms, TTFT "
            f"{e.ttft_ms:.0f} ms (estimated)"
        )
    sigma = fit.sigma_of(arch)
    how = _words(gpus, e)
    return EstimatedServing(e.tokens_per_s_per_gpu, sigma, e, fit, how)


def lognormal_p90(sigma: float) -> float:
    """The P90 of LogNormal(0, sigma) [-]: exp(1.2816 sigma)."""
    return math.exp(Z90 * sigma)
