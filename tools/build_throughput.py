"""Reconcile the reference throughput table to one baseline: v100-sxm2-16gb.

Usage::

    python tools/build_throughput.py [PATH/TO/throughput.csv] [--csv]

The reference ``throughput.csv`` mixes two PyTorch baselines (a V100 32GB in a Lambda server,
2021 snapshot, and a Lambda Cloud 1x V100 16GB, repo HEAD 2025) plus older TensorFlow rows on a
V100 32GB baseline. Lambda's benchmark runs each GPU at the largest batch that fits, so the 16 GB
V100 runs smaller batches and is slower than the 32 GB one; figures relative to the 32 GB V100 are
therefore *smaller* than they would be relative to the 16 GB V100.

Bridge factor per precision [-] = geometric mean, over the GPUs benchmarked under both PyTorch
baselines, of (value on the 16 GB-cloud baseline / value on the 32 GB-server baseline). Rows on a
V100 32GB baseline are multiplied by it; ``v100-sxm2-32gb`` itself gets the bridge factor.

Priority per GPU and precision: PyTorch on the 16 GB baseline (direct) > PyTorch on the 32 GB
baseline (bridged) > TensorFlow rows (bridged when on a 32 GB baseline) > rows of another suite
measured against a GPU of the table in the same run (MLPerf Training, a timm training run),
multiplied by that GPU's figure. Within a tier a row for owned hardware beats a "(Lambda Cloud
instance)" row, and newer data beats older. A row whose precision says "estimated" (a run at
another precision) gives an estimated figure.

Anchored estimates: a catalog GPU of ``ANCHORS`` without a figure at a precision takes its
donor's (a measured GPU of the same kind, named with why) times the ratio of the peaks the two
run that precision's work at (``pricing.throughput.work_peak``: TF32 tensor peaks for fp32 on
Ampere and later, CUDA-core FP32 peaks before; tensor FP16 peaks, or FP32 without tensor cores).
Where the GPU has a figure at the other precision, that figure is carried over with the donor's
own ratio between the two precisions instead. Peaks of unlike kinds are never compared (an
error). Every anchored figure is marked estimated.

The committed ``pricing/data/gpus.csv`` carries this script's output (rounded to 4 decimals) in
``measured_fp32``/``measured_fp16`` and ``measured_source`` (:func:`measured_source`);
``pricing/data/catalog.json`` carries the bridge factors.
``tests/test_pricing.py`` re-runs it and compares.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from pricing import GPU, read_catalog
from pricing.throughput import Peak, work_peak

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = REPO_ROOT / "pricing" / "data"
# The team's reference table of measured throughput (every row sourced),
# kept here so the catalog build is reproducible from the repository alone.
DEFAULT_PATH = REPO_ROOT / "tools" / "reference" / "throughput.csv"
REFERENCE_GPU = "v100-sxm2-16gb"
PRECISIONS = ("fp32", "fp16")
DECIMALS = 4

# Benchmark GPU name (after _canonical()) -> catalog GPU id. A GPU not listed is reported with an
# empty id and does not enter the catalog; every GPU of the reference table is listed today.
# Lambda's "RTX 5000/6000/8000" are the Turing Quadro cards (their 2021 table drops "Quadro").
NAME_TO_ID: dict[str, str] = {
    "V100 16GB": "v100-sxm2-16gb",
    "V100 32GB": "v100-sxm2-32gb",
    "GTX 1080 Ti": "gtx-1080-ti",
    "Titan Xp": "titan-xp",
    "RTX 2080": "rtx-2080",
    "RTX 2080 Ti": "rtx-2080-ti",
    "Titan RTX": "titan-rtx",
    "RTX 3080": "rtx-3080-10gb",
    "RTX 3090": "rtx-3090",
    "RTX 4090": "rtx-4090",
    "A10": "a10",
    "A100 40GB PCIe": "a100-pcie-40gb",
    "A100 40GB SXM4": "a100-sxm4-40gb",
    "A100 80GB SXM4": "a100-sxm4-80gb",
    "H100 80GB PCIe": "h100-pcie-80gb",
    "H100 80GB SXM5": "h100-sxm5-80gb",
    "H200 141GB SXM": "h200-sxm-141gb",
    "B200 192GB SXM5": "b200",
    "A100 80GB PCIe": "a100-pcie-80gb",
    "GH200 96GB": "gh200-96gb",
    "RTX 3070": "rtx-3070",
    "RTX 5000": "quadro-rtx-5000",
    "RTX 6000": "quadro-rtx-6000",
    "RTX 8000": "quadro-rtx-8000",
    "RTX 6000 Ada": "rtx-6000-ada",
    "RTX A6000": "rtx-a6000",
    "Titan V": "titan-v",
    "RTX 5090": "rtx-5090",
    "MI300X": "mi300x",
}

# Catalog GPUs without a measurement of their own at a precision, and the measured GPU of the
# same kind each is estimated from (module docstring: anchored estimates), with why that one.
ANCHORS: dict[str, tuple[str, str]] = {
    "a10g": ("a10", "same GA102 die, 24 GB, 600 GB/s and 150 W as the A10, lower tensor peaks"),
    "l40s": ("rtx-6000-ada", "same AD102 die and 48 GB as the RTX 6000 Ada; 864 GB/s, not 960"),
    "l4": ("rtx-6000-ada", "Ada (AD104); its 300 GB/s memory slows memory-bound training more"),
    "mi300x": ("h100-sxm5-80gb", "its fp16 figure against the H100 (MLPerf) carried to fp32"),
    "v100-pcie-16gb": ("v100-sxm2-16gb", "the same GV100 in a PCIe card at lower clocks"),
    "t4": ("quadro-rtx-5000", "the same TU104 die at 70 W"),
    "rtx-2060": ("rtx-2080-ti", "Turing GeForce (TU106)"),
    "rtx-2070": ("rtx-2080-ti", "Turing GeForce (TU106)"),
    "gtx-1080": ("gtx-1080-ti", "Pascal GeForce, no tensor cores"),
    "gtx-1070": ("gtx-1080-ti", "Pascal GeForce, no tensor cores"),
    "gtx-1060-6gb": ("gtx-1080-ti", "Pascal GeForce, no tensor cores"),
    "gtx-1050": ("gtx-1080-ti", "Pascal GeForce, no tensor cores"),
    "p100-pcie-16gb": ("gtx-1080-ti", "Pascal (GP100); its double-rate FP16 on CUDA cores unused"),
    "gtx-titan-x-maxwell": ("gtx-1080-ti", "Maxwell, no tensor cores: the nearest measured kind"),
    "gtx-980-ti": ("gtx-1080-ti", "Maxwell, no tensor cores: the nearest measured kind"),
    "gtx-980": ("gtx-1080-ti", "Maxwell, no tensor cores: the nearest measured kind"),
    "gtx-970": ("gtx-1080-ti", "Maxwell, no tensor cores: the nearest measured kind"),
    "gtx-960": ("gtx-1080-ti", "Maxwell, no tensor cores: the nearest measured kind"),
    "tesla-k80": ("gtx-1080-ti", "Kepler, no tensor cores: the nearest measured kind"),
    "radeon-pro-v520": ("gtx-1080-ti", "AMD RDNA, no matrix cores, other software: rough"),
}

TIER_LABEL = {
    1: "pytorch-16gb-direct",
    2: "pytorch-32gb-bridged",
    3: "tensorflow-bridged",
    4: "tensorflow-direct",
    5: "other-suite-bridged",
}
#: The basis of an anchored estimate (ANCHORS).
ANCHORED = "anchored-estimate"


@dataclass(frozen=True)
class Row:
    """One usable row of the reference table."""

    name: str  # canonical GPU name
    raw_name: str
    precision: str  # fp32 | fp16
    value: float  # [-] relative to the row's own baseline
    baseline: str  # "16gb" | "32gb" | the canonical name of a GPU measured in the same run
    framework: str  # "pytorch" | "tensorflow" | "other"
    instance: bool  # a "(Lambda Cloud instance)" row
    data_date: str
    source: str
    estimated: bool = False  # the precision of the run is not the row's (see its notes)

    @property
    def tier(self) -> int:
        """Priority tier [1 = best]."""
        if self.baseline not in ("16gb", "32gb"):
            return 5
        if self.framework == "pytorch":
            return 1 if self.baseline == "16gb" else 2
        return 3 if self.baseline == "32gb" else 4


@dataclass(frozen=True)
class Reconciled:
    """One reconciled figure, normalised to v100-sxm2-16gb."""

    gpu_id: str  # catalog id or "" when the GPU is not in the catalog
    name: str
    precision: str
    value: float  # [-] throughput relative to v100-sxm2-16gb
    raw_value: float  # [-] as printed in the reference file
    factor: float  # [-] multiplier applied (1, the bridge factor, or an anchor's figure)
    basis: str
    source: str
    estimated: bool = False
    note: str = ""


def _canonical(raw: str) -> tuple[str, bool]:
    """Return (canonical GPU name, is-cloud-instance) for a benchmark GPU label."""
    name = raw.strip()
    instance = "(Lambda Cloud instance)" in name
    name = name.replace("(Lambda Cloud instance)", "").strip()
    if name.startswith("Quadro "):
        name = name[len("Quadro ") :]
    name = name.replace("2080Ti", "2080 Ti").replace("1080Ti", "1080 Ti")
    return " ".join(name.split()), instance


def _precision(text: str) -> str | None:
    text = text.strip().lower()
    for p in PRECISIONS:
        if text.startswith(p):
            return p
    return None  # e.g. Dettmers' "mixed (NLP)" rows: not a catalog precision


def _baseline(text: str) -> str | None:
    """``"16gb"`` or ``"32gb"`` for a V100 baseline, the canonical name of another GPU of the
    table measured in the same run (``"RTX 4090 (same run)"``), else None."""
    text = text.strip()
    if text.startswith("V100 16GB"):
        return "16gb"
    if text.startswith("V100 32GB"):
        return "32gb"
    name, _ = _canonical(text.split("(")[0])
    return name if name in NAME_TO_ID else None  # "V100" without memory size: unusable


def _framework(text: str, baseline: str) -> str:
    if baseline not in ("16gb", "32gb"):
        return "other"
    return "pytorch" if "pytorch" in text.lower() else "tensorflow"


def read_rows(path: Path) -> list[Row]:
    """Read the reference throughput table, keeping rows with a known precision and baseline."""
    rows: list[Row] = []
    with open(path, newline="", encoding="utf-8") as fh:
        for rec in csv.DictReader(fh):
            precision = _precision(rec["precision"])
            baseline = _baseline(rec["baseline"])
            if precision is None or baseline is None or not rec["rel_to_v100_geomean"].strip():
                continue
            name, instance = _canonical(rec["gpu"])
            rows.append(
                Row(
                    name=name,
                    raw_name=rec["gpu"].strip(),
                    precision=precision,
                    value=float(rec["rel_to_v100_geomean"]),
                    baseline=baseline,
                    framework=_framework(rec["framework"], baseline),
                    instance=instance,
                    data_date=rec["data_date"].strip(),
                    source=rec["source"].strip(),
                    estimated="estimated" in rec["precision"].lower(),
                )
            )
    return rows


def _date_key(text: str) -> int:
    """Year*100+month of the first ``YYYY[-MM]`` in a free-text date; 0 when absent."""
    m = re.search(r"(\d{4})(?:-(\d{2}))?", text)
    return int(m.group(1)) * 100 + int(m.group(2) or 0) if m else 0


def _pick(candidates: list[Row]) -> Row:
    """Best row among candidates: lowest tier, then owned hardware, then newest date."""
    return min(candidates, key=lambda r: (r.tier, r.instance, -_date_key(r.data_date)))


def _pytorch_value(rows: list[Row], name: str, precision: str, baseline: str) -> Row | None:
    cands = [
        r
        for r in rows
        if r.name == name
        and r.precision == precision
        and r.baseline == baseline
        and r.framework == "pytorch"
    ]
    return _pick(cands) if cands else None


def bridge_factors(rows: list[Row]) -> dict[str, tuple[float, list[tuple[str, float]]]]:
    """Bridge factor per precision and the (GPU, ratio) pairs that fed it.

    Ratio = value on the 16 GB-cloud baseline / value on the 32 GB-server baseline, for every
    non-baseline GPU benchmarked with PyTorch under both; the factor is their geometric mean.
    """
    out: dict[str, tuple[float, list[tuple[str, float]]]] = {}
    for precision in PRECISIONS:
        names = sorted(
            {r.name for r in rows if r.precision == precision} - {"V100 16GB", "V100 32GB"}
        )
        pairs: list[tuple[str, float]] = []
        for name in names:
            v16 = _pytorch_value(rows, name, precision, "16gb")
            v32 = _pytorch_value(rows, name, precision, "32gb")
            if v16 is not None and v32 is not None:
                pairs.append((name, v16.value / v32.value))
        if not pairs:
            raise ValueError(f"no GPU benchmarked under both baselines for {precision}")
        factor = math.exp(sum(math.log(r) for _, r in pairs) / len(pairs))
        out[precision] = (factor, pairs)
    return out


def _measured(rows: list[Row]) -> list[Reconciled]:
    """One figure per (GPU, precision) of the table, best source first: V100 baselines
    (bridged where 32 GB), then rows against another GPU of the table (times its figure)."""
    bridges = {p: f for p, (f, _) in bridge_factors(rows).items()}
    best = {}
    for r in rows:
        key = (r.name, r.precision)
        best[key] = _pick([best[key], r]) if key in best else r
    figures: dict[tuple[str, str], Reconciled] = {}
    for (name, precision), row in sorted(best.items(), key=lambda kv: (kv[1].tier, kv[0])):
        if row.tier == 5:
            anchor = figures[(row.baseline, precision)]
            factor, note = anchor.value, f"{row.raw_name} / {row.baseline} in one run"
        else:
            factor = bridges[precision] if row.baseline == "32gb" else 1.0
            note = f"{row.raw_name}; baseline V100 {row.baseline.upper()}"
        figures[(name, precision)] = Reconciled(
            gpu_id=NAME_TO_ID.get(name, ""),
            name=name,
            precision=precision,
            value=round(row.value * factor, DECIMALS),
            raw_value=row.value,
            factor=factor,
            basis=TIER_LABEL[row.tier],
            source=row.source,
            estimated=row.estimated,
            note=f"{note}; {row.data_date}",
        )
    return sorted(figures.values(), key=lambda r: (r.name, PRECISIONS.index(r.precision)))


def _alike(*pairs: tuple[GPU, str]) -> list[Peak]:
    """The work peaks of each (GPU, precision), which must all be of one kind."""
    peaks = [work_peak(gpu, precision) for gpu, precision in pairs]
    if any(p is None for p in peaks) or len({p.kind for p in peaks}) != 1:
        raise ValueError(f"unlike peaks, not comparable: {pairs} -> {peaks}")
    return peaks


def _scale(gpu: GPU, donor: GPU, precision: str, nearest: str | None) -> float:
    """How much more ``precision`` work ``gpu`` does than ``donor`` by like-for-like peaks [-]:
    the ratio of their work peaks; with ``nearest`` (a precision ``gpu`` has a figure at), the
    ratio of their own peak ratios precision/nearest."""
    if nearest is None:
        mine, theirs = _alike((gpu, precision), (donor, precision))
        return mine.value / theirs.value
    gt, gs, dt, ds = _alike((gpu, precision), (gpu, nearest), (donor, precision), (donor, nearest))
    return (gt.value / gs.value) / (dt.value / ds.value)


def _anchored(measured: list[Reconciled], gpus: dict[str, GPU]) -> list[Reconciled]:
    """The estimate of every ANCHORS GPU at each precision it has no figure at: the donor's
    figure times their like-for-like peak ratio; or, where the GPU has a figure at the other
    precision, that figure times the donor's own ratio between the two precisions and the
    ratio of their peak ratios."""
    by_id = {(r.gpu_id, r.precision): r for r in measured if r.gpu_id}
    out: list[Reconciled] = []
    for gpu_id, (donor, why) in ANCHORS.items():
        for precision in PRECISIONS:
            if (gpu_id, precision) in by_id:
                continue
            other = next((p for p in PRECISIONS if (gpu_id, p) in by_id), None)
            d = by_id[(donor, precision)]
            if other is None:
                scale = _scale(gpus[gpu_id], gpus[donor], precision, None)
                how = f"{donor} {precision} {d.value:g} x peak ratio {scale:.4f}"
                factor, raw = scale, d.value
            else:
                own = by_id[(gpu_id, other)]
                scale = _scale(gpus[gpu_id], gpus[donor], precision, other)
                cross = d.value / by_id[(donor, other)].value
                how = (
                    f"its {other} {own.value:g} x {donor} {precision}/{other} {cross:.4f} x "
                    f"peak-ratio ratio {scale:.4f}"
                )
                factor, raw = cross * scale, own.value
            out.append(
                Reconciled(
                    gpu_id=gpu_id,
                    name=gpu_id,
                    precision=precision,
                    value=round(raw * factor, DECIMALS),
                    raw_value=raw,
                    factor=factor,
                    basis=ANCHORED,
                    source=d.source,
                    estimated=True,
                    note=f"estimated: {how} ({why}); not measured on this GPU",
                )
            )
    return out


def reconcile(rows: list[Row], gpus: dict[str, GPU] | None = None) -> list[Reconciled]:
    """One figure per (GPU, precision), normalised to v100-sxm2-16gb: the measured ones, then
    the anchored estimates (peaks from ``gpus``, default the shipped catalog's)."""
    measured = _measured(rows)
    return measured + _anchored(measured, gpus or dict(read_catalog(DATA_DIR).gpus))


def catalog_figures(rows: list[Row]) -> dict[str, dict[str, float]]:
    """Catalog id -> {precision: value} for every GPU that maps into the catalog."""
    out: dict[str, dict[str, float]] = {}
    for rec in reconcile(rows):
        if rec.gpu_id:
            out.setdefault(rec.gpu_id, {})[rec.precision] = rec.value
    return out


def measured_source(records: list[Reconciled]) -> str:
    """The ``measured_source`` cell of one GPU's figures, as ``gpus.csv`` carries it."""
    parts = [
        f"{r.precision} {r.value:.{DECIMALS}f} = {r.raw_value:g} x {r.factor:.{DECIMALS}f} "
        f"[{r.basis}; {r.note}] {r.source}"
        for r in sorted(records, key=lambda r: PRECISIONS.index(r.precision))
    ]
    return f"tools/build_throughput.py (relative to {REFERENCE_GPU}): " + " | ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--csv", action="store_true", help="print the table as CSV only")
    args = parser.parse_args(argv)
    rows = read_rows(args.path)
    bridges = bridge_factors(rows)
    table = reconcile(rows)
    out = csv.writer(sys.stdout, lineterminator="\n")
    if not args.csv:
        print(f"# reference GPU: {REFERENCE_GPU}; input: {args.path}")
        for precision, (factor, pairs) in bridges.items():
            detail = ", ".join(f"{n} {r:.4f}" for n, r in pairs)
            print(f"# bridge {precision} = {factor:.{DECIMALS}f} (n={len(pairs)}: {detail})")
    out.writerow(
        [
            "gpu_id",
            "name",
            "precision",
            "value",
            "raw_value",
            "factor",
            "basis",
            "estimated",
            "note",
        ]
    )
    for r in table:
        out.writerow(
            [
                r.gpu_id,
                r.name,
                r.precision,
                f"{r.value:.{DECIMALS}f}",
                f"{r.raw_value:g}",
                f"{r.factor:.{DECIMALS}f}",
                r.basis,
                "true" if r.estimated else "false",
                r.note,
            ]
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
