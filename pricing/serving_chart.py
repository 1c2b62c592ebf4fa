"""The throughput chart of ``costmodel throughput --chart``: tokens/s per GPU against the speed
each user gets, one curve per GPU, as the batch grows from 1 to its largest.

Each GPU's curve is its best estimated option's replica (build size and replica size G) at
batches from 1 to the option's batch (n_max, or the largest meeting the targets), 40 points
spaced evenly in ln n: the estimate's trade between serving many users slowly and few fast. A
measured option (the catalog's or yours) is one marker at its measured per-user speed (where the
row measures it). The same curves, with the estimate's P10-P90, are ``GET /v1/throughput``'s
``curves``, which the page draws.
matplotlib is imported only when a chart is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

import numpy as np

from .catalog import Catalog
from .estimate import Architecture, pcie, serve, tensor_flops
from .serving_options import Z90, Answer

__all__ = ["curve_dicts", "curves", "write_throughput_chart"]

#: Points per curve [-].
POINTS = 40


def _estimated(a: Answer, catalog: Catalog, params_b: float | None) -> Iterator[tuple]:
    """(option, tokens/s per user [tokens/s], tokens/s per GPU [tokens/s]) along the batches
    of each GPU's best estimated option, best GPU first."""
    arch = Architecture.of(catalog.models[a.model], params_b)
    cal = a.calibration.calibration
    drawn: set[str] = set()
    for o in a.options:  # best P50 first: the first option of a GPU is its best
        if o.origin != "estimated" or o.gpu in drawn:
            continue
        drawn.add(o.gpu)
        gpu = catalog.gpus[o.gpu]
        n = np.unique(np.geomspace(1, max(o.batch, 1), POINTS))
        point = serve(
            arch,
            o.gpus_per_replica,
            gpu.bandwidth_gbs,
            tensor_flops(gpu, a.precision),
            a.precision,
            a.input_tokens,
            a.output_tokens,
            n,
            cal,
            pcie(gpu),
        )
        yield o, point.tokens_per_s_per_user, point.tokens_per_s_per_gpu


def curves(a: Answer, catalog: Catalog, params_b: float | None = None) -> dict[str, tuple]:
    """GPU label -> (tokens/s per user [tokens/s], tokens/s per GPU [tokens/s]) arrays along
    its best estimated option's batches."""
    return {
        f"{o.gpu} x{o.gpus} (G {o.gpus_per_replica})": (user, per_gpu)
        for o, user, per_gpu in _estimated(a, catalog, params_b)
    }


def curve_dicts(
    a: Answer, catalog: Catalog, count: int, params_b: float | None = None
) -> list[dict]:
    """The curves of the ``count`` best estimated GPUs as JSON (``GET /v1/throughput`` with
    ``curves``): each GPU's build (``gpu``, ``gpus``, ``gpus_per_replica``), then along its
    batches ``tokens_per_s_per_user`` [tokens/s] and ``tokens_per_s_per_gpu`` P10/P50/P90
    [tokens/s per GPU, input + output], P10 and P90 the estimate's P50 times
    exp(-/+ 1.2816 sigma), as the options' are."""
    spread = math.exp(Z90 * a.sigma)
    return [
        {
            "gpu": o.gpu,
            "gpus": o.gpus,
            "gpus_per_replica": o.gpus_per_replica,
            "tokens_per_s_per_user": user.tolist(),
            "tokens_per_s_per_gpu": {
                "p10": (per_gpu / spread).tolist(),
                "p50": per_gpu.tolist(),
                "p90": (per_gpu * spread).tolist(),
            },
        }
        for o, user, per_gpu in islice(_estimated(a, catalog, params_b), count)
    ]


def write_throughput_chart(
    path: str | Path, a: Answer, catalog: Catalog, params_b: float | None = None
) -> Path:
    """Draw the chart of ``a`` as PNG or SVG by the suffix of ``path``; returns the path."""
    import matplotlib
    from matplotlib.figure import Figure

    out = Path(path)
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise ValueError(f"{out}: a chart is written as .png or .svg")
    fig = Figure(figsize=(7.5, 4.6), dpi=120, layout="constrained")
    ax = fig.add_subplot()
    ax.grid(True, which="both", color="#e4e4e4", linewidth=0.5)
    for label, (user, per_gpu) in curves(a, catalog, params_b).items():
        ax.plot(user, per_gpu, lw=1.2, label=f"{label}, estimated")
    for o in a.options:
        if o.origin != "estimated" and o.tokens_per_s_per_user is not None:
            ax.plot([o.tokens_per_s_per_user], [o.p50], "o", ms=4, label=f"{o.gpu}: {o.row_id}")
    ax.set_yscale("log")
    ax.set_xlabel("tokens/s per user")
    ax.set_ylabel("tokens/s per GPU (input + output)")
    ax.set_title(
        f"{a.model} at {a.precision}, {a.input_tokens} / {a.output_tokens} tokens", fontsize=10
    )
    ax.legend(fontsize=6, frameon=False)
    out.parent.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context({"svg.hashsalt": "costmodel"}):
        fig.savefig(out, format=fmt, metadata={"Date": None} if fmt == "svg" else {})
    return out
