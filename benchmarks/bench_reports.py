"""What a report costs beyond its numbers: ``costmodel report`` and ``costmodel batch`` in HTML
against the same commands writing the result JSON (a script, not a timed test).

For one shipped example (``--example``, its name), runs ``costmodel report FILE -o r.html`` and
``-o r.json`` in fresh processes, in turn, ``--pairs`` times, and prints the median CPU time
[s] (user + system) of each and of their difference: what the HTML report costs beyond the
evaluation and the JSON, its charts, its imports and its template. Then runs ``costmodel
batch`` of the shipped examples (``--examples DIR``) with ``--format html`` and with
``--format json``, each into a new folder and run store, ``--batches`` times, and prints the
median CPU time of each (its worker processes included) and wall time, and their ratio.
Targets: the HTML report at most 0.5 s of CPU beyond the JSON; the HTML batch at most 1.5 times
the JSON batch.

``--vs DIR`` does the same with another checkout (B, e.g. a worktree of ``main``), each
measurement of A followed by B's, so that a machine that slows down weighs on both alike.

    python benchmarks/bench_reports.py
    python benchmarks/bench_reports.py --vs ../main --pairs 5 --batches 3
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]
REPORT_TARGET_S = 0.5  # [s] of CPU beyond the JSON
BATCH_TARGET = 1.5  # [-] HTML batch CPU / JSON batch CPU


def _timed(root: Path, args: list[str]) -> tuple[float, float]:
    """Wall and CPU time [s] of ``python -m cli ARGS`` on the checkout ``root`` (its children's
    CPU included)."""
    env = {**os.environ, "PYTHONPATH": str(root), "COSTMODEL_DB": ""}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "cli", *args],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def _report(root: Path, example: Path, fmt: str, tmp: Path) -> float:
    return _timed(root, ["report", str(example), "-o", str(tmp / f"report.{fmt}")])[1]


def _batch(root: Path, examples: Path, fmt: str, tmp: Path, run: int) -> tuple[float, float]:
    """One batch into a new folder and run store (a batch reuses what a store holds)."""
    out = Path(tempfile.mkdtemp(prefix=f"batch-{fmt}-{run}-", dir=tmp))
    db = out / "runs.sqlite3"
    args = ["batch", str(examples), "--out", str(out), "--format", fmt, "--db", str(db), "-q"]
    return _timed(root, args)


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _measure(args: argparse.Namespace, roots: list[Path], tmp: Path) -> dict[Path, dict]:
    """Every measurement of every checkout, in turn: reports first, then batches."""
    figures: dict[Path, dict[str, list[float]]] = {root: {} for root in roots}
    example = args.examples / f"{args.example}.yaml"
    for root in roots:  # warm-up: bytecode and font caches
        _report(root, example, "html", tmp)
    for _ in range(args.pairs):
        for root in roots:
            for fmt in ("html", "json"):
                figures[root].setdefault(fmt, []).append(_report(root, example, fmt, tmp))
    for run in range(args.batches):
        for root in roots:
            for fmt in ("html", "json"):
                wall, cpu = _batch(root, args.examples, fmt, tmp, run)
                figures[root].setdefault(f"batch-{fmt}", []).append(cpu)
                figures[root].setdefault(f"batch-{fmt}-wall", []).append(wall)
    return figures


def _print(root: Path, figures: dict[str, list[float]]) -> dict[str, float]:
    m = {key: _median(values) for key, values in figures.items()}
    beyond = _median([h - j for h, j in zip(figures["html"], figures["json"], strict=True)])
    ratio = m["batch-html"] / m["batch-json"]
    print(
        f"  {root}:\n"
        f"    report: HTML {m['html']:.2f} s, JSON {m['json']:.2f} s of CPU; the HTML "
        f"{beyond:.2f} s beyond (target <= {REPORT_TARGET_S})\n"
        f"    batch: HTML {m['batch-html']:.2f} s of CPU ({m['batch-html-wall']:.2f} s wall), "
        f"JSON {m['batch-json']:.2f} s ({m['batch-json-wall']:.2f} s wall); "
        f"HTML/JSON {ratio:.2f}x (target <= {BATCH_TARGET})"
    )
    return {**m, "beyond": beyond}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--example", default="lab-4x-rtx2080ti-vs-p3-8xlarge")
    parser.add_argument("--examples", type=Path, default=ROOT / "scenarios" / "examples")
    parser.add_argument("--pairs", type=int, default=5, help="report runs per format")
    parser.add_argument("--batches", type=int, default=3, help="batch runs per format")
    parser.add_argument("--vs", type=Path, help="another checkout to compare with (B)")
    args = parser.parse_args(argv)
    roots = [ROOT] + ([args.vs.resolve()] if args.vs else [])
    with tempfile.TemporaryDirectory(prefix="bench-reports-") as tmp:
        figures = _measure(args, roots, Path(tmp))
    print(
        f"costmodel report {args.example} (medians of {args.pairs}) and costmodel batch "
        f"{args.examples.name} (medians of {args.batches}), CPU incl. workers, "
        f"CPUs={os.cpu_count()}"
    )
    a, *b = (_print(root, figures[root]) for root in roots)
    if b:
        print(
            f"  B/A: report beyond the JSON {b[0]['beyond'] / a['beyond']:.2f}x, "
            f"HTML batch {b[0]['batch-html'] / a['batch-html']:.2f}x the CPU"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
