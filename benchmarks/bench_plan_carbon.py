"""Fleet-plan carbon cost: the CPU time and peak memory of one plan with and without carbon.

Runs the shipped plan worked example (``scenarios/examples/plan-worked-example.yaml``) at
200,000 draws x 13 servers x 3 reservations x 36 months, Latin hypercube, with uncertain demand
growth and owned PUE, once and prints the CPU seconds of :func:`costmodel.fleet.simulate_plan`
and of :func:`costmodel.fleet.summarise_plan` and the process's peak memory [MiB]. ``--carbon``
counts carbon: an owned grid drawn uniform 200 to 500 g/kWh and a carbon price of 100 USD/t.
It also prints the bytes of the result's JSON. One run a process, so that two of them (with and
without ``--carbon``, or this checkout against another) can be timed in turn from outside and
the peak memory is the run's own; ``--samples``, ``--servers`` and ``--months`` change the shape
(what ``api/limits.py`` counts carbon at was measured so).

    python benchmarks/bench_plan_carbon.py
    python benchmarks/bench_plan_carbon.py --carbon
    python benchmarks/bench_plan_carbon.py --carbon --samples 200 --servers 2000 --months 12
"""

from __future__ import annotations

import argparse
import copy
import json
import resource
import time
from pathlib import Path

import yaml

import scenarios
from costmodel.fleet import simulate_plan, summarise_plan
from costmodel.present import to_dict

PLAN = Path(__file__).resolve().parents[1] / "scenarios" / "examples" / "plan-worked-example.yaml"


def _plan(carbon: bool, samples: int, servers: int, months: int) -> scenarios.Plan:
    doc = copy.deepcopy(yaml.safe_load(PLAN.read_text("utf-8")))
    doc["simulation"] = {"samples": samples, "seed": 1, "method": "lhs"}
    doc["horizon_months"] = months
    doc["own"]["servers"] = {"min": 0, "max": servers - 1}
    doc["own"]["pue"] = {"dist": "uniform", "low": 1.1, "high": 1.6}
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.0, "high": 1.5}
    if carbon:
        doc["own"]["grid"] = {"dist": "uniform", "low": 200, "high": 500}
        doc["carbon"] = {"usd_per_tonne": 100}
    return scenarios.load_mapping(doc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--carbon", action="store_true", help="count carbon, priced")
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--servers", type=int, default=13, help="server counts 0 .. N - 1")
    parser.add_argument("--months", type=int, default=36)
    args = parser.parse_args()
    inputs = _plan(args.carbon, args.samples, args.servers, args.months).inputs
    start = time.process_time()
    sim = simulate_plan(inputs)
    simulated = time.process_time()
    result = summarise_plan(sim)
    done = time.process_time()
    del sim
    size = len(json.dumps(to_dict(result)))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"carbon={args.carbon}: simulate {simulated - start:.3f} s, "
        f"summarise {done - simulated:.3f} s, peak {peak:.0f} MiB, JSON {size:,} bytes"
    )


if __name__ == "__main__":
    main()
