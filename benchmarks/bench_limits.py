"""What requests of each shape cost the HTTP API, against the work it counts for them.

Runs each request shape in a fresh process through the Flask test client (cache off, limits
off), measures its CPU time and the process's peak memory, fits the time of each kind of
request to its pieces of work (least squares) and prints the cost of each piece in the unit of
``api.limits`` (``UNIT_S``, 3 ns of CPU). Then it prints, for
each shape, the work the API counts and the seconds and MiB it took, so that a reader sees how
close the count follows the cost.

    python benchmarks/bench_limits.py            # about two minutes
    python benchmarks/bench_limits.py --quick    # fewer, smaller shapes
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, resource, sys, time, yaml
from api import create_app
kind, n, a, b, h = sys.argv[1], *map(int, sys.argv[2:6])
app = create_app({"TESTING": True, "DB": sys.argv[6], "RESULT_CACHE": 0, "MAX_WORK": 10**15,
                  "MAX_CANDIDATES": 10**7, "MAX_RESULT_BYTES": 10**12, "DEADLINE": 10**6})
client = app.test_client()
if kind == "scenario":
    doc = yaml.safe_load(open("scenarios/examples/lab-4x-rtx2080ti-vs-p3-8xlarge.yaml"))
    doc.update(horizon_months=h, report_utilisation=None,
               utilisation=[round(i / max(1, a - 1), 6) for i in range(a)] if a > 1 else [0.5])
    url, body = f"/v1/evaluate?samples={n}", doc
elif kind == "plan":
    doc = yaml.safe_load(open("scenarios/examples/plan-worked-example.yaml"))
    doc["own"]["servers"] = {"min": 0, "max": a - 1}
    doc["reserve"] = None if b == 1 else {**doc["reserve"], "instances": {"min": 0, "max": b - 1}}
    doc["horizon_months"] = h
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.0, "high": 1.5}
    url, body = f"/v1/plans?samples={n}&seed=1", doc
else:
    url, body = "/v1/compare", {"utilisation": 1.0, "horizon_months": h, "samples": n}
warm = url.replace(f"samples={n}", "samples=1")  # imports and first-use caches, not the peak
client.post(warm, json={**body, "samples": 1} if kind == "compare" else body)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.process_time()
response = client.post(url, json=body)
seconds = time.process_time() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert response.status_code == 200, response.data[:300]
print(json.dumps({"s": seconds, "mib": (peak - base) / 1024, "bytes": len(response.data)}))
"""

#: (kind, draws, levels or servers or options, reservations, months)
SHAPES = {
    "scenario": [
        (100_000, 101, 1, 12),
        (100_000, 1, 1, 240),
        (100_000, 21, 1, 120),
        (100_000, 1, 1, 12),
        (200_000, 101, 1, 24),
        (200_000, 2, 1, 240),
    ],
    "plan": [
        (1, 101, 101, 12),
        (1, 101, 101, 240),
        (100, 101, 101, 12),
        (2_000, 1001, 1, 240),
        (20_000, 101, 1, 12),
        (200_000, 7, 3, 36),
    ],
    "compare": [(20_000, 0, 1, 36), (50_000, 0, 1, 12)],
}
_QUICK = {"scenario": [0, 1, 2, 3], "plan": [0, 2, 4], "compare": [0]}
#: Options of an unfiltered comparison of the shipped catalog.
_OPTIONS = 324


def _run(kind: str, shape: tuple[int, ...], db: str) -> dict[str, float]:
    n, a, b, h = shape
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, kind, str(n), str(a), str(b), str(h), db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode:
        raise SystemExit(f"{kind} {shape} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _pieces(kind: str, shape: tuple[int, ...], size: float) -> list[float]:
    """The pieces of work of a shape whose costs are fitted, in the API's own terms."""
    n, a, b, h = shape
    if kind == "scenario":
        return [n * h, n * a, n, 1.0]
    if kind == "plan":
        c = a * b
        return [n * c * h, n * c, c, 1.0]
    return [n * _OPTIONS, 1.0]


def _counted(kind: str, shape: tuple[int, ...]) -> float:
    """The work ``api.limits`` counts for a shape [unit]."""
    from api import limits

    n, a, b, h = shape
    if kind == "scenario":
        return limits.scenario_work(n, a, h)
    if kind == "plan":
        return limits.plan_work(n, a * b, h)
    return limits.compare_work(n, _OPTIONS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    import tempfile

    from api import limits

    db = str(Path(tempfile.mkdtemp()) / "runs.sqlite3")
    measured: dict[str, list[tuple[tuple[int, ...], dict[str, float]]]] = {}
    for kind, shapes in SHAPES.items():
        chosen = [shapes[i] for i in _QUICK[kind]] if args.quick else shapes
        measured[kind] = [(s, _run(kind, s, db)) for s in chosen]
    unit = limits.UNIT_S
    print(f"one unit: {unit * 1e9:.2f} ns of CPU")
    for kind, rows in measured.items():
        x = np.array([_pieces(kind, s, m["bytes"]) for s, m in rows])
        t = np.array([m["s"] for _, m in rows])
        coef, _ = nnls(x, t)  # no piece costs less than nothing
        if kind == "scenario":
            print(f"  scenario, per draw x month: {coef[0] / unit:,.1f} units "
                  f"(api.limits: {limits.SCENARIO_MONTH_WORK})")  # fmt: skip
            print(f"  scenario, per draw x level: {coef[1] / unit:,.1f} units "
                  f"(api.limits: {limits.SCENARIO_LEVEL_WORK})")  # fmt: skip
            print(f"  scenario, per draw: {coef[2] / unit:,.0f} units "
                  f"(api.limits: {limits.SCENARIO_DRAW_WORK})")  # fmt: skip
        elif kind == "plan":
            print(f"  plan, per draw x candidate x month: {coef[0] / unit:,.2f} units "
                  f"(api.limits: {limits.PLAN_MONTH_WORK})")  # fmt: skip
            print(f"  plan, per draw x candidate: {coef[1] / unit:,.1f} units "
                  f"(api.limits: {limits.PLAN_DRAW_WORK})")  # fmt: skip
            print(f"  plan, per candidate (with its bytes): {coef[2] / unit:,.0f} units "
                  f"(api.limits: {limits.PLAN_CANDIDATE_WORK} + "
                  f"{limits.RESULT_BYTE_WORK} x bytes)")  # fmt: skip
        else:
            print(f"  compare, per draw x option: {coef[0] / unit:,.1f} units "
                  f"(api.limits: {limits.COMPARE_OPTION_WORK})")  # fmt: skip
    print("\nshape (draws, levels|servers, reservations, months): counted work [unit], CPU [s],")
    print("CPU per counted unit [ns], peak memory [MiB], answer [MB]")
    for kind, rows in measured.items():
        for s, m in rows:
            work = _counted(kind, s)
            print(f"  {kind:8s} {str(s):24s} {work:9.3g} {m['s']:6.2f} {m['s'] / work * 1e9:6.2f} "
                  f"{m['mib']:6.0f} {m['bytes'] / 1e6:6.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
