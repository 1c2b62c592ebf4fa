"""Fleet-plan engine speed: the CPU time and peak memory of evaluating a plan, paired against
another checkout.

Each shape is a shipped plan with its candidate ranges (and draws, months) changed, evaluated by
``scenarios.evaluate`` in a fresh process of its own: the CPU seconds of the evaluation, the
CPU seconds of the whole process and its peak memory [MiB] are printed (medians of
``--repeat`` runs). With ``--against CHECKOUT`` every run is paired with the same run in that
checkout (run from its folder with the same Python), A and B in turn, and the ratio B/A of each
pair's CPU is printed (its median, min and max): how many times less CPU this checkout takes.

The shapes: the shipped ``plan-h100-fleet-reserved-spot`` (10,000 draws x 48 months, P90
objective, downtime, 17 x 5 = 85 candidates) itself and widened to 51 x 11 = 561 and
101 x 21 = 2,121 candidates; the worked example with uncertain demand growth (uniform 0 to
150 %/year) and power use (PUE uniform 1.1 to 1.6) at a few shapes of draws x servers x
reservations x months, flat, under a daily peak of 1.6 (``daily``) and counting carbon at
100 USD/t with an owned grid drawn uniform 200 to 500 g/kWh (``carbon``); and a staged plan
(``plan-staged-growth``, 2,000 draws of uncertain growth), and the worked example at 10,000
draws x 7 servers x 3 reservations x 48 months adding 1 to 4 servers when the work passes 80 %
or 100 % of the first servers' capacity (21 plans that add nothing and 168 that add: its whole
process should take under 2 s of CPU).

    python benchmarks/bench_plan.py                          # this checkout, about a minute
    python benchmarks/bench_plan.py --against ../main        # paired A/B
    python benchmarks/bench_plan.py --only h100 --repeat 5
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "scenarios" / "examples"

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, ".")
import scenarios
doc = json.loads(sys.stdin.read())
plan = scenarios.load_mapping(doc)
start = time.process_time()
result = scenarios.evaluate(plan)
seconds = time.process_time() - start
use = resource.getrusage(resource.RUSAGE_SELF)
best = result.best
print(json.dumps({"s": seconds, "process_s": use.ru_utime + use.ru_stime,
                  "mib": use.ru_maxrss / 1024, "best": [best.servers, best.instances],
                  "mean": best.cost.mean}))
"""


def _doc(name: str) -> dict:
    return yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text("utf-8"))


def _h100(servers: int, reservations: int) -> dict:
    doc = _doc("plan-h100-fleet-reserved-spot")
    doc["own"]["servers"] = {"min": 0, "max": servers - 1}
    doc["reserve"]["instances"] = {"min": 0, "max": reservations - 1}
    return doc


def _worked(n: int, servers: int, reservations: int, months: int, kind: str = "flat") -> dict:
    doc = copy.deepcopy(_doc("plan-worked-example"))
    doc["simulation"] = {"samples": n, "seed": 1, "method": "lhs"}
    doc["horizon_months"] = months
    doc["own"]["servers"] = {"min": 0, "max": servers - 1}
    doc["own"]["pue"] = {"dist": "uniform", "low": 1.1, "high": 1.6}
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.0, "high": 1.5}
    if kind == "daily":
        doc["demand"]["peak_to_mean"] = 1.6
    if kind == "carbon":
        doc["own"]["grid"] = {"dist": "uniform", "low": 200, "high": 500}
        doc["carbon"] = {"usd_per_tonne": 100}
    if reservations == 1:
        doc["reserve"] = None
    else:
        doc["reserve"]["instances"] = {"min": 0, "max": reservations - 1}
    return doc


#: The later purchase of the 168-candidate staged shape.
ADD = {
    "servers": {"min": 0, "max": 4},
    "when_demand_above": [0.8, 1.0],
    "lead_time_months": 1,
    "price_annual_change": {"dist": "uniform", "low": -0.3, "high": 0.0},
}


def _adding(n: int, servers: int, reservations: int, months: int) -> dict:
    doc = _worked(n, servers, reservations, months)
    doc["own"]["add"] = copy.deepcopy(ADD)
    return doc


def _staged(n: int) -> dict:
    doc = _doc("plan-staged-growth")
    doc["simulation"] = {"samples": n, "seed": 1, "method": "lhs"}
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.2, "high": 1.0}
    return doc


#: name -> the plan document of each shape.
SHAPES = {
    "h100 85 (17 x 5)": lambda: _h100(17, 5),
    "h100 561 (51 x 11)": lambda: _h100(51, 11),
    "h100 2,121 (101 x 21)": lambda: _h100(101, 21),
    "worked 200k x 7 x 3 x 36": lambda: _worked(200_000, 7, 3, 36),
    "worked 20k x 101 x 1 x 12": lambda: _worked(20_000, 101, 1, 12),
    "worked 2k x 201 x 1 x 240": lambda: _worked(2_000, 201, 1, 240),
    "daily 20k x 17 x 5 x 48": lambda: _worked(20_000, 17, 5, 48, "daily"),
    "carbon 20k x 17 x 5 x 48": lambda: _worked(20_000, 17, 5, 48, "carbon"),
    "staged 2k x 7 x 3 (+ 3 x 2)": lambda: _staged(2_000),
    "staged 10k x 7 x 3 x 48 (+ 4 x 2)": lambda: _adding(10_000, 7, 3, 48),
}


def _run(checkout: Path, doc: dict) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD],
        cwd=checkout,
        input=json.dumps(doc),
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode:
        raise SystemExit(f"{checkout}: failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another checkout to pair each run with")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each shape (default 3)")
    parser.add_argument("--only", default="", help="the shapes whose name contains this")
    args = parser.parse_args()
    print("shape: evaluation CPU [s], whole process CPU [s], peak [MiB] (medians)", end="")
    print("; with --against, the other's, then B/A of the evaluation CPU (median, min-max)")
    for name, make in SHAPES.items():
        if args.only not in name:
            continue
        doc = make()
        mine, theirs = [], []
        for _ in range(args.repeat):
            mine.append(_run(ROOT, doc))
            if args.against:
                theirs.append(_run(args.against, doc))
        line = f"  {name:28s} A {_median(mine, 's'):6.3f} {_median(mine, 'process_s'):6.3f}"
        line += f" {_median(mine, 'mib'):5.0f}"
        if theirs:
            ratios = [b["s"] / a["s"] for a, b in zip(mine, theirs, strict=True)]
            line += f" | B {_median(theirs, 's'):6.3f} {_median(theirs, 'process_s'):6.3f}"
            line += f" {_median(theirs, 'mib'):5.0f} | B/A {statistics.median(ratios):5.2f}"
            line += f" ({min(ratios):.2f}-{max(ratios):.2f})"
            if mine[0]["best"] != theirs[0]["best"]:
                line += f"  best differs: {mine[0]['best']} vs {theirs[0]['best']}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
