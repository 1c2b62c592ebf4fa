"""One side's serving throughput estimated at the question's targets, for a build or instance.

Where the question sets a latency target (``max_tpot_ms``, ``max_ttft_ms``) and no measured row
that measured that latency meets it (:func:`pricing.serving.tokens_per_s`), a side serves at
the estimate's operating point (:func:`pricing.estimate.estimate` with the published
calibration): the replica size and the largest batch meeting every target, its tokens/s per GPU
the side's throughput [tokens/s per GPU, input + output]. A build that meets no target even at
batch 1 raises :class:`TargetsUnmetError` with the best it can do.
"""

from __future__ import annotations

from dataclasses import dataclass

from .calibration import published
from .catalog import Catalog
from .errors import CatalogError
from .estimate import Architecture, Estimate, Targets, estimate

__all__ = ["EstimatedThroughput", "TargetsUnmetError", "at_targets", "shortfall"]


@dataclass(frozen=True)
class EstimatedThroughput:
    """A side's estimated serving throughput and the operating point it comes from.

    Attributes:
        value: tokens/s per GPU [tokens/s per GPU, input + output].
        point: the estimate's operating point. error_pct: the calibration's leave-one-out
            median error [%]. as_of: the calibration's date. how: the estimate in words, for
            the result's assumptions.
    """

    value: float
    point: Estimate
    error_pct: float
    as_of: str
    how: str

    #: Where the throughput comes from (a measured row's is ``"measured"`` or ``"yours"``).
    origin = "estimated"
    #: An estimate is at the question's own request shape and conditions (a measured row's
    #: may differ): no other shape, no caveats of a measurement.
    shape_differs = False
    caveats: tuple[str, ...] = ()

    #: What the estimate rests on, in words.
    source = "calibrated roofline from the model's architecture and the GPU's specifications"

    @property
    def conditions(self) -> str:
        """The operating point and the error in a few words: ``"1 GPU per replica, batch 17,
        24.95 ms per output token, 106.1 ms to first token, leave-one-out error ±19 %"``."""
        return f"{_conditions(self.point)}, leave-one-out error ±{self.error_pct:.0f} %"


class TargetsUnmetError(CatalogError):
    """A build that cannot serve the question's targets even at batch 1; ``best`` is the best
    it can do (:attr:`pricing.estimate.Estimate.meets_targets` False)."""

    def __init__(self, problem: str, best: Estimate) -> None:
        self.best = best
        super().__init__(problem)


def _replica(e: Estimate) -> str:
    return f"{e.gpus_per_replica} GPU{'s' * (e.gpus_per_replica != 1)} per replica"


def _conditions(e: Estimate) -> str:
    return (
        f"{_replica(e)}, batch {e.batch:g}, {e.tpot_ms:.4g} ms per output token, "
        f"{e.ttft_ms:.4g} ms to first token"
    )


def shortfall(targets: Targets, best: Estimate) -> str:
    """The targets ``best`` misses and what it reaches, in words: ``"max_tpot_ms 5: its
    fastest is 12.3 ms per output token"``."""
    found = []
    if targets.max_tpot_ms is not None and best.tpot_ms > targets.max_tpot_ms:
        found.append(
            f"max_tpot_ms {targets.max_tpot_ms:g}: its fastest is {best.tpot_ms:.3g} ms per "
            "output token"
        )
    if targets.max_ttft_ms is not None and best.ttft_ms > targets.max_ttft_ms:
        found.append(
            f"max_ttft_ms {targets.max_ttft_ms:g}: its quickest first token takes "
            f"{best.ttft_ms:.4g} ms"
        )
    floor = targets.min_tokens_per_s_per_user
    if floor is not None and best.tokens_per_s_per_user < floor:
        found.append(
            f"min_tokens_per_s_per_user {floor:g}: its fastest is "
            f"{best.tokens_per_s_per_user:.3g} tokens/s per user"
        )
    return "; ".join(found)


def at_targets(
    catalog: Catalog,
    model: str,
    precision: str,
    gpu: str,
    gpus: int,
    input_tokens: int,
    output_tokens: int,
    targets: Targets,
) -> EstimatedThroughput:
    """The estimated serving throughput of one GPU of a build of ``gpus`` ``gpu`` GPUs serving
    ``model`` at ``precision`` for requests of ``input_tokens`` and ``output_tokens`` tokens,
    at the operating point meeting ``targets`` (published calibration).

    Raises:
        TargetsUnmetError: no replica size meets the targets, even at batch 1 (the message
            names what the build reaches at best).
        CatalogError: the model has no architecture, the GPU no specifications, or the weights
            and one request do not fit in any replica.
    """
    fit = published()
    m, g = catalog.model(model), catalog.gpu(gpu)
    e = estimate(
        Architecture.of(m),
        g,
        gpus,
        precision,
        input_tokens,
        output_tokens,
        targets,
        fit.calibration,
    )
    build = f"{gpus} x {g.name}"
    if e is None:
        raise CatalogError(
            f"{build} cannot hold {m.id} at {precision}: its weights and one request's KV cache "
            "do not fit in any replica"
        )
    if not e.meets_targets:
        raise TargetsUnmetError(
            f"{build} cannot serve {m.id} at {precision} within {shortfall(targets, e)} "
            f"(estimated at batch 1, {_replica(e)})",
            e,
        )
    how = (
        f"{e.tokens_per_s_per_gpu:.6g} tokens/s per GPU from the model's architecture and "
        f"{g.name}'s specifications at the targets ({_conditions(e)}; calibrated roofline, "
        f"leave-one-out error ±{fit.loo_median_pct:.0f} %)"
    )
    return EstimatedThroughput(e.tokens_per_s_per_gpu, e, fit.loo_median_pct, fit.as_of, how)
