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
baseline (bridged) > TensorFlow rows (bridged when on a 32 GB baseline). Within a tier a row for
owned hardware beats a "(Lambda Cloud instance)" row, and newer data beats older.

The committed ``pricing/data/gpus.csv`` carries this script's output (rounded to 4 decimals) in
``measured_fp32``/``measured_fp16``; ``pricing/data/catalog.json`` carries the bridge factors.
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

REPO_ROOT = Path(__file__).resolve().parents[1]
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
}

# Catalog GPUs that borrow another GPU's measurement, scaled by the ratio of their own peaks to the
# donor's at each precision [-] (the peaks of pricing/data/gpus.csv: A10G fp32 31.5 and estimated
# fp16 tensor 70 against the A10's 31.2 and 125); the result is marked estimated.
BORROWED: dict[str, tuple[str, dict[str, float], str]] = {
    "a10g": (
        "a10",
        {"fp32": 31.5 / 31.2, "fp16": 70 / 125},
        "estimated: A10 measurement x A10G/A10 peak ratio (fp32 31.5/31.2, fp16 70/125); same "
        "GA102 die, 24 GB, 600 GB/s, 150 W, but a lower tensor peak; not measured on an A10G",
    ),
}

TIER_LABEL = {
    1: "pytorch-16gb-direct",
    2: "pytorch-32gb-bridged",
    3: "tensorflow-bridged",
    4: "tensorflow-direct",
}


@dataclass(frozen=True)
class Row:
    """One usable row of the reference table."""

    name: str  # canonical GPU name
    raw_name: str
    precision: str  # fp32 | fp16
    value: float  # [-] relative to the row's own baseline
    baseline: str  # "16gb" | "32gb"
    framework: str  # "pytorch" | "tensorflow"
    instance: bool  # a "(Lambda Cloud instance)" row
    data_date: str
    source: str

    @property
    def tier(self) -> int:
        """Priority tier [1 = best]."""
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
    factor: float  # [-] multiplier applied (1 or the bridge factor)
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
    text = text.strip()
    if text.startswith("V100 16GB"):
        return "16gb"
    if text.startswith("V100 32GB"):
        return "32gb"
    return None  # "V100" without memory size (Dettmers' debiased data): unusable


def read_rows(path: Path) -> list[Row]:
    """Read the reference throughput table, keeping rows with a known precision and baseline."""
    rows: list[Row] = []
    with open(path, newline="", encoding="utf-8") as fh:
        for rec in csv.DictReader(fh):
            precision = _precision(rec["precision"])
            baseline = _baseline(rec["baseline"])
            framework = "pytorch" if "pytorch" in rec["framework"].lower() else "tensorflow"
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
                    framework=framework,
                    instance=instance,
                    data_date=rec["data_date"].strip(),
                    source=rec["source"].strip(),
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


def reconcile(rows: list[Row]) -> list[Reconciled]:
    """One figure per (GPU, precision), normalised to v100-sxm2-16gb, best source first."""
    bridges = {p: f for p, (f, _) in bridge_factors(rows).items()}
    result: list[Reconciled] = []
    names = sorted({r.name for r in rows})
    by_id: dict[tuple[str, str], Reconciled] = {}
    for name in names:
        for precision in PRECISIONS:
            cands = [r for r in rows if r.name == name and r.precision == precision]
            if not cands:
                continue
            best = _pick(cands)
            factor = bridges[precision] if best.baseline == "32gb" else 1.0
            rec = Reconciled(
                gpu_id=NAME_TO_ID.get(name, ""),
                name=name,
                precision=precision,
                value=round(best.value * factor, DECIMALS),
                raw_value=best.value,
                factor=factor,
                basis=TIER_LABEL[best.tier],
                source=best.source,
                note=f"{best.raw_name}; baseline V100 {best.baseline.upper()}; {best.data_date}",
            )
            result.append(rec)
            if rec.gpu_id:
                by_id[(rec.gpu_id, precision)] = rec
    for gpu_id, (donor, scale, note) in BORROWED.items():
        for precision in PRECISIONS:
            src = by_id.get((donor, precision))
            if src is not None:
                result.append(
                    Reconciled(
                        gpu_id=gpu_id,
                        name=gpu_id,
                        precision=precision,
                        value=round(src.value * scale[precision], DECIMALS),
                        raw_value=src.raw_value,
                        factor=src.factor * scale[precision],
                        basis=src.basis,
                        source=src.source,
                        estimated=True,
                        note=note,
                    )
                )
    return result


def catalog_figures(rows: list[Row]) -> dict[str, dict[str, float]]:
    """Catalog id -> {precision: value} for every GPU that maps into the catalog."""
    out: dict[str, dict[str, float]] = {}
    for rec in reconcile(rows):
        if rec.gpu_id:
            out.setdefault(rec.gpu_id, {})[rec.precision] = rec.value
    return out


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
