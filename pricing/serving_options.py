"""Every GPU's serving throughput for one model, measured where the catalog measures it and
estimated elsewhere: the answer of ``costmodel throughput`` and ``GET /v1/throughput``.

A question (:class:`Question`) names a catalog model, a precision, a request shape, the GPUs
(default: every catalog GPU with a memory bandwidth and a tensor or fp32 peak) and the build
size N (default: each GPU's catalog builds, the platform tiers taking its form factor), with
optional targets and a concurrency (requests in flight on the whole build). Each build is:

- **measured** where a catalog row of the model and precision on that GPU has the question's
  request shape, a replica size dividing N (a row that does not state it: N = 8, the node its
  sweep ran on) and, under a per-user floor, a measured per-user speed meeting it, while the
  question sets no TPOT, TTFT or concurrency (which the rows do not measure); the best such row.
  Its P10 = P50 = P90.
- **estimated** otherwise (:func:`pricing.estimate.estimate` with the published calibration):
  P50 the estimate, P10 and P90 those of a lognormal with the calibration's leave-one-out sigma
  (the mixture-of-experts or dense sigma where published): P50 * exp(-/+ 1.2816 sigma).

A build whose replicas cannot hold the weights and one request, or that meets no target, is
left out with the reason (and the best it can do).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .calibration import Fit, published
from .catalog import Catalog
from .errors import CatalogError
from .estimate import MEMORY_SHARE, Architecture, Estimate, Targets, estimate, weights_bytes
from .models import GPU, ServingPoint
from .suggest import closest
from .vocabulary import INSTANCE_LIMITS, MODEL_LIMITS, SERVING_LIMITS, SERVING_PRECISIONS, Bound

__all__ = [
    "Answer",
    "LeftOut",
    "Option",
    "Question",
    "answer",
    "calibration_dict",
    "calibration_report",
    "to_dict",
]

#: z of the 90th percentile of a standard normal [-].
Z90 = 1.2815515655446004
#: Build size a measured row that does not state its replica size was swept on [GPU].
NODE = 8


@dataclass(frozen=True)
class Question:
    """What ``costmodel throughput`` asks.

    Attributes:
        model: catalog model id. precision: ``"fp16" | "fp8" | "fp4"``, None: the first the
            catalog measures the model at. input_tokens, output_tokens: per request [tokens].
        gpus: catalog GPU ids, empty: every GPU with the specifications. gpu_count: N [GPU],
            None: each GPU's catalog builds. concurrency: requests in flight on the whole build
            [requests], None: as many as fit (or the targets allow).
        targets: per-user floor, TPOT and TTFT ceilings. params_b: parameters [billions]
            overriding the catalog's count, None: the catalog's.
        estimate_only: estimate every build, also where a measured row holds (to set the
            estimate beside the measurement).
    """

    model: str
    precision: str | None = None
    input_tokens: int = 1000
    output_tokens: int = 1000
    gpus: tuple[str, ...] = ()
    gpu_count: int | None = None
    concurrency: int | None = None
    targets: Targets = field(default_factory=Targets)
    params_b: float | None = None
    estimate_only: bool = False


@dataclass(frozen=True)
class Option:
    """One GPU at one build size.

    Attributes:
        gpu: catalog GPU id. gpus: N [GPU]. gpus_per_replica: G [GPU] (None: not stated by
            the measurement). batch: requests in flight per replica [requests] (None: not
            stated). origin: ``"measured"`` (a catalog row), ``"yours"`` (a row of the user's
            serving file) or ``"estimated"``; row_id: the measured row.
        p10, p50, p90: tokens/s per GPU [tokens/s, input + output].
        tokens_per_s_per_user: [output tokens/s per request] (None: not measured).
        ttft_ms, tpot_ms: [ms] (None: not measured). bound: ``"memory" | "compute"`` (None:
            measured).
    """

    gpu: str
    gpus: int
    gpus_per_replica: int | None
    batch: float | None
    origin: str
    row_id: str | None
    p10: float
    p50: float
    p90: float
    tokens_per_s_per_user: float | None
    ttft_ms: float | None
    tpot_ms: float | None
    bound: str | None


@dataclass(frozen=True)
class LeftOut:
    """A build that cannot serve the question: why, and the best it can do (None: nothing fits).

    Attributes:
        gpu: catalog GPU id. gpus: N [GPU]. reason: in words. best: the estimate at batch 1.
    """

    gpu: str
    gpus: int
    reason: str
    best: Estimate | None


@dataclass(frozen=True)
class Answer:
    """Every option of a question, most tokens/s per GPU (P50) first, and the builds left out.

    Attributes:
        model, precision, input_tokens, output_tokens: the question as answered.
        options, left_out: see :class:`Option`, :class:`LeftOut`. calibration: the fit used.
        sigma: the lognormal sigma of the estimated options [-].
    """

    model: str
    precision: str
    input_tokens: int
    output_tokens: int
    options: tuple[Option, ...]
    left_out: tuple[LeftOut, ...]
    calibration: Fit
    sigma: float


def _check(name: str, value, bound: Bound) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CatalogError(f"{name} must be a number {bound.text()}, got {value!r}")
    problem = bound.problem(value)
    if problem:
        raise CatalogError(f"{name} {problem}")


def _checked(question: Question, catalog: Catalog) -> tuple[str, str, tuple[GPU, ...]]:
    """(model id, precision, GPUs) of a question whose numbers are in range."""
    model = catalog.model(question.model)
    precision = question.precision or (model.precisions or ("fp16",))[0]
    if precision not in SERVING_PRECISIONS:
        raise CatalogError(
            f"unknown precision {precision!r}; closest: "
            f"{', '.join(closest(str(precision), SERVING_PRECISIONS)) or 'none'}; "
            f"valid: {', '.join(SERVING_PRECISIONS)}"
        )
    _check("input_tokens", question.input_tokens, SERVING_LIMITS["input_tokens"])
    _check("output_tokens", question.output_tokens, SERVING_LIMITS["output_tokens"])
    _check("concurrency", question.concurrency, SERVING_LIMITS["concurrency"])
    _check("gpus", question.gpu_count, INSTANCE_LIMITS["gpu_count"])
    _check("params_b", question.params_b, MODEL_LIMITS["params_b"])
    gpus = tuple(catalog.gpu(g) for g in question.gpus) or tuple(
        g for g in catalog.gpus.values() if g.bandwidth_gbs and (g.fp16_tflops or g.fp32_tflops)
    )
    for gpu in gpus:
        if not gpu.bandwidth_gbs:
            raise CatalogError(f"GPU {gpu.id!r} has no memory bandwidth to estimate from")
    return model.id, precision, gpus


def _builds(catalog: Catalog, gpu: GPU, gpu_count: int | None) -> tuple[int, ...]:
    if gpu_count is not None:
        return (gpu_count,)
    return tuple(t.gpu_count for t in catalog.tiers if t.takes(gpu))


def _row(catalog: Catalog, q: Question, model: str, precision: str, gpu: str, n: int):
    """The best measured row that holds for this build, or None."""
    if (
        q.estimate_only
        or q.concurrency is not None
        or q.targets.max_tpot_ms
        or q.targets.max_ttft_ms
    ):
        return None
    floor = q.targets.min_tokens_per_s_per_user

    def holds(p: ServingPoint) -> bool:
        size = p.gpus_per_replica
        return (
            (p.model, p.precision, p.gpu) == (model, precision, gpu)
            and (p.input_tokens, p.output_tokens) == (q.input_tokens, q.output_tokens)
            and (n % size == 0 if size else n == NODE)
            and (floor is None or (p.tokens_per_s_per_user or 0) >= floor)
        )

    rows = [p for p in catalog.serving if holds(p)]  # the user's rows before the catalog's
    return max(rows, key=lambda p: (bool(p.file), p.tokens_per_s_per_gpu)) if rows else None


def _option(gpu: str, n: int, x: ServingPoint | Estimate, sigma: float = 0.0) -> Option:
    """The option of build ``n`` of ``gpu`` at a measured row ``x`` (sigma 0: P10 = P50 = P90,
    no TTFT, TPOT or bound) or at an estimate ``x`` with its lognormal sigma: P10 and P90 =
    P50 * exp(-/+ Z90 sigma)."""
    p50 = x.tokens_per_s_per_gpu
    if isinstance(x, ServingPoint):
        batch, origin, row_id = x.concurrency, "yours" if x.file else "measured", x.id
        ttft_ms = tpot_ms = bound = None
    else:
        batch, origin, row_id = x.batch, "estimated", None
        ttft_ms, tpot_ms, bound = x.ttft_ms, x.tpot_ms, x.bound
    return Option(
        gpu,
        n,
        x.gpus_per_replica,
        batch,
        origin,
        row_id,
        p50 * math.exp(-Z90 * sigma),
        p50,
        p50 * math.exp(Z90 * sigma),
        x.tokens_per_s_per_user,
        ttft_ms,
        tpot_ms,
        bound,
    )


def _no_room(arch: Architecture, precision: str, gpu: GPU, n: int) -> str:
    weights = float(weights_bytes(arch, precision)) / 1e9
    return (
        f"its {weights:,.1f} GB of weights at {precision} and one request's KV cache do not "
        f"fit in {MEMORY_SHARE:.0%} of {n} x {gpu.memory_gb:g} GB"
    )


def answer(question: Question, catalog: Catalog, fit: Fit | None = None) -> Answer:
    """The options of ``question`` (see the module docstring), best P50 first.

    Args:
        question: what is asked. catalog: the catalog (its models, GPUs, tiers, rows).
        fit: the calibration, default the published one.

    Raises:
        UnknownIdError: unknown model or GPU (closest ids named).
        CatalogError: a number out of range, an unknown precision, a model without an
            architecture, or a GPU without the specifications.
    """
    fit = fit or published()
    model_id, precision, gpus = _checked(question, catalog)
    arch = Architecture.of(catalog.models[model_id], question.params_b)
    sigma = fit.sigma_of(arch)
    i, o = question.input_tokens, question.output_tokens
    options, left_out = [], []
    for gpu in gpus:
        for n in _builds(catalog, gpu, question.gpu_count):
            row = _row(catalog, question, model_id, precision, gpu.id, n)
            if row is not None:
                options.append(_option(gpu.id, n, row))
                continue
            e = estimate(
                arch,
                gpu,
                n,
                precision,
                i,
                o,
                question.targets,
                fit.calibration,
                question.concurrency,
            )
            if e is None:
                left_out.append(LeftOut(gpu.id, n, _no_room(arch, precision, gpu, n), None))
            elif not e.meets_targets:
                left_out.append(LeftOut(gpu.id, n, "no batch meets the targets", e))
            else:
                options.append(_option(gpu.id, n, e, sigma))
    options.sort(key=lambda x: (-x.p50, x.gpu, x.gpus))
    return Answer(model_id, precision, i, o, tuple(options), tuple(left_out), fit, sigma)


def calibration_dict(fit: Fit) -> dict:
    """The calibration's JSON: its constants, rows used, date and leave-one-out error."""
    cal = fit.calibration
    return {
        "eta_b": cal.eta_b,
        "eta_f": cal.eta_f,
        "o_dec_s": cal.o_dec_s,
        "o_pre_s": cal.o_pre_s,
        "eta_moe": cal.eta_moe,
        "o_tp_s": cal.o_tp_s,
        "terms": list(cal.terms),
        "rows": len(fit.row_ids),
        "as_of": fit.as_of,
        "loo_median_pct": fit.loo_median_pct,
        "sigma": fit.sigma,
        "sigma_dense": fit.sigma_dense,
        "sigma_moe": fit.sigma_moe,
    }


def calibration_report(fit: Fit) -> dict:
    """:func:`calibration_dict` with each row's in-sample and leave-one-out ratio
    (``costmodel throughput --calibration``, ``GET /v1/throughput/calibration``)."""
    rows = [
        {"id": i, "in_sample": a, "loo": b}
        for i, a, b in zip(fit.row_ids, fit.in_sample, fit.loo, strict=True)
    ]
    return {**calibration_dict(fit), "row_ratios": rows}


def _option_dict(o: Option) -> dict:
    return {
        "gpu": o.gpu,
        "gpus": o.gpus,
        "gpus_per_replica": o.gpus_per_replica,
        "batch": o.batch,
        "origin": o.origin,
        "row_id": o.row_id,
        "tokens_per_s_per_gpu": {"p10": o.p10, "p50": o.p50, "p90": o.p90},
        "tokens_per_s_per_user": o.tokens_per_s_per_user,
        "ttft_ms": o.ttft_ms,
        "tpot_ms": o.tpot_ms,
        "bound": o.bound,
    }


def _left_out_dict(x: LeftOut) -> dict:
    best = x.best
    return {
        "gpu": x.gpu,
        "gpus": x.gpus,
        "reason": x.reason,
        "best": None
        if best is None
        else {
            "gpus_per_replica": best.gpus_per_replica,
            "tokens_per_s_per_user": best.tokens_per_s_per_user,
            "ttft_ms": best.ttft_ms,
            "tpot_ms": best.tpot_ms,
        },
    }


def to_dict(a: Answer) -> dict:
    """The answer's JSON (``costmodel throughput --format json``, ``GET /v1/throughput``)."""
    return {
        "model": a.model,
        "precision": a.precision,
        "input_tokens": a.input_tokens,
        "output_tokens": a.output_tokens,
        "sigma": a.sigma,
        "options": [_option_dict(o) for o in a.options],
        "left_out": [_left_out_dict(x) for x in a.left_out],
        "calibration": calibration_dict(a.calibration),
    }
