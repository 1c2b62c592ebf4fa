"""The serving throughput of a side that nothing measures: the calibrated estimate, with its error.

Where no value is given and no measured row holds (:func:`pricing.tokens_per_s`: another
model or GPU, a GPU count that is no multiple of a row's replica size, an inline model or GPU),
a side's throughput is the estimate of :func:`pricing.estimate.estimate` at the question's
request shape and targets, with the published calibration (:func:`pricing.calibration.published`).
The estimate is the median; its error is a factor E ~ LogNormal(0, sigma), sigma the
calibration's leave-one-out standard deviation of ln(predicted / measured) for the model's kind
(mixture of experts or dense, where each is published; overall otherwise).

Under a latency target (``max_tpot_ms``, ``max_ttft_ms``) the estimate is the operating point
of the replica size and the largest batch meeting every target; a build that meets them at no
batch raises :class:`pricing.estimate.TargetsUnmetError` with the best it can do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from .calibration import Fit, published
from .errors import CatalogError
from .estimate import Architecture, Estimate, Targets, TargetsUnmetError, estimate, shortfall
from .models import GPU, Model
from .serving_options import Z90

__all__ = [
    "EstimatedServing",
    "conditions",
    "error_words",
    "fitted_error_words",
    "lognormal_p90",
    "serving_estimate",
]


def error_words(sigma: float, what: str = "calibrated roofline", basis: str = "") -> str:
    """The source of an estimated throughput in words: ``"estimated: calibrated roofline,
    leave-one-out error ±32 %"``, the error being sigma as a percentage (one standard deviation
    of the ln error); with the ``basis`` of that error, also the factor it is drawn as:
    ``"...: lognormal, median 1, sigma 0.316 (41 measured rows, calibration as of ...)"``."""
    words = f"estimated: {what}, leave-one-out error ±{100 * sigma:.0f} %"
    return f"{words}: lognormal, median 1, sigma {sigma:.3g} ({basis})" if basis else words


def fitted_error_words(sigma: float, fit: Fit) -> str:
    """:func:`error_words` of the calibrated estimate with its basis, the calibration ``fit``:
    the source of an estimated side's error and of a comparison's estimated option."""
    return error_words(
        sigma, basis=f"{len(fit.row_ids)} measured rows, calibration as of {fit.as_of}"
    )


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


def _replica(e: Estimate) -> str:
    return f"{e.gpus_per_replica} GPU{'s' * (e.gpus_per_replica != 1)} per replica"


def conditions(e: Estimate) -> str:
    """An operating point in a few words: ``"1 GPU per replica, batch 17, 24.95 ms per
    output token, 108.2 ms to first token"``."""
    return (
        f"{_replica(e)}, batch {e.batch:g}, {e.tpot_ms:.4g} ms per output token, "
        f"{e.ttft_ms:.4g} ms to first token"
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
    """The estimated serving throughput of one ``gpu`` of a build of ``gpus`` for ``model``,
    at the operating point meeting ``targets``.

    Args:
        model, gpu: catalog or inline. gpus: GPUs of the build or instance [GPU].
        precision: ``"fp16" | "fp8" | "fp4"``. input_tokens, output_tokens: per request
            [tokens]. targets: what each user is served. fit: the calibration, default the
            published one.

    Raises:
        TargetsUnmetError: no replica size meets the targets, even at batch 1 (the message
            names what the build reaches at best).
        CatalogError: the model has no architecture, the GPU no bandwidth or peak, or the
            weights and one request do not fit in any replica.
    """
    fit = fit or published()
    arch = _checked(model, gpu)
    e = estimate(arch, gpu, gpus, precision, input_tokens, output_tokens, targets, fit.calibration)
    build = f"{gpus} x {gpu.name}"
    if e is None:
        raise CatalogError(
            f"{build} cannot hold {model.id} at {precision}: its weights and one request's KV "
            "cache do not fit in any replica"
        )
    if not e.meets_targets:
        raise TargetsUnmetError(
            f"{build} cannot serve {model.id} at {precision} within {shortfall(targets, e)} "
            f"(estimated at batch 1, {_replica(e)})",
            e,
        )
    how = (
        f"{e.tokens_per_s_per_gpu:,.1f} tokens/s per GPU from the model's architecture and "
        f"{gpu.name}'s specifications ({conditions(e)}, {e.bound}-bound)"
    )
    return EstimatedServing(e.tokens_per_s_per_gpu, fit.sigma_of(arch), e, fit, how)


def lognormal_p90(sigma: float) -> float:
    """The P90 of LogNormal(0, sigma) [-]: exp(1.2816 sigma)."""
    return math.exp(Z90 * sigma)
