"""What requests of each shape cost the HTTP API, against the work it counts for them.

Runs each request shape in a fresh process through the Flask test client (cache off, limits
off), measures its CPU time and the process's peak memory, fits the time of each kind of
request to its pieces of work (least squares of the relative error, no piece below nothing)
and prints the cost of each piece in the unit of ``api.limits`` (``UNIT_S``, 3 ns of CPU)
beside the constant the API counts it at. Then it prints, for each shape, the work the API
counts, the seconds and MiB it took and the ratio of the measured CPU to the counted (1.0:
the count is exact), so that a reader sees how close the count follows the cost over the
grid: scenarios of draws x levels x months (with a hosted API), plans of draws x candidates x
months flat, under a daily peak, counting carbon and adding servers later (few candidates over
long horizons among them), and comparisons of the catalog's options, filtered by tier, memory
and model. Last, shapes asking for the most draws a request answered at once may
(``COSTMODEL_MAX_WORK``, ``COSTMODEL_MAX_SAMPLES``): it prints the range of measured over
counted and the most CPU such a request took.

    python benchmarks/bench_limits.py            # about ten minutes
    python benchmarks/bench_limits.py --quick    # fewer, smaller shapes
    python benchmarks/bench_limits.py --only plan
    python benchmarks/bench_limits.py --save m.json   # then --load m.json: counted again
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages

_CHILD = r"""
import json, resource, sys, time, yaml
from api import create_app
kind, n, a, b, h, opts = sys.argv[1], *map(int, sys.argv[2:6]), sys.argv[7].split(",")
app = create_app({"TESTING": True, "DB": sys.argv[6], "RESULT_CACHE": 0, "MAX_WORK": 10**15,
                  "MAX_CANDIDATES": 10**7, "MAX_RESULT_BYTES": 10**12, "DEADLINE": 10**6,
                  "MAX_MEMORY": 2**40})
client = app.test_client()
if kind == "scenario":
    doc = yaml.safe_load(open("scenarios/examples/lab-4x-rtx2080ti-vs-p3-8xlarge.yaml"))
    if "api" in opts:
        doc = yaml.safe_load(open("scenarios/examples/inference-8b-rtx6000ada-vs-api.yaml"))
    doc.update(horizon_months=h, report_utilisation=None,
               utilisation=[round(i / max(1, a - 1), 6) for i in range(a)] if a > 1 else [0.5])
    url, body = f"/v1/evaluate?samples={n}", doc
elif kind == "plan":
    doc = yaml.safe_load(open("scenarios/examples/plan-worked-example.yaml"))
    doc["own"]["servers"] = {"min": 0, "max": a - 1}
    doc["reserve"] = None if b == 1 else {**doc["reserve"], "instances": {"min": 0, "max": b - 1}}
    doc["horizon_months"] = h
    doc["demand"]["annual_growth"] = {"dist": "uniform", "low": 0.0, "high": 1.5}
    if "peak" in opts:
        doc["demand"]["peak_to_mean"] = {"dist": "uniform", "low": 1.2, "high": 1.8}
    if "carbon" in opts:
        doc["own"]["grid"] = "DE"
        doc["carbon"] = {"usd_per_tonne": 100}
    if "staged" in opts:
        doc["own"]["add"] = {"servers": {"min": 1, "max": 3}, "when_demand_above": [0.8, 1.0],
                             "lead_time_months": 1}
    url, body = f"/v1/plans?samples={n}&seed=1", doc
else:
    url, body = "/v1/compare", {"utilisation": 1.0, "horizon_months": h, "samples": n,
                                **json.loads(sys.argv[7] or "{}")}
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

#: (kind, draws, levels or servers or options, reservations, months, options); a comparison's
#: options are the JSON of its filters (tier, memory, model), which set how many options it has.
SHAPES = {
    "scenario": [
        (100_000, 101, 1, 12, ""),
        (100_000, 1, 1, 240, ""),
        (100_000, 21, 1, 120, ""),
        (100_000, 1, 1, 12, ""),
        (200_000, 101, 1, 24, ""),
        (200_000, 2, 1, 240, ""),
        (50_000, 11, 1, 60, "api"),
        (100_000, 1, 1, 240, "api"),
        (50_000, 101, 1, 12, "api"),
    ],
    "plan": [
        (1, 101, 101, 12, ""),
        (100, 101, 101, 12, ""),
        (2_000, 1001, 1, 240, ""),
        (20_000, 101, 1, 12, ""),
        (200_000, 7, 3, 36, ""),
        (100_000, 1, 1, 240, ""),
        (200_000, 1, 1, 12, ""),
        (50_000, 1, 1, 120, ""),
        (10_000, 101, 21, 48, ""),
        (100_000, 1, 1, 240, "carbon"),
        (20_000, 21, 5, 48, "carbon"),
        (2_000, 201, 5, 24, "carbon"),
        (100_000, 1, 1, 240, "peak"),
        (20_000, 21, 5, 48, "peak"),
        (2_000, 201, 5, 120, "peak"),
        (121_000, 1, 1, 240, "carbon,peak"),
        (50_000, 3, 2, 240, "carbon,peak"),
        (100_000, 2, 1, 240, "peak"),
        (50_000, 5, 3, 120, "carbon"),
        (2_000, 7, 3, 36, "staged"),
        (20_000, 7, 3, 36, "staged"),
        (500, 31, 3, 120, "staged"),
    ],
    "compare": [
        (20_000, 0, 1, 36, ""),
        (50_000, 0, 1, 12, ""),
        (1_000, 0, 1, 36, ""),
        (50_000, 0, 1, 240, '{"min_memory_gb": 80}'),
        (20_000, 0, 1, 36, '{"tier": "hyperscaler", "min_memory_gb": 80}'),
        (20_000, 0, 1, 36, '{"model": "llama-3.1-8b"}'),
        (1_000, 0, 1, 36, '{"model": "llama-3.1-70b"}'),
    ],
}
_QUICK = {"scenario": [0, 1, 3, 7], "plan": [0, 3, 9, 12, 15, 16], "compare": [0, 2, 5]}
#: Shapes whose draws are the most a request answered at once may ask for (the work within
#: ``MAX_WORK``, the draws within ``MAX_SAMPLES``): the CPU the limit lets one request take.
AT_LIMIT = {
    "scenario": [(0, 101, 1, 240, ""), (0, 101, 1, 12, ""), (0, 1, 1, 240, "api")],
    "plan": [
        (0, 1, 1, 240, "carbon,peak"),
        (0, 3, 3, 240, "carbon,peak"),
        (0, 21, 5, 48, "carbon"),
        (0, 201, 5, 120, "peak"),
        (0, 101, 101, 12, ""),
        (0, 7, 3, 36, "staged"),
    ],
    "compare": [(0, 0, 1, 36, ""), (0, 0, 1, 240, '{"model": "llama-3.1-8b"}')],
}


def _run(kind: str, shape: tuple, db: str) -> dict[str, float]:
    n, a, b, h, opts = shape
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, kind, str(n), str(a), str(b), str(h), db, opts],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode:
        raise SystemExit(f"{kind} {shape} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _least(kind: str, shape: tuple, db: str, repeat: int) -> dict[str, float]:
    """The run of ``repeat`` of the shape that took the least CPU: on a shared machine the
    others lost time to their neighbours."""
    return min((_run(kind, shape, db) for _ in range(repeat)), key=lambda m: m["s"])


def _staged(a: int, b: int, opts: str) -> int:
    """The candidates of a plan shape that add servers later: 3 counts x 2 triggers each."""
    return a * b * 6 if "staged" in opts else 0


def _shape(shape: tuple):
    """The :class:`api.limits.PlanShape` of a plan shape."""
    from api.limits import PlanShape

    n, a, b, h, opts = shape
    staged = _staged(a, b, opts)
    return PlanShape(
        a * b + staged, h, a, b > 1, "peak" in opts, "carbon" in opts, staged, all_cloud=True
    )  # fmt: skip


def _pieces(kind: str, shape: tuple) -> tuple[list[float], float]:
    """The pieces of work of a shape whose costs are fitted, in the API's own terms, and the
    work counted at known costs (a plan's result bytes) [unit]."""
    from api.limits import RESULT_BYTE_WORK, plan_passes, plan_result_bytes
    from api.memory import CHUNK_ELEMENTS

    n, a, b, h, opts = shape
    if kind == "scenario":
        api = "api" in opts
        return [n * h, n * h * api, n * a, n, 1.0], 0.0
    if kind == "plan":
        s = _shape(shape)
        tables = 1 + (s.servers > 1) + s.reserves
        c = s.candidates
        passes = plan_passes(n, s)
        evaluating = passes - (passes > 1)
        band = n * (c - s.all_cloud) * h * s.peaked
        chunks = -(-n // max(1, CHUNK_ELEMENTS // h))
        written = plan_result_bytes(c, h, carbon=s.carbon) * RESULT_BYTE_WORK
        return [n * h * passes, n * h * s.carbon * tables * evaluating, n * h * s.peaked,
                n * a, a * chunks, n * c, n * c * s.carbon, band, band * s.carbon, n * s.staged,
                s.staged, n, c, 1.0], written  # fmt: skip
    (options, owned), model = _options(shape), "model" in opts
    return [n * options, n * owned, n * options * model, options, 1.0], 0.0


@functools.cache
def _options(shape: tuple) -> tuple[int, int]:
    """The options a comparison shape evaluates, and the owned ones, as the API counts them."""
    from pricing import load_catalog
    from scenarios.compare import CompareRequest, option_counts

    n, a, b, h, opts = shape
    request = CompareRequest(utilisation=1.0, horizon_months=h, **json.loads(opts or "{}"))
    return option_counts(request, load_catalog())


def _counted(kind: str, shape: tuple) -> float:
    """The work ``api.limits`` counts for a shape [unit]."""
    from api import limits

    n, a, b, h, opts = shape
    if kind == "scenario":
        return limits.scenario_work(n, a, h, api="api" in opts)
    if kind == "plan":
        return limits.plan_work(n, _shape(shape))
    return limits.compare_work(n, *_options(shape), model="model" in opts)


def _at_limit(kind: str, shape: tuple) -> tuple:
    """``shape`` with the most draws a request answered at once may ask for: its counted work
    within the default ``MAX_WORK``, its draws within ``MAX_SAMPLES``."""
    from api.config import DEFAULTS

    low, high = 1, DEFAULTS["MAX_SAMPLES"]
    while low < high:  # the work grows with the draws
        mid = (low + high + 1) // 2
        fits = _counted(kind, (mid, *shape[1:])) <= DEFAULTS["MAX_WORK"]
        low, high = (mid, high) if fits else (low, mid - 1)
    return (low, *shape[1:])


#: The names of the fitted pieces and the constants of ``api.limits`` they are counted at.
_NAMES = {
    "scenario": [
        ("per draw x month", "SCENARIO_MONTH_WORK"),
        ("per draw x month, an API's payback", "SCENARIO_API_MONTH_WORK"),
        ("per draw x level", "SCENARIO_LEVEL_WORK"),
        ("per draw", "SCENARIO_DRAW_WORK"),
        ("per request", None),
    ],
    "plan": [
        ("per draw x month x pass", "PLAN_MONTH_WORK"),
        ("per draw x month x table of emissions x pass", "PLAN_CARBON_MONTH_WORK"),
        ("per draw x month under a daily peak", "PLAN_PEAK_MONTH_WORK"),
        ("per draw x server count", "PLAN_SERVER_WORK"),
        ("per server count x chunk of draws", "PLAN_SERVER_CHUNK_WORK"),
        ("per draw x candidate", "PLAN_DRAW_WORK"),
        ("per draw x candidate, carbon's", "PLAN_CARBON_DRAW_WORK"),
        ("per draw x candidate with a capacity x month, a peak's band", "PLAN_BAND_WORK"),
        ("... carbon's", "PLAN_CARBON_BAND_WORK"),
        ("per draw x candidate adding servers later", "PLAN_STAGED_WORK"),
        ("per candidate adding servers later", "PLAN_STAGED_CANDIDATE_WORK"),
        ("per draw", "PLAN_SAMPLE_WORK"),
        ("per candidate (beside its bytes)", "PLAN_CANDIDATE_WORK"),
        ("per request", "PLAN_REQUEST_WORK"),
    ],
    "compare": [
        ("per draw x option", "COMPARE_OPTION_WORK"),
        ("per draw x owned option", "COMPARE_OWNED_OPTION_WORK"),
        ("per draw x option, a model's", "COMPARE_MODEL_OPTION_WORK"),
        ("per option", "COMPARE_RESOLVE_WORK"),
        ("per request", None),
    ],
}


def _measure(args: argparse.Namespace) -> dict[str, list[tuple[tuple, dict[str, float]]]]:
    """Each chosen shape and the least CPU of its runs (the grid, then the at-limit shapes)."""
    import tempfile

    db = str(Path(tempfile.mkdtemp()) / "runs.sqlite3")
    measured: dict[str, list[tuple[tuple, dict[str, float]]]] = {}
    for kind, shapes in SHAPES.items():
        if args.only and kind != args.only:
            continue
        chosen = [shapes[i] for i in _QUICK[kind]] if args.quick else shapes
        chosen += [_at_limit(kind, s) for s in AT_LIMIT[kind][: 1 if args.quick else None]]
        measured[kind] = [(s, _least(kind, s, db, args.repeat)) for s in chosen]
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", choices=tuple(SHAPES), help="one kind of request alone")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each shape (the least)")
    parser.add_argument("--save", type=Path, help="write the measurements to this JSON file")
    parser.add_argument(
        "--load", type=Path, help="count the measurements of this JSON file again, unmeasured"
    )
    args = parser.parse_args()
    from api import limits
    from api.config import DEFAULTS

    if args.load:
        saved = json.loads(args.load.read_text("utf-8"))
        measured = {k: [(tuple(s), m) for s, m in rows] for k, rows in saved.items()}
    else:
        measured = _measure(args)
    if args.save:
        args.save.write_text(json.dumps(measured), "utf-8")
    unit = limits.UNIT_S
    print(f"one unit: {unit * 1e9:.2f} ns of CPU; fitted cost of each piece [unit]:")
    for kind, rows in measured.items():
        pieces = [_pieces(kind, s) for s, _ in rows]
        x = np.array([p for p, _ in pieces])
        known = np.array([k for _, k in pieces]) * unit
        t = np.array([m["s"] for _, m in rows])
        # relative errors, none below nothing, the known work as it is counted
        coef, _ = nnls(x * unit / t[:, None], 1.0 - known / t)
        for (name, constant), c in zip(_NAMES[kind], coef, strict=True):
            counted = f"(api.limits: {getattr(limits, constant):,g})" if constant else ""
            print(f"  {kind}, {name}: {c:,.1f} {counted}")
    print("\nshape (draws, levels|servers, reservations, months, options): counted work [unit],")
    print("least CPU of the runs [s], CPU over the count's seconds [-], peak memory [MiB],")
    print("answer [MB]; * the most draws answered at once (COSTMODEL_MAX_WORK)")
    ratios, at_once = [], []
    limited = {_at_limit(k, s) for k, shapes in AT_LIMIT.items() for s in shapes}
    for kind, rows in measured.items():
        for s, m in rows:
            work = _counted(kind, s)
            ratios.append(m["s"] / (work * unit))
            if work <= DEFAULTS["MAX_WORK"]:
                at_once.append(m["s"])
            mark = "*" if s in limited else " "
            print(f" {mark}{kind:8s} {str(s):52s} {work:9.3g} {m['s']:6.2f} {ratios[-1]:5.2f} "
                  f"{m['mib']:6.0f} {m['bytes'] / 1e6:6.2f}")  # fmt: skip
    bound = max(ratios) * DEFAULTS["MAX_WORK"] * unit
    print(
        f"\nmeasured CPU over the count: {min(ratios):.2f} to {max(ratios):.2f} over these shapes"
    )
    print(f"the most CPU of a request answered at once: {max(at_once):.2f} s (the limit's "
          f"{DEFAULTS['MAX_WORK']:,} units at the largest ratio: {bound:.2f} s)")  # fmt: skip


if __name__ == "__main__":
    main()
