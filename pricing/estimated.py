"""The serving throughput of a side at the question's targets, estimated where no measured row
meets them.

Where a question sets a latency target (``max_tpot_ms``, ``max_ttft_ms``) and no measured row
that measured that latency meets it (:func:`pricing.tokens_per_s`), a side serves at the
operating point of :func:`pricing.estimate.estimate` with the published calibration
(:func:`pricing.calibration.published`): the replica size and the largest batch meeting every
target, its tokens/s per GPU the side's throughput [tokens/s per GPU, input + output]. A build
that meets them at no batch raises :class:`pricing.estimate.TargetsUnmetError` with the best it
can do. The estimate's error is the calibration's leave-one-out sigma of ln(predicted /
measured) for the model's kind (mixture of experts or dense, where each is published).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .calibration import Fit, published
from .errors import CatalogError
from .estimate import Architecture, Estimate, Targets, TargetsUnmetError, estimate, shortfall
from .models import GPU, Model

__all__ = ["EstimatedServing", "conditions", "serving_estimate"]


@dataclass(frozen=True)
class EstimatedServing:
    """An estimated serving throughput of one GPU and how it was found.

    Attributes:
        value: the estimate [tokens/s per GPU, input + output], the median.
        sigma: the lognormal sigma of its error [-].
        point: the estimated operating point (replica size, batch, bound, per-user speed).
        fit: the calibration used. how: the estimate in words, for the result's assumptions.
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
        """``"estimated: calibrated roofline, leave-one-out error ±X %"``, X = 100 sigma."""
        return f"estimated: calibrated roofline, leave-one-out error ±{100 * self.sigma:.0f} %"


def _replica(e: Estimate) -> str:
    return f"{e.gpus_per_replica} GPU{'s' * (e.gpus_per_replica != 1)} per replica"


def conditions(e: Estimate) -> str:
    """An operating point in a few words: ``"1 GPU per replica, batch 17, 24.95 ms per
    output token, 108.2 ms to first token"``."""
    return (
        f"{_replica(e)}, batch {e.batch:g}, {e.tpot_ms:.4g} ms per output token, "
        f"{e.ttft_ms:.4g} ms to first token"
    )


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
        model, gpu: catalog records. gpus: GPUs of the build or instance [GPU].
        precision: ``"fp16" | "fp8" | "fp4"``. input_tokens, output_tokens: per request
            [tokens]. targets: what each user is served. fit: the calibration, default the
            published one.

    Raises:
        TargetsUnmetError: no replica size meets the targets, even at batch 1 (the message
            names what the build reaches at best).
        CatalogError: the model has no architecture, or its weights and one request do not
            fit in any replica.
    """
    fit = fit or published()
    arch = Architecture.of(model)
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
    moe = arch.active_params_b < arch.params_b
    group = fit.sigma_moe if moe else fit.sigma_dense
    sigma = group if group is not None else fit.sigma
    how = (
        f"{e.tokens_per_s_per_gpu:.6g} tokens/s per GPU from the model's architecture and "
        f"{gpu.name}'s specifications at the targets ({conditions(e)})"
    )
    return EstimatedServing(e.tokens_per_s_per_gpu, sigma, e, fit, how)
