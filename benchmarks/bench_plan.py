"""Fleet-plan engine speed: the CPU time of simulating and summarising a plan.

Runs the shipped plan worked example (``scenarios/examples/plan-worked-example.yaml``) with
uncertain demand growth (uniform 0 to 150 %/year) and owned power use (PUE uniform 1.1 to 1.6),
Latin hypercube, at a few shapes of draws x servers x reservations x months, and prints the CPU
seconds of :func:`costmodel.fleet.simulate_plan` and of :func:`costmodel.fleet.summarise_plan`
(median of ``--repeat`` runs) and the cost of one draw x candidate x month [ns].
``--peak-to-mean K`` plans for a daily peak K times the mean load (default: a flat load);
``--carbon`` counts carbon, with an owned grid drawn uniform 200 to 500 g/kWh and a carbon
price of 100 USD/t; ``--objective`` picks what the best plan minimises (default the example's
``mean``; ``p90`` and ``cvar95`` add the bootstrap of the precision of the choice to the
summary). ``--staged`` adds a later purchase (``own.add``: 1 to 4 servers when the work
passes 80 % or 100 % of the first servers' capacity, a month's lead time, the price falling 0
to 30 %/year) and runs the shape of issue 31 unless ``--shape`` is given, 10,000 draws x 7
servers x 3 reservations x 48 months: 21 plans that add nothing and 168 that add, whose whole
``costmodel plan`` command should take under 2 s of CPU (``python -m cli plan`` run in this
checkout, from start-up to its table; also with one BLAS thread, as a busy machine's cores
may leave it). ``--shape`` runs one shape alone and also prints the
process's peak memory [MiB] and the bytes of the result's JSON, so that two processes (with and
without ``--carbon``, or this checkout against another) can be timed in turn from outside,
each peak its own (what ``api/limits.py`` counts carbon at was measured so).

    python benchmarks/bench_plan.py
    python benchmarks/bench_plan.py --peak-to-mean 1.6 --repeat 5
    python benchmarks/bench_plan.py --carbon --shape 200000,13,3,36 --repeat 1
    python benchmarks/bench_plan.py --objective cvar95
    python benchmarks/bench_plan.py --staged
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

import scenarios
from costmodel.fleet import simulate_plan, summarise_plan
from present import to_dict

PLAN = Path(__file__).resolve().parents[1] / "scenarios" / "examples" / "plan-worked-example.yaml"
#: (draws, servers, reservations, months)
SHAPES = ((200_000, 7, 3, 36), (20_000, 101, 1, 12), (2_000, 201, 1, 240))
#: The staged plan of issue 31: 7 x 3 first purchases x 4 added counts x 2 triggers.
STAGED_SHAPES = ((10_000, 7, 3, 48),)
#: The later purchase of ``--staged``.
ADD = {
    "servers": {"min": 0, "max": 4},
    "when_demand_above": [0.8, 1.0],
    "lead_time_months": 1,
    "price_annual_change": {"dist": "uniform", "low": -0.3, "high": 0.0},
}


def _doc(
    shape: tuple[int, int, int, int],
    peak_to_mean: float | None,
    carbon: bool,
    objective: str,
    staged: bool = False,
) -> dict:
    n, servers, reservations, months = shape
    doc = copy.deepcopy(yaml.safe_load(PLAN.read_text("utf-8")))
    doc["simulation"] = {"samples": n, "seed": 1, "method": "lhs"}
    doc["objective"] = objective
    doc["horizon_months"] = months
    doc["own"]["servers"] = {"min": 0, "max": servers - 1}
    doc["own"]["pue"] = {"dist": "uniform", "low": 1.1, "high": 1.6}
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.0, "high": 1.5}
    if peak_to_mean is not None:
        doc["demand"]["peak_to_mean"] = peak_to_mean
    if staged:
        doc["own"]["add"] = copy.deepcopy(ADD)
    if carbon:
        doc["own"]["grid"] = {"dist": "uniform", "low": 200, "high": 500}
        doc["carbon"] = {"usd_per_tonne": 100}
    if reservations == 1:
        doc["reserve"] = None
    else:
        doc["reserve"]["instances"] = {"min": 0, "max": reservations - 1}
    return doc


def _command(doc: dict, threads: str | None = None) -> float:
    """The CPU seconds [s] of the whole ``costmodel plan`` command on ``doc`` (its table),
    from start-up to the printed table, in a process of its own; ``threads`` caps the BLAS
    threads (``OPENBLAS_NUM_THREADS``), ``None`` leaves them as they are."""
    env = dict(os.environ) if threads is None else {**os.environ, "OPENBLAS_NUM_THREADS": threads}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "plan.yaml"
        path.write_text(yaml.safe_dump(doc), "utf-8")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "-m", "cli", "plan", str(path)],
            check=True,
            capture_output=True,
            cwd=PLAN.parents[2],
            env=env,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _cpu(fn, *args):
    start = time.process_time()
    out = fn(*args)
    return time.process_time() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peak-to-mean", type=float, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--carbon", action="store_true", help="count carbon, priced")
    parser.add_argument("--shape", help="one shape alone: DRAWS,SERVERS,RESERVATIONS,MONTHS")
    parser.add_argument("--objective", choices=("mean", "p90", "cvar95"), default="mean")
    parser.add_argument("--staged", action="store_true", help="add servers later (own.add)")
    args = parser.parse_args()
    shapes = [tuple(int(x) for x in args.shape.split(","))] if args.shape else SHAPES
    if args.staged and not args.shape:
        shapes = STAGED_SHAPES
    print(
        f"carbon={args.carbon}, objective={args.objective}, staged={args.staged}; shape (draws,"
        " servers, reservations, months): simulate [s],"
    )
    print("summarise [s], simulate per draw x candidate x month [ns]")
    for shape in shapes:
        doc = _doc(shape, args.peak_to_mean, args.carbon, args.objective, args.staged)
        inputs = scenarios.load_mapping(copy.deepcopy(doc)).inputs
        sim_s, sum_s = [], []
        for _ in range(args.repeat):
            seconds, sim = _cpu(simulate_plan, inputs)
            sim_s.append(seconds)
            seconds, result = _cpu(summarise_plan, sim)
            sum_s.append(seconds)
            del sim
        n, servers, reservations, months = shape
        per = statistics.median(sim_s) / (n * inputs.candidates * months) * 1e9
        print(
            f"  {str(shape):24s} {statistics.median(sim_s):7.3f} {statistics.median(sum_s):7.3f}"
            f" {per:7.2f}"
        )
        if args.staged:
            whole = statistics.median(_command(doc) for _ in range(args.repeat))
            alone = statistics.median(_command(doc, "1") for _ in range(args.repeat))
            print(
                f"  {inputs.candidates} candidates; the whole plan command {whole:.3f} s"
                f" ({alone:.3f} s with one BLAS thread)"
            )
    if args.shape:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        size = len(json.dumps(to_dict(result)))
        print(f"peak {peak:.0f} MiB, JSON {size:,} bytes")


if __name__ == "__main__":
    main()
