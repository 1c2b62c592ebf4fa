"""The estimate's calibration: fitted on the catalog's measured serving rows, published with it.

eta_B, eta_F in (0, 1] and o_dec, o_pre >= 0 [s] minimise sum ln^2(predicted / measured) over
the measured rows (:func:`fit`, scipy's bounded least squares from a few starting points). A
row is predicted at its own conditions: its model, precision, GPU and request shape; its stated
replica size, else the replica size of {1, 2, 4, 8} with the most tokens/s per GPU (16, two
nodes, where the model fits in none: the multi-node disaggregated runs); batch
min(concurrency, n_max) when the concurrency is stated, else n_max (an offline run). Rows whose
model has no architecture are left out. The leave-one-out error (:func:`leave_one_out`: each
row predicted by a fit without it) is the estimate's error: its median |ratio - 1| and the
standard deviation of its ln ratios, sigma, overall and for dense and mixture-of-experts models
apart (each where it has >= 10 rows).

``tools/build_calibration.py`` writes the published form, ``pricing/data/serving_calibration.json``,
which :func:`published` reads.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from functools import cache
from pathlib import Path

import numpy as np

from .catalog import Catalog
from .errors import CatalogError
from .estimate import (
    REPLICA_SIZES,
    Architecture,
    Calibration,
    max_batch,
    pcie,
    serve,
    tensor_flops,
)

__all__ = ["Fit", "RowSet", "evaluate", "fit", "leave_one_out", "published", "rows_of"]

#: The published calibration's file in ``pricing/data``.
FILE = "serving_calibration.json"
#: The terms the published calibration uses beyond the reference form (each lowers the
#: leave-one-out error on the catalog's rows; docs/model.md gives the numbers).
FORM: tuple[str, ...] = ("sliding_window", "moe_efficiency", "pcie_tp")
#: Least group of rows whose own sigma is published [rows].
MIN_GROUP = 10


@dataclass(frozen=True)
class RowSet:
    """The measured rows as arrays, one row per measurement and one column per replica size.

    Attributes:
        ids: row ids. measured: tokens/s per GPU [tokens/s]. moe: mixture-of-experts model.
        arch: the models' architectures (array fields, shape (rows, 1)). precision: (rows, 1).
        bandwidth_gbs, flops: per GPU [GB/s], [FLOP/s], (rows, 1). memory_gb: (rows, 1).
        input_tokens, output_tokens: (rows, 1). gpus: replica sizes (1, 5): 1, 2, 4, 8, 16.
        concurrency: per replica [requests], inf when not stated (rows, 1).
        allowed: (rows, 5) the replica sizes a row may run at.
        pcie: (rows, 1) the row's GPU is a PCIe card.
    """

    ids: tuple[str, ...]
    measured: np.ndarray
    moe: np.ndarray
    arch: Architecture
    precision: np.ndarray
    bandwidth_gbs: np.ndarray
    flops: np.ndarray
    memory_gb: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    gpus: np.ndarray
    concurrency: np.ndarray
    allowed: np.ndarray
    pcie: np.ndarray

    def subset(self, keep: np.ndarray) -> RowSet:
        """The rows where ``keep`` (a boolean mask over rows) holds."""
        arch = Architecture(
            **{f.name: getattr(self.arch, f.name)[keep] for f in fields(Architecture)}
        )
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        for name, value in out.items():
            if name not in ("gpus", "arch"):
                out[name] = (
                    tuple(np.asarray(value)[keep]) if name == "ids" else np.asarray(value)[keep]
                )
        return RowSet(**{**out, "arch": arch})


def rows_of(catalog: Catalog) -> RowSet:
    """The catalog's measured serving rows whose model has an architecture, as a :class:`RowSet`."""
    rows = [p for p in catalog.serving if catalog.models[p.model].layers is not None]
    if not rows:
        raise CatalogError("no measured serving row has a model with an architecture")
    archs = [Architecture.of(catalog.models[p.model]) for p in rows]
    gpus = [catalog.gpus[p.gpu] for p in rows]
    column = lambda values: np.asarray(values, dtype=float)[:, None]  # noqa: E731
    arch = Architecture(
        **{f.name: column([getattr(a, f.name) for a in archs]) for f in fields(Architecture)}
    )
    sizes = np.asarray((*REPLICA_SIZES, 2 * REPLICA_SIZES[-1]))[None, :]
    stated = column([p.gpus_per_replica or 0 for p in rows])
    memory = column([g.memory_gb for g in gpus])
    tokens = column([p.input_tokens + p.output_tokens for p in rows])
    fits = (
        max_batch(
            arch,
            memory,
            sizes,
            np.asarray([p.precision for p in rows])[:, None],
            tokens,
            Calibration(1.0, 1.0, 0.0, 0.0),
        )
        >= 1
    )
    node = sizes <= REPLICA_SIZES[-1]
    unstated = (stated == 0) & (node | ~(fits & node).any(axis=1, keepdims=True))
    return RowSet(
        ids=tuple(p.id for p in rows),
        measured=np.asarray([p.tokens_per_s_per_gpu for p in rows]),
        moe=np.asarray([a.active_params_b < a.params_b for a in archs]),
        arch=arch,
        precision=np.asarray([p.precision for p in rows])[:, None],
        bandwidth_gbs=column([g.bandwidth_gbs for g in gpus]),
        flops=column([tensor_flops(g, p.precision) for g, p in zip(gpus, rows, strict=True)]),
        memory_gb=memory,
        input_tokens=column([p.input_tokens for p in rows]),
        output_tokens=column([p.output_tokens for p in rows]),
        gpus=sizes,
        concurrency=column([p.concurrency or np.inf for p in rows]),
        allowed=unstated | (stated == sizes),
        pcie=np.asarray([pcie(g) for g in gpus])[:, None],
    )


def predict(rows: RowSet, cal: Calibration) -> np.ndarray:
    """Each row's predicted tokens/s per GPU at its own conditions [tokens/s] (NaN: no fit)."""
    tokens = rows.input_tokens + rows.output_tokens
    n_max = max_batch(rows.arch, rows.memory_gb, rows.gpus, rows.precision, tokens, cal)
    ok = rows.allowed & (n_max >= 1)
    n = np.where(ok, np.minimum(rows.concurrency, np.maximum(n_max, 1.0)), 1.0)
    point = serve(
        rows.arch,
        rows.gpus,
        rows.bandwidth_gbs,
        rows.flops,
        rows.precision,
        rows.input_tokens,
        rows.output_tokens,
        n,
        cal,
        rows.pcie,
    )
    best = np.where(ok, point.tokens_per_s_per_gpu, -np.inf).max(axis=1)
    return np.where(np.isfinite(best), best, np.nan)


#: Each fitted constant: (low, high, scale, three starting values); the term that fits it.
_PARAMETERS: dict[str, tuple[float, float, float, tuple[float, float, float]]] = {
    "eta_b": (1e-3, 1.0, 0.1, (0.45, 0.8, 0.3)),
    "eta_f": (1e-3, 1.0, 0.1, (0.48, 0.3, 0.8)),
    "o_dec_s": (0.0, 10.0, 0.01, (0.0, 0.005, 0.0)),
    "o_pre_s": (0.0, 10.0, 0.01, (0.037, 0.01, 0.1)),
    "eta_moe": (1e-3, 1.0, 0.1, (0.8, 0.5, 1.0)),
    "o_tp_s": (0.0, 1.0, 0.001, (0.0, 0.001, 0.01)),
}
_TERM_PARAMETER = {"moe_efficiency": "eta_moe", "pcie_tp": "o_tp_s"}


def _names(terms: tuple[str, ...]) -> list[str]:
    """The constants a fit with ``terms`` adjusts."""
    return ["eta_b", "eta_f", "o_dec_s", "o_pre_s"] + [
        _TERM_PARAMETER[t] for t in terms if t in _TERM_PARAMETER
    ]


def _calibration(x: np.ndarray, terms: tuple[str, ...]) -> Calibration:
    return Calibration(terms=terms, **{n: float(v) for n, v in zip(_names(terms), x, strict=True)})


def fit(rows: RowSet, terms: tuple[str, ...] = ()) -> Calibration:
    """The calibration minimising sum ln^2(predicted / measured) over ``rows``.

    Bounded least squares (bounds in ``_PARAMETERS``: eta in [1e-3, 1], offsets in [0, 10] s)
    from each of three starts; the least sum of squares wins. A term's own constant (eta_moe,
    o_tp) is fitted with it.
    """
    from scipy.optimize import least_squares  # a fit is rare: scipy is imported for it alone

    target = np.log(rows.measured)
    spec = [_PARAMETERS[n] for n in _names(terms)]

    def residuals(x: np.ndarray) -> np.ndarray:
        return np.log(predict(rows, _calibration(x, terms))) - target

    bounds = ([p[0] for p in spec], [p[1] for p in spec])
    best = None
    for k in range(3):
        result = least_squares(
            residuals, [p[3][k] for p in spec], bounds=bounds, x_scale=[p[2] for p in spec]
        )
        if best is None or result.cost < best.cost:
            best = result
    return _calibration(best.x, terms)


def leave_one_out(rows: RowSet, terms: tuple[str, ...] = ()) -> np.ndarray:
    """Each row's predicted / measured ratio from a fit without that row [-]."""
    ratios = np.empty(len(rows.ids))
    for k in range(len(rows.ids)):
        keep = np.arange(len(rows.ids)) != k
        cal = fit(rows.subset(keep), terms)
        ratios[k] = predict(rows, cal)[k] / rows.measured[k]
    return ratios


@dataclass(frozen=True)
class Fit:
    """A calibration with its error on the rows it was fitted to.

    Attributes:
        calibration: the fitted constants. as_of: ISO date of the fit.
        row_ids: the rows used. in_sample, loo: each row's predicted / measured ratio, from the
            fit on every row and from the fit without it [-].
        loo_median_pct: median |loo - 1| [%]. sigma: standard deviation of ln(loo) [-];
        sigma_dense, sigma_moe: the same for each kind of model, None under ``MIN_GROUP`` rows.
    """

    calibration: Calibration
    as_of: str
    row_ids: tuple[str, ...]
    in_sample: tuple[float, ...]
    loo: tuple[float, ...]
    loo_median_pct: float
    sigma: float
    sigma_dense: float | None
    sigma_moe: float | None

    def sigma_of(self, arch: Architecture) -> float:
        """The sigma of a model like ``arch`` [-]: the mixture-of-experts or dense one where
        published, else the overall one."""
        group = self.sigma_moe if arch.active_params_b < arch.params_b else self.sigma_dense
        return group if group is not None else self.sigma


def _sigma(ln_ratios: np.ndarray) -> float | None:
    return float(np.std(ln_ratios, ddof=1)) if ln_ratios.size >= MIN_GROUP else None


def evaluate(rows: RowSet, terms: tuple[str, ...], as_of: str) -> Fit:
    """The fit on every row and its leave-one-out error."""
    cal = fit(rows, terms)
    loo = leave_one_out(rows, terms)
    ln = np.log(loo)
    return Fit(
        calibration=cal,
        as_of=as_of,
        row_ids=rows.ids,
        in_sample=tuple(float(v) for v in predict(rows, cal) / rows.measured),
        loo=tuple(float(v) for v in loo),
        loo_median_pct=float(np.median(np.abs(loo - 1.0)) * 100.0),
        sigma=float(np.std(ln, ddof=1)),
        sigma_dense=_sigma(ln[~rows.moe]),
        sigma_moe=_sigma(ln[rows.moe]),
    )


def _rounded(value):
    """Floats (also inside dicts) to 6 significant digits, so a refit reproduces the file."""
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return float(f"{value:.6g}") if isinstance(value, float) else value


def to_json(result: Fit) -> str:
    """The published form of ``result`` (the file :func:`published` reads), numbers to 6
    significant digits."""
    doc = _rounded(asdict(result))
    doc["calibration"]["terms"] = list(result.calibration.terms)
    doc["rows"] = [
        {"id": i, "in_sample": _rounded(a), "loo": _rounded(b)}
        for i, a, b in zip(result.row_ids, result.in_sample, result.loo, strict=True)
    ]
    for key in ("row_ids", "in_sample", "loo"):
        del doc[key]
    return json.dumps(doc, indent=1) + "\n"


def from_json(text: str, file: str = FILE) -> Fit:
    """A :class:`Fit` from its published form.

    Raises:
        CatalogError: the text is not a published calibration (naming ``file`` and the key).
    """
    try:
        doc = json.loads(text)
        rows = doc.pop("rows")
        doc["calibration"] = Calibration(
            **{**doc["calibration"], "terms": tuple(doc["calibration"]["terms"])}
        )
        return Fit(
            **doc,
            row_ids=tuple(r["id"] for r in rows),
            in_sample=tuple(float(r["in_sample"]) for r in rows),
            loo=tuple(float(r["loo"]) for r in rows),
        )
    except CatalogError as exc:
        raise exc.located(file=file) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise CatalogError(f"not a published calibration: {exc!r}", file=file) from None


@cache
def published() -> Fit:
    """The calibration published with the shipped catalog (``pricing/data``), read once."""
    return from_json((Path(__file__).with_name("data") / FILE).read_text(encoding="utf-8"))
