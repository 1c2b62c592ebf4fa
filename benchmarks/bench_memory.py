"""The peak memory of a job against the count of ``api.memory``, over a grid of shapes.

Each shape runs as a job does, ``scenarios.executor`` evaluating the document and writing its
JSON result, in a fresh process; the process's peak resident memory is printed beside the bytes
``api.memory`` counts for it before it runs, and their ratio.

    python benchmarks/bench_memory.py            # about a minute
    python benchmarks/bench_memory.py --quick    # four shapes
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages

_CHILD = r"""
import json, resource, sys, yaml
from scenarios.executor import Job, _execute
from scenarios.scenario import load_document
kind, n, a, b, h = sys.argv[1], *map(int, sys.argv[2:6])
if kind.startswith("scenario"):
    name = "inference-8b-rtx6000ada-vs-api" if "+api" in kind else "lab-4x-rtx2080ti-vs-p3-8xlarge"
    doc = yaml.safe_load(open(f"scenarios/examples/{name}.yaml"))
    doc.update(horizon_months=h, report_utilisation=None,
               utilisation=[round(i / max(1, a - 1), 6) for i in range(a)] if a > 1 else [0.5])
    if "+price" in kind:
        doc["carbon"] = {"usd_per_tonne": {"dist": "triangular", "low": 50, "mode": 100,
                                           "high": 200}}
else:
    doc = yaml.safe_load(open("scenarios/examples/plan-worked-example.yaml"))
    doc["own"]["servers"] = {"min": 0, "max": a - 1}
    doc["reserve"] = None if b == 1 else {**doc["reserve"], "instances": {"min": 0, "max": b - 1}}
    doc["horizon_months"] = h
doc = json.loads(json.dumps(doc))
job = Job(load_document(doc, "<r>", {}, None).key(n, 1), (doc, "<r>", {}), None, n, 1,
          render=("json",))
_execute(job)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""

#: (kind, draws, levels or servers, reservations, months); a scenario "+api" has an API side
#: (the inference example's), "+price" an uncertain carbon price.
SHAPES = [
    ("scenario", 1, 1, 1, 12),
    ("scenario", 25_000, 101, 1, 240),
    ("scenario", 100_000, 11, 1, 60),
    ("scenario", 200_000, 1, 1, 12),
    ("scenario", 200_000, 101, 1, 240),
    ("scenario+api", 200_000, 101, 1, 12),
    ("scenario+api", 200_000, 101, 1, 240),
    ("scenario+price", 200_000, 1, 1, 240),
    ("scenario+price", 50_000, 101, 1, 240),
    ("scenario+api+price", 50_000, 101, 1, 240),
    ("scenario+api+price", 200_000, 101, 1, 240),
    ("plan", 100_000, 1, 1, 12),
    ("plan", 200_000, 11, 1, 240),
    ("plan", 100_000, 11, 5, 120),
    ("plan", 20_000, 21, 21, 36),
    ("plan", 1_000, 101, 101, 240),
    ("plan", 3_000, 101, 101, 12),
    ("plan", 4_000, 101, 101, 12),
    ("plan", 10_000, 101, 21, 48),
    ("plan", 1, 1001, 101, 12),
]
QUICK = [SHAPES[0], SHAPES[4], SHAPES[10], SHAPES[-1]]


def counted(kind: str, n: int, a: int, b: int, h: int) -> int:
    """The bytes ``api.memory`` counts for a shape."""
    from api.memory import plan_memory, scenario_memory

    if kind.startswith("scenario"):
        return scenario_memory(n, a, h, sides="+api" in kind, priced="+price" in kind)
    return plan_memory(n, a * b, h)


def measured(shape: tuple[str, int, int, int, int]) -> int:
    """The peak resident memory of a process running the shape as a job [byte]."""
    args = [sys.executable, "-c", _CHILD, *map(str, shape)]
    out = subprocess.run(args, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return int(out.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="four shapes only")
    shapes = QUICK if parser.parse_args().quick else SHAPES
    mib = 2**20
    print(f"{'shape (kind, draws, a, b, months)':<46} {'peak MiB':>9} {'counted':>9} {'ratio':>6}")
    for shape in shapes:
        peak, count = measured(shape), counted(*shape)
        print(f"{str(shape):<46} {peak / mib:>9.0f} {count / mib:>9.0f} {count / peak:>6.2f}")


if __name__ == "__main__":
    main()
