"""The serving throughput of each build of a comparison by model (a GPU at a GPU count, owned
or rented): measured where a row holds for it, else estimated with its error, else why it
cannot serve the model.

In this order:

1. **measured**: the row a scenario's side rests on
   (:meth:`scenarios.sides.Inference.measured`, :func:`pricing.tokens_per_s`: the user's rows
   before the catalog's, a replica size the build's GPU count is a multiple of, the request
   shape nearest the question's, meeting the per-user floor when one is set);
2. **estimated**: the calibrated roofline of :func:`pricing.estimate.estimate` with the
   published calibration, at the largest batch that meets the targets, P50 the
   estimate and its error E ~ LogNormal(0, sigma) with the calibration's leave-one-out sigma
   of the model's kind (:meth:`pricing.calibration.Fit.sigma_of`), drawn in the ranking
   (:class:`costmodel.options.ThroughputError`);
3. **left out**: :data:`TOO_BIG` when the weights and one request's KV cache do not fit in the
   build's memory, :data:`TOO_SLOW` when no batch serves each user at the floor,
   :data:`MISSES_TARGETS` when under a latency target (``max_tpot_ms``, ``max_ttft_ms``) no
   batch meets the targets (the best it reaches kept in :attr:`Speeds.short`), and
   :data:`UNMEASURED` when neither a row nor an estimate is to be had (the GPU lacks a memory
   bandwidth or a tensor peak, or the model its architecture).

Throughputs are [tokens/s per GPU, input + output].
"""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.options import ThroughputError
from pricing import GPU, CatalogError, ServingThroughput
from pricing.calibration import Fit
from pricing.estimate import Architecture, Estimate, estimate

from ..sides import Inference

__all__ = ["MISSES_TARGETS", "TOO_BIG", "TOO_SLOW", "UNMEASURED", "Speed", "Speeds"]

#: Why a build is left out: neither measured nor to be estimated, too small for the model,
#: too slow for the per-user floor, unable to meet the latency targets.
UNMEASURED, TOO_BIG, TOO_SLOW = "no_measurement", "does_not_fit", "too_slow"
MISSES_TARGETS = "misses_targets"


@dataclass(frozen=True)
class Speed:
    """One build's throughput: ``value`` [tokens/s per GPU], the P50 of an estimate; the
    ``measured`` row it rests on, or the ``estimate`` with the lognormal ``sigma`` [-] of its
    error (0 for a measurement) and the ``fit`` it comes from."""

    value: float
    measured: ServingThroughput | None = None
    estimate: Estimate | None = None
    sigma: float = 0.0
    fit: Fit | None = None

    def error(self, gpu: str, gpus: int) -> ThroughputError | None:
        """The error the ranking draws for this build (``None``: measured)."""
        return None if self.estimate is None else ThroughputError(self.sigma, f"{gpu}:{gpus}")


class Speeds:
    """Each build's :class:`Speed` or reason to be left out, found once per comparison.

    ``work`` is the comparison's work by model, ``fit`` the calibration (the published one
    by default, read when a build needs an estimate). ``short`` holds, by (GPU id, GPU count),
    the best operating point of each build left out for missing the latency targets."""

    def __init__(self, work: Inference, fit: Fit | None = None) -> None:
        self.work = work
        self._fit = fit
        self._found: dict[tuple[str, int], Speed | str] = {}
        self.short: dict[tuple[str, int], Estimate] = {}
        model = work.model
        self._arch = None if model.layers is None else Architecture.of(model)
        self._targets = work.targets
        self._latency = work.max_tpot_ms is not None or work.max_ttft_ms is not None

    @property
    def fit(self) -> Fit:
        """The calibration of the estimates, read when first needed."""
        if self._fit is None:
            from pricing.calibration import published

            self._fit = published()
        return self._fit

    def of(self, gpu: GPU, gpus: int) -> Speed | str:
        """The throughput of one GPU of a build of ``gpus`` ``gpu`` GPUs, or why it has none."""
        key = (gpu.id, gpus)
        if key not in self._found:
            self._found[key] = self._measured(gpu, gpus) or self._estimated(gpu, gpus)
        return self._found[key]

    def _measured(self, gpu: GPU, gpus: int) -> Speed | None:
        w = self.work
        if w.model.is_inline:
            return None
        try:
            row = w.measured(gpu, gpus)
        except CatalogError:  # no row holds for this build
            return None
        return Speed(row.value, measured=row)

    def _estimated(self, gpu: GPU, gpus: int) -> Speed | str:
        w, arch = self.work, self._arch
        if arch is None or not gpu.bandwidth_gbs or not (gpu.fp16_tflops or gpu.fp32_tflops):
            return UNMEASURED
        fit = self.fit
        e = estimate(
            arch,
            gpu,
            gpus,
            w.precision,
            w.input_tokens,
            w.output_tokens,
            self._targets,
            fit.calibration,
        )
        if e is None:
            return TOO_BIG
        if not e.meets_targets:
            if not self._latency:
                return TOO_SLOW
            self.short[(gpu.id, gpus)] = e
            return MISSES_TARGETS
        return Speed(e.tokens_per_s_per_gpu, estimate=e, sigma=fit.sigma_of(arch), fit=fit)
