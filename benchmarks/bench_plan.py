"""Fleet-plan engine speed: the CPU time of simulating and summarising a plan.

Runs the shipped plan worked example (``scenarios/examples/plan-worked-example.yaml``) with
uncertain demand growth (uniform 0 to 150 %/year) and owned power use (PUE uniform 1.1 to 1.6),
Latin hypercube, at a few shapes of draws x servers x reservations x months, and prints the CPU
seconds of :func:`costmodel.fleet.simulate_plan` and of :func:`costmodel.fleet.summarise_plan`
(median of ``--repeat`` runs) and the cost of one draw x candidate x month [ns].
``--peak-to-mean K`` plans for a daily peak K times the mean load (default: a flat load).

    python benchmarks/bench_plan.py
    python benchmarks/bench_plan.py --peak-to-mean 1.6 --repeat 5
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from pathlib import Path

import yaml

import scenarios
from costmodel.fleet import simulate_plan, summarise_plan

PLAN = Path(__file__).resolve().parents[1] / "scenarios" / "examples" / "plan-worked-example.yaml"
#: (draws, servers, reservations, months)
SHAPES = ((200_000, 7, 3, 36), (20_000, 101, 1, 12), (2_000, 201, 1, 240))


def _plan(shape: tuple[int, int, int, int], peak_to_mean: float | None) -> scenarios.Plan:
    n, servers, reservations, months = shape
    doc = copy.deepcopy(yaml.safe_load(PLAN.read_text("utf-8")))
    doc["simulation"] = {"samples": n, "seed": 1, "method": "lhs"}
    doc["horizon_months"] = months
    doc["own"]["servers"] = {"min": 0, "max": servers - 1}
    doc["own"]["pue"] = {"dist": "uniform", "low": 1.1, "high": 1.6}
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.0, "high": 1.5}
    if peak_to_mean is not None:
        doc["demand"]["peak_to_mean"] = peak_to_mean
    if reservations == 1:
        doc["reserve"] = None
    else:
        doc["reserve"]["instances"] = {"min": 0, "max": reservations - 1}
    return scenarios.load_mapping(doc)


def _cpu(fn, *args):
    start = time.process_time()
    out = fn(*args)
    return time.process_time() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peak-to-mean", type=float, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("shape (draws, servers, reservations, months): simulate [s], summarise [s],")
    print("simulate per draw x candidate x month [ns]")
    for shape in SHAPES:
        inputs = _plan(shape, args.peak_to_mean).inputs
        sim_s, sum_s = [], []
        for _ in range(args.repeat):
            seconds, sim = _cpu(simulate_plan, inputs)
            sim_s.append(seconds)
            sum_s.append(_cpu(summarise_plan, sim)[0])
            del sim
        n, servers, reservations, months = shape
        per = statistics.median(sim_s) / (n * servers * reservations * months) * 1e9
        print(
            f"  {str(shape):24s} {statistics.median(sim_s):7.3f} {statistics.median(sum_s):7.3f}"
            f" {per:7.2f}"
        )


if __name__ == "__main__":
    main()
