"""A stated capacity: 16 clients on localhost keep one server busy with mixed requests.

Starts gunicorn (2 workers, SQLite, the default limits) and runs 16 client threads for a fixed
time (60 s by default, at most 5 minutes), each sending in turn: an evaluation of the worked
example (each with its own seed, so the result cache does not answer it), a stored run, a plan,
a comparison, a run's report, and a GET of a run. Prints the sustained requests per second,
the p50 and p99 latency of each kind and of all, any answer other than 2xx, and the resident
memory of the server's whole process tree after warm-up and at the end; exits 1 on any 5xx or
when the memory grew after warm-up by more than the result caches may hold (2 workers x
``COSTMODEL_RESULT_CACHE_BYTES``, 64 MiB each by default): what fills them is bounded, anything
beyond would be a leak.

    python benchmarks/bench_soak.py              # 60 s
    python benchmarks/bench_soak.py --seconds 300
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict

import yaml
from served import ROOT, TreeMemory, gunicorn, request

WORKED = yaml.safe_load((ROOT / "scenarios/examples/worked-example.yaml").read_text("utf-8"))
PLAN = yaml.safe_load((ROOT / "scenarios/examples/plan-worked-example.yaml").read_text("utf-8"))
CLIENTS = 16
WARM_UP_S = 10.0
MAX_S = 300.0
#: What the result caches of the 2 workers may hold at most, with the defaults [byte].
CACHES_BYTES = 2 * 64 * 2**20


def _kinds(port: int, run_id: str, seeds: itertools.count) -> list[tuple[str, object]]:
    """The requests a client sends in turn: (kind, a call returning the status)."""
    return [
        (
            "evaluate",
            lambda: request(port, "POST", f"/v1/evaluate?samples=2000&seed={next(seeds)}", WORKED)[
                0
            ],
        ),  # fmt: skip
        (
            "run",
            lambda: request(port, "POST", f"/v1/runs?samples=1000&seed={next(seeds)}", WORKED)[0],
        ),  # fmt: skip
        (
            "plan",
            lambda: request(port, "POST", f"/v1/plans?samples=500&seed={next(seeds)}", PLAN)[0],
        ),  # fmt: skip
        (
            "compare",
            lambda: request(
                port,
                "POST",
                "/v1/compare",
                {"utilisation": 0.5, "samples": 500, "seed": next(seeds)},
            )[0],
        ),  # fmt: skip
        ("report", lambda: request(port, "GET", f"/v1/runs/{run_id}/report?format=md")[0]),
        ("get", lambda: request(port, "GET", f"/v1/runs/{run_id}")[0]),
    ]


def _client(kinds, stop: threading.Event, seen: dict, offset: int) -> None:
    """Send the requests of ``kinds`` in turn until ``stop``; record (latency, status)."""
    for kind, call in itertools.islice(itertools.cycle(kinds), offset, None):
        if stop.is_set():
            return
        start = time.perf_counter()
        try:
            status = call()
        except OSError:
            status = 0
        seen[kind].append((time.perf_counter() - start, status))


def _ms(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] * 1000 if len(values) > 1 else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long (at most 300)")
    seconds = min(MAX_S, parser.parse_args().seconds)
    seen: dict[str, list[tuple[float, int]]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as folder, gunicorn(folder) as (port, pid):
        run_id = json.loads(request(port, "POST", "/v1/runs", WORKED)[2])["id"]
        seeds, stop = itertools.count(1), threading.Event()
        kinds = _kinds(port, run_id, seeds)
        with TreeMemory(pid, every=0.5) as memory:
            threads = [threading.Thread(target=_client, args=(kinds, stop, seen, i))
                       for i in range(CLIENTS)]  # fmt: skip
            for t in threads:
                t.start()
            time.sleep(min(WARM_UP_S, seconds / 3))
            warm, counted_from = memory.last, sum(map(len, seen.values()))
            started = time.perf_counter()
            time.sleep(seconds - min(WARM_UP_S, seconds / 3))
            stop.set()
            elapsed = time.perf_counter() - started
            for t in threads:
                t.join()
            end = memory.last
    every = [x for values in seen.values() for x in values]
    rate = (len(every) - counted_from) / elapsed
    print(f"{CLIENTS} clients, {seconds:.0f} s: {rate:.1f} requests/s after warm-up")
    print(f"{'kind':<10} {'count':>6} {'p50 ms':>8} {'p99 ms':>8}  other than 2xx")
    for kind, values in [*seen.items(), ("all", every)]:
        times = [t for t, _ in values]
        odd = sorted({s for _, s in values if not 200 <= s < 300})
        print(f"{kind:<10} {len(values):>6} {_ms(times, 50):>8.1f} {_ms(times, 99):>8.1f}  {odd}")
    mib = 2**20
    print(f"server tree memory: after warm-up {warm / mib:.0f} MiB, at the end {end / mib:.0f} "
          f"MiB, peak {memory.peak / mib:.0f} MiB")  # fmt: skip
    failed = any(s >= 500 or s == 0 for _, s in every) or end - warm > CACHES_BYTES
    print("FAILED" if failed else "OK")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
