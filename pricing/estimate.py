"""Serving throughput estimated from a model's architecture and a GPU's specifications.

A calibrated roofline of one replica of G GPUs in tensor parallel serving requests of I input
and O output tokens (decimal units: 1 GB = 1e9 bytes, 1 TFLOPS = 1e12 FLOP/s):

- weights W = params * 1e9 * b [bytes], b the bytes per parameter (fp16 2, fp8 1, fp4 0.5);
- KV cache per token kv = 2 * layers * kv_heads * head_dim * b_kv [bytes] (b_kv 2 at fp16,
  else 1), or layers * kv_dim_per_layer * b_kv under compressed attention (DeepSeek's MLA);
- memory for the cache M_kv = 0.9 * G * memory_gb * 1e9 - W [bytes]; whole requests that fit
  n_max = floor(M_kv / ((I + O) * kv)); mean context L = I + O / 2 [tokens];
- one decode step at batch n, t_dec(n) = max((W + n*L*kv) / (G*eta_B*B),
  2*P_act*1e9*n / (G*eta_F*F)) + o_dec [s]; one request's prefill
  t_pre = 2*P_act*1e9*I / (G*eta_F*F) + o_pre [s]; B the bandwidth [bytes/s], F the tensor
  rate at the precision [FLOP/s] (:func:`tensor_flops`), P_act the active parameters [billions];
- a cycle serving n requests T(n) = n*t_pre + O*t_dec(n) [s]; tokens/s per GPU
  n*(I+O) / (G*T(n)); per-user speed O / T(n) [tokens/s]; TPOT = t_dec(n); TTFT = t_pre + t_dec(n)
  (queueing before admission is not modelled).

The calibration (eta_B, eta_F, o_dec, o_pre and the terms it switches on) is
:class:`Calibration`; :mod:`pricing.calibration` fits and publishes it. Every function of the
form takes numbers or numpy arrays and broadcasts; :func:`estimate` applies the operating point
(the largest batch meeting the targets) and the parallelism rule (the replica size with the most
tokens/s per GPU) to one model on one build of GPUs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .errors import CatalogError
from .models import GPU, Model
from .vocabulary import BYTES_PER_PARAMETER, SERVING_PRECISIONS

__all__ = [
    "Architecture",
    "Calibration",
    "Estimate",
    "Replica",
    "Targets",
    "TargetsUnmetError",
    "estimate",
    "kv_bytes",
    "max_batch",
    "operating_point",
    "pcie",
    "serve",
    "shortfall",
    "tensor_flops",
    "weights_bytes",
]

#: Bytes of one cached key or value at each serving precision [byte] (fp8 and fp4 cache at fp8).
KV_BYTES_PER_VALUE: dict[str, float] = {"fp16": 2.0, "fp8": 1.0, "fp4": 1.0}
#: Share of the replica's memory the weights and the KV cache may take [-].
MEMORY_SHARE = 0.9
#: Replica sizes the parallelism rule tries [GPU].
REPLICA_SIZES: tuple[int, ...] = (1, 2, 4, 8)
#: Architectures (the start of the catalog's ``arch`` text) with tensor cores of each precision
#: below fp16, and the rate each runs at against fp16 [-].
LOW_PRECISION_ARCHS: dict[str, tuple[str, ...]] = {
    "fp8": ("Ada Lovelace", "Hopper", "Blackwell", "CDNA 3", "CDNA 4"),
    "fp4": ("Blackwell", "CDNA 4"),
}
_SPEEDUP = {"fp16": 1.0, "fp8": 2.0, "fp4": 4.0}
#: Terms a calibration may switch on beyond the reference form (docs/model.md says which are).
TERMS: tuple[str, ...] = ("sliding_window", "moe_efficiency", "pcie_tp")


def tensor_flops(gpu: GPU, precision: str) -> float:
    """The tensor rate ``gpu`` runs ``precision`` math at [FLOP/s].

    The dense fp16 tensor peak (``fp16_tflops``; the fp32 peak for a GPU without tensor cores),
    twice that at fp8 and four times at fp4 where the architecture has tensor cores of that
    precision (:data:`LOW_PRECISION_ARCHS`); a precision the GPU lacks runs at the rate of the
    lowest precision above it that it has (fp4 on Hopper at the fp8 rate).
    """
    base = gpu.fp16_tflops if gpu.fp16_tflops is not None else gpu.fp32_tflops
    if base is None:
        raise CatalogError(f"GPU {gpu.id!r} has no fp16 or fp32 peak to estimate from")
    for candidate in SERVING_PRECISIONS[SERVING_PRECISIONS.index(precision) :: -1]:
        archs = LOW_PRECISION_ARCHS.get(candidate, ("",))
        if any(gpu.arch.startswith(a) for a in archs):
            return base * 1e12 * _SPEEDUP[candidate]
    return base * 1e12


def pcie(gpu: GPU) -> bool:
    """Whether ``gpu`` is a PCIe card (its replicas exchange over PCIe, no GPU-to-GPU fabric)."""
    return gpu.form_factor == "pcie"


@dataclass(frozen=True)
class Calibration:
    """The fitted constants of the form and the terms it uses.

    Attributes:
        eta_b: share of the memory bandwidth a decode step reaches [-], (0, 1].
        eta_f: share of the tensor rate the matrix products reach [-], (0, 1].
        o_dec_s: fixed time of one decode step [s], >= 0.
        o_pre_s: fixed time of one request's prefill [s], >= 0.
        terms: the terms of :data:`TERMS` in use (empty: the reference form).
        eta_moe: with the ``moe_efficiency`` term, the share of the dense bandwidth efficiency
            a mixture of experts' decode step reaches [-], (0, 1] (grouped expert products,
            routing); 1 otherwise.
        o_tp_s: with the ``pcie_tp`` term, the time each layer adds to a decode step of a
            replica of more than one PCIe card (tensor-parallel exchanges without NVLink or
            Infinity Fabric) [s], >= 0; 0 otherwise.
    """

    eta_b: float
    eta_f: float
    o_dec_s: float
    o_pre_s: float
    terms: tuple[str, ...] = field(default=())
    eta_moe: float = 1.0
    o_tp_s: float = 0.0

    def __post_init__(self) -> None:
        for name in ("eta_b", "eta_f", "eta_moe"):
            value = getattr(self, name)
            if not 0 < value <= 1:
                raise CatalogError(f"must be in (0, 1], got {value!r}", column=name)
        for name in ("o_dec_s", "o_pre_s", "o_tp_s"):
            if not getattr(self, name) >= 0:
                raise CatalogError(f"must be >= 0 [s], got {getattr(self, name)!r}", column=name)
        unknown = [t for t in self.terms if t not in TERMS]
        if unknown:
            raise CatalogError(f"unknown term(s) {unknown}; valid: {', '.join(TERMS)}")
        object.__setattr__(self, "terms", tuple(self.terms))


@dataclass(frozen=True)
class Architecture:
    """What the estimate needs of a model (see :class:`~pricing.models.Model`).

    Attributes:
        params_b, active_params_b: total and active parameters [billions].
        layers: layers [layers]. kv_values: values cached per token per full-attention layer
            (2 * kv_heads * head_dim, or kv_dim_per_layer) [values].
        window_layers, window: layers attending to the last ``window`` tokens only [layers],
            [tokens] (0 and 0 without them).
    """

    params_b: float
    active_params_b: float
    layers: int
    kv_values: int
    window_layers: int = 0
    window: int = 0

    @classmethod
    def of(cls, model: Model, params_b: float | None = None) -> Architecture:
        """The architecture of a catalog or inline model; ``params_b`` [billions] overrides the
        total (and, for a dense model, the active) count.

        Raises:
            CatalogError: the model has no architecture in the catalog.
        """
        if model.layers is None:
            raise CatalogError(
                f"model {model.id!r} has no architecture (layers, KV heads, head dim) to "
                "estimate its throughput from"
            )
        total = model.params_b if params_b is None else params_b
        active = model.active_params_b
        active = total if active is None else min(active, total)
        kv = model.kv_dim_per_layer or 2 * model.kv_heads * model.head_dim
        return cls(
            total,
            active,
            model.layers,
            kv,
            model.sliding_window_layers or 0,
            model.sliding_window or 0,
        )


def per_precision(table: dict[str, float], precision):
    """``table[precision]`` for one precision or an array of them (element by element)."""
    if isinstance(precision, str):
        return table[precision]
    return np.vectorize(table.__getitem__, otypes=[float])(precision)


def kv_bytes(arch: Architecture, tokens, precision, cal: Calibration):
    """KV cache of one request holding ``tokens`` tokens of context [bytes] (broadcasts).

    Without the ``sliding_window`` term every layer caches every token (the reference form);
    with it, the window layers cache at most ``window`` tokens.
    """
    per_layer = arch.kv_values * per_precision(KV_BYTES_PER_VALUE, precision)
    tokens = np.asarray(tokens, dtype=float)
    if "sliding_window" not in cal.terms:
        return arch.layers * per_layer * tokens
    windowed = np.where(arch.window_layers > 0, np.minimum(tokens, arch.window), tokens)
    return per_layer * ((arch.layers - arch.window_layers) * tokens + arch.window_layers * windowed)


def weights_bytes(arch: Architecture, precision):
    """W: the weights of the model at ``precision`` [bytes], params * 1e9 * bytes per parameter."""
    return arch.params_b * 1e9 * per_precision(BYTES_PER_PARAMETER, precision)


def max_batch(arch: Architecture, memory_gb, gpus, precision: str, tokens, cal: Calibration):
    """n_max: whole requests of ``tokens`` tokens whose KV cache fits beside the weights of a
    replica of ``gpus`` GPUs of ``memory_gb`` [GB] each [requests] (0 when nothing fits)."""
    weights = weights_bytes(arch, precision)
    room = MEMORY_SHARE * np.asarray(gpus) * np.asarray(memory_gb) * 1e9 - weights
    return np.maximum(np.floor(room / kv_bytes(arch, tokens, precision, cal)), 0.0)


@dataclass(frozen=True)
class Replica:
    """One replica's operating point (arrays broadcast over the inputs of :func:`serve`).

    Attributes:
        batch: requests in flight [requests]. decode_s: TPOT, one decode step [s].
        prefill_s: one request's prefill [s]. cycle_s: T(n) [s].
        tokens_per_s_per_gpu: [tokens/s per GPU, input + output]. tokens_per_s_per_user:
            [output tokens/s per request]. ttft_s: time to first token [s].
        memory_bound: True where the decode step's memory time exceeds its compute time.
    """

    batch: np.ndarray
    decode_s: np.ndarray
    prefill_s: np.ndarray
    cycle_s: np.ndarray
    tokens_per_s_per_gpu: np.ndarray
    tokens_per_s_per_user: np.ndarray
    ttft_s: np.ndarray
    memory_bound: np.ndarray


def serve(
    arch, gpus, bandwidth_gbs, flops, precision, input_tokens, output_tokens, n, cal, pcie=False
):
    """The operating point of replicas of ``gpus`` GPUs at batch ``n`` (all broadcast).

    Args:
        arch: the model. gpus: replica size G [GPU]. bandwidth_gbs: memory bandwidth per GPU
            [GB/s]. flops: tensor rate per GPU at the precision [FLOP/s] (:func:`tensor_flops`).
        precision: ``"fp16" | "fp8" | "fp4"``. input_tokens, output_tokens: I, O [tokens].
        n: requests in flight per replica [requests], > 0. cal: the calibration.

    The ``moe_efficiency`` term divides a mixture of experts' memory time by eta_moe; the
    ``pcie_tp`` term adds o_tp * layers to each decode step where ``pcie`` (the GPUs are PCIe
    cards, broadcast) and the replica has more than one GPU.
    """
    i, o = np.asarray(input_tokens, float), np.asarray(output_tokens, float)
    n = np.asarray(n, float)
    bandwidth = np.asarray(gpus) * cal.eta_b * np.asarray(bandwidth_gbs) * 1e9
    compute = np.asarray(gpus) * cal.eta_f * np.asarray(flops)
    flop_per_token = 2.0 * arch.active_params_b * 1e9
    weights = weights_bytes(arch, precision)
    memory = (weights + n * kv_bytes(arch, i + o / 2, precision, cal)) / bandwidth
    if "moe_efficiency" in cal.terms:
        memory = memory / np.where(arch.active_params_b < arch.params_b, cal.eta_moe, 1.0)
    math_s = flop_per_token * n / compute
    step = np.maximum(memory, math_s) + cal.o_dec_s
    if "pcie_tp" in cal.terms:
        step = step + np.where(np.asarray(pcie) & (np.asarray(gpus) > 1), cal.o_tp_s, 0.0) * (
            arch.layers
        )
    prefill = flop_per_token * i / compute + cal.o_pre_s
    cycle = n * prefill + o * step
    return Replica(
        batch=n,
        decode_s=step,
        prefill_s=prefill,
        cycle_s=cycle,
        tokens_per_s_per_gpu=n * (i + o) / (np.asarray(gpus) * cycle),
        tokens_per_s_per_user=o / cycle,
        ttft_s=prefill + step,
        memory_bound=memory >= math_s,
    )


@dataclass(frozen=True)
class Targets:
    """What a question asks of each user's service; None sets no target.

    Attributes:
        min_tokens_per_s_per_user: per-user speed floor [output tokens/s per request].
        max_tpot_ms: time per output token ceiling [ms]. max_ttft_ms: time to first token [ms].
    """

    min_tokens_per_s_per_user: float | None = None
    max_tpot_ms: float | None = None
    max_ttft_ms: float | None = None

    def __post_init__(self) -> None:
        for name in ("min_tokens_per_s_per_user", "max_tpot_ms", "max_ttft_ms"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int | float) and 0 < value < math.inf):
                raise CatalogError(f"{name} must be a positive number, got {value!r}")

    def met(self, point: Replica) -> np.ndarray:
        """Where ``point`` meets every target [bool array]."""
        ok = np.ones_like(point.cycle_s, dtype=bool)
        if self.min_tokens_per_s_per_user is not None:
            ok &= point.tokens_per_s_per_user >= self.min_tokens_per_s_per_user
        if self.max_tpot_ms is not None:
            ok &= point.decode_s * 1e3 <= self.max_tpot_ms
        if self.max_ttft_ms is not None:
            ok &= point.ttft_s * 1e3 <= self.max_ttft_ms
        return ok


def operating_point(arch, gpus, gpu: GPU, precision, i, o, n_max: int, targets, cal) -> int:
    """The largest batch n in [1, n_max] meeting ``targets`` [requests], 0 when none does.

    Every target is monotone in n (a larger batch is slower per user), so a bisection finds it.
    """
    flops = tensor_flops(gpu, precision)

    def ok(n: int) -> bool:
        point = serve(arch, gpus, gpu.bandwidth_gbs, flops, precision, i, o, n, cal, pcie(gpu))
        return bool(targets.met(point))

    if n_max < 1:
        return 0
    if targets == Targets():  # no target: the most that fit
        return int(n_max)
    if not ok(1):
        return 0
    low, high = 1, int(n_max)
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if ok(mid) else (low, mid - 1)
    return low


@dataclass(frozen=True)
class Estimate:
    """The estimated operating point of one model on one build of ``gpus`` GPUs.

    Attributes:
        gpus: GPUs of the build [GPU]. gpus_per_replica: the replica size G chosen [GPU].
        batch: requests in flight per replica [requests]. n_max: the most that fit [requests].
        tokens_per_s_per_gpu: [tokens/s per GPU, input + output]; tokens_per_s_per_user:
            [output tokens/s per request]; ttft_ms, tpot_ms: [ms].
        bound: ``"memory"`` or ``"compute"`` (the decode step's limit).
        meets_targets: False when no replica size meets the targets; the figures are then the
            best the build can do (batch 1 at the replica size serving each user fastest).
    """

    gpus: int
    gpus_per_replica: int
    batch: float
    n_max: int
    tokens_per_s_per_gpu: float
    tokens_per_s_per_user: float
    ttft_ms: float
    tpot_ms: float
    bound: str
    meets_targets: bool


class TargetsUnmetError(CatalogError):
    """A build that cannot meet a question's targets even at batch 1; ``best`` is the best it
    can do (an :class:`Estimate` with ``meets_targets`` False)."""

    def __init__(self, problem: str, best: Estimate) -> None:
        self.best = best
        super().__init__(problem)


def shortfall(targets: Targets, best: Estimate) -> str:
    """The targets ``best`` misses and what it reaches, in words: ``"max_tpot_ms 5: its
    fastest is 20.9 ms per output token"``."""
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


def _record(gpus: int, g: int, n_max: int, point: Replica, met: bool) -> Estimate:
    return Estimate(
        gpus=gpus,
        gpus_per_replica=g,
        batch=float(point.batch),
        n_max=n_max,
        tokens_per_s_per_gpu=float(point.tokens_per_s_per_gpu),
        tokens_per_s_per_user=float(point.tokens_per_s_per_user),
        ttft_ms=float(point.ttft_s) * 1e3,
        tpot_ms=float(point.decode_s) * 1e3,
        bound="memory" if bool(point.memory_bound) else "compute",
        meets_targets=met,
    )


def _replica(arch, gpu, gpus, g, precision, i, o, targets, cal, concurrency):
    """(Estimate at replica size g or None when nothing fits, the batch-1 point or None)."""
    n_max = int(max_batch(arch, gpu.memory_gb, g, precision, i + o, cal))
    if n_max < 1:
        return None, None
    flops = tensor_flops(gpu, precision)
    card = pcie(gpu)
    single = serve(arch, g, gpu.bandwidth_gbs, flops, precision, i, o, 1, cal, card)
    if concurrency is not None:
        n = min(concurrency * g / gpus, n_max)
        point = serve(arch, g, gpu.bandwidth_gbs, flops, precision, i, o, n, cal, card)
        met = bool(targets.met(point))
    else:
        n = operating_point(arch, g, gpu, precision, i, o, n_max, targets, cal)
        met = n >= 1
        point = serve(arch, g, gpu.bandwidth_gbs, flops, precision, i, o, n, cal, card)
        point = point if met else None
    best = _record(gpus, g, n_max, point, True) if met else None
    return best, _record(gpus, g, n_max, single, False)


#: Estimates :func:`estimate` keeps, by their arguments [-].
_KEPT_ESTIMATES = 256


@lru_cache(maxsize=_KEPT_ESTIMATES, typed=True)
def estimate(
    arch: Architecture,
    gpu: GPU,
    gpus: int,
    precision: str,
    input_tokens: float,
    output_tokens: float,
    targets: Targets,
    cal: Calibration,
    concurrency: float | None = None,
) -> Estimate | None:
    """The estimated serving throughput of ``arch`` on a build of ``gpus`` ``gpu`` GPUs.

    Tries each replica size G of :data:`REPLICA_SIZES` with G <= gpus dividing gpus; at each,
    the batch is min(concurrency * G / gpus, n_max) when ``concurrency`` (requests in flight on
    the whole build) is given, else the largest n <= n_max meeting ``targets``. The chosen G
    has the most tokens/s per GPU (a tie goes to the smaller G).

    Returns:
        The :class:`Estimate`; one with ``meets_targets`` False (the best the build can do)
        when no G meets the targets; None when the model's weights and one request do not fit
        in any replica.

    A pure function of its arguments (frozen records and numbers), kept for the last
    :data:`_KEPT_ESTIMATES` of them: a service asked the same question again (every
    evaluation of an estimated side resolves it) finds it without the replica sizes' batches.
    """
    sizes = [g for g in REPLICA_SIZES if g <= gpus and gpus % g == 0]
    chosen, fallback = None, None
    for g in sizes:
        best, single = _replica(
            arch, gpu, gpus, g, precision, input_tokens, output_tokens, targets, cal, concurrency
        )
        if best is not None and (
            chosen is None or best.tokens_per_s_per_gpu > chosen.tokens_per_s_per_gpu
        ):
            chosen = best
        if single is not None and (
            fallback is None or single.tokens_per_s_per_user > fallback.tokens_per_s_per_user
        ):
            fallback = single
    return chosen if chosen is not None else fallback
