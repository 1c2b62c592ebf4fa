"""The error of an estimated training throughput: the estimation rule's leave-one-out error.

A GPU's training throughput relative to the reference is measured, else estimated by the rule
of :mod:`pricing.throughput` (another precision's figures scaled by each GPU's own peak ratio,
or the ratio of like-for-like peaks; the catalog's marked estimates are a measured GPU of the
same kind scaled by peaks). Its error is measured as the calibration of the serving estimate's
is: each measured figure (both GPUs' figures at the precision measured, neither marked an
estimate) is hidden in turn and predicted by the rule from what is left
(:func:`leave_one_out`); the standard deviation of ln(predicted / measured) is sigma, the
lognormal sigma of an estimated side's ``throughput_error``. Figures the rule cannot predict
once hidden (no like-for-like peak) are not counted: the rule never estimates them.

``tools/build_training_error.py`` writes the published form, ``pricing/data/training_error.json``,
which :func:`published` reads.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np

from .catalog import Catalog
from .errors import CatalogError
from .throughput import relative_throughput

__all__ = ["ESTIMATED_BASES", "TrainingError", "from_json", "leave_one_out", "published", "to_json"]

#: The published file in ``pricing/data``.
FILE = "training_error.json"
#: The bases of :class:`pricing.Throughput` that are estimates, not measurements.
ESTIMATED_BASES = ("scaled", "estimated", "peaks")


@dataclass(frozen=True)
class TrainingError:
    """The estimation rule's leave-one-out error over the catalog's measured figures.

    Attributes:
        as_of: ISO date of the catalog. reference: the reference GPU id.
        figures: (GPU id, precision) of each figure predicted. loo: each one's predicted /
            measured ratio [-]. loo_median_pct: median |loo - 1| [%]. sigma: standard
            deviation of ln(loo) [-].
    """

    as_of: str
    reference: str
    figures: tuple[tuple[str, str], ...]
    loo: tuple[float, ...]
    loo_median_pct: float
    sigma: float


def _measured(gpu, precision: str) -> bool:
    return f"measured_{precision}" not in gpu.estimated_fields


def leave_one_out(catalog: Catalog) -> TrainingError:
    """Each measured figure predicted by the rule without it, and the error's sigma.

    Raises:
        CatalogError: fewer than two figures can be predicted (no sigma).
    """
    ref = catalog.reference
    figures, ratios = [], []
    for gpu in catalog.gpus.values():
        if gpu.id == ref.id:
            continue
        for precision, value in gpu.measured.items():
            if not (_measured(gpu, precision) and precision in ref.measured):
                continue
            if not _measured(ref, precision):
                continue
            hidden = {k: v for k, v in gpu.measured.items() if k != precision}
            try:
                guess = relative_throughput(replace(gpu, measured=hidden), ref, precision)
            except CatalogError:
                continue
            figures.append((gpu.id, precision))
            ratios.append(guess.value / (value / ref.measured[precision]))
    if len(ratios) < 2:
        raise CatalogError("fewer than two measured training figures to score the rule on")
    loo = np.asarray(ratios)
    return TrainingError(
        as_of=catalog.as_of,
        reference=ref.id,
        figures=tuple(figures),
        loo=tuple(float(v) for v in loo),
        loo_median_pct=float(np.median(np.abs(loo - 1.0)) * 100.0),
        sigma=float(np.std(np.log(loo), ddof=1)),
    )


def to_json(result: TrainingError) -> str:
    """The published form, numbers to 6 significant digits."""
    doc = asdict(result)
    doc["loo_median_pct"] = float(f"{result.loo_median_pct:.6g}")
    doc["sigma"] = float(f"{result.sigma:.6g}")
    doc["figures"] = [
        {"gpu": g, "precision": p, "loo": float(f"{r:.6g}")}
        for (g, p), r in zip(result.figures, result.loo, strict=True)
    ]
    del doc["loo"]
    return json.dumps(doc, indent=1) + "\n"


def from_json(text: str, file: str = FILE) -> TrainingError:
    """A :class:`TrainingError` from its published form.

    Raises:
        CatalogError: the text is not one (naming ``file``).
    """
    try:
        doc = json.loads(text)
        rows = doc.pop("figures")
        return TrainingError(
            **doc,
            figures=tuple((r["gpu"], r["precision"]) for r in rows),
            loo=tuple(float(r["loo"]) for r in rows),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise CatalogError(f"not a published training error: {exc!r}", file=file) from None


@cache
def published() -> TrainingError:
    """The training error published with the shipped catalog (``pricing/data``), read once."""
    return from_json((Path(__file__).with_name("data") / FILE).read_text(encoding="utf-8"))
