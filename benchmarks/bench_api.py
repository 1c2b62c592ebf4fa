"""Load benchmark of ``POST /v1/evaluate`` on gunicorn (a script, not a timed test).

Starts ``gunicorn "api:create_app()"`` on a free loopback port with a temporary run store, sends
the example scenario (10,000 samples x 20 levels x 36 months) first from one client, then from
eight concurrent clients, each for a bounded time, and prints the median and 99th-percentile
latency [ms], the throughput [requests/s] and the error count; the server is always stopped.

Every request carries a new seed, so every request runs the Monte Carlo engine; with
``--same-request`` identical requests are answered from the per-worker result cache after the
first one (header ``X-Cache``). Targets on a 2-core machine with 2 workers: p50 <= 50 ms from
one client, >= 40 requests/s from eight, no errors.

    python benchmarks/bench_api.py                      # 1 then 8 clients, 2 workers, 20 s each
    python benchmarks/bench_api.py --clients 16 --seconds 30 --same-request
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import yaml

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"  # loopback only
DEFAULT_SCENARIO = ROOT / "scenarios" / "examples" / "lab-4x-rtx2080ti-vs-p3-8xlarge.yaml"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _post(port: int, path: str, body: bytes, timeout: float) -> tuple[int, str]:
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("X-Cache", "")
    finally:
        conn.close()


def _healthy(port: int) -> bool:
    conn = http.client.HTTPConnection(HOST, port, timeout=2)
    try:
        conn.request("GET", "/health")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


def _percentile(ordered: list[float], q: float) -> float:
    """Linear-interpolation percentile of an ascending list, ``q`` in [0, 1]."""
    if not ordered:
        return float("nan")
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (pos - lo) * (ordered[hi] - ordered[lo])


def _start_server(port: int, workers: int, db: Path, log: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "COSTMODEL_DB": str(db),
        "COSTMODEL_API_KEYS": "",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "--bind",
        f"{HOST}:{port}",
        "--workers",
        str(workers),
        "--timeout",
        "120",
        "api:create_app()",
    ]
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT
    )


def _stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=15)


def _load(
    args: argparse.Namespace, clients: int, port: int, body: bytes, seeds: Iterator[int]
) -> dict[str, float]:
    """Run ``clients`` clients for ``args.seconds``; returns the summary figures."""
    seed_lock = threading.Lock()
    latencies: list[float] = []
    errors = hits = 0
    lock = threading.Lock()

    def path() -> str:
        query = f"/v1/evaluate?samples={args.samples}"
        if not args.same_request:
            with seed_lock:
                query += f"&seed={next(seeds)}"
        return query

    # Warm-up (not timed): imports, catalog load and the first engine run in each worker.
    for _ in range(args.warmup):
        _post(port, path(), body, args.timeout)

    start = time.perf_counter()
    deadline = start + args.seconds

    def client() -> None:
        nonlocal errors, hits
        while time.perf_counter() < deadline:
            target = path()
            t0 = time.perf_counter()
            try:
                status, cache = _post(port, target, body, args.timeout)
            except OSError:
                status, cache = 0, ""
            elapsed = time.perf_counter() - t0
            with lock:
                if status == 200:
                    latencies.append(elapsed)
                    hits += cache == "hit"
                else:
                    errors += 1

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    ordered = sorted(latencies)
    return {
        "requests": len(ordered) + errors,
        "ok": len(ordered),
        "errors": errors,
        "cache_hits": hits,
        "wall_s": wall,
        "rps": len(ordered) / wall,
        "p50_ms": 1000 * _percentile(ordered, 0.50),
        "p90_ms": 1000 * _percentile(ordered, 0.90),
        "p99_ms": 1000 * _percentile(ordered, 0.99),
        "max_ms": 1000 * (ordered[-1] if ordered else float("nan")),
    }


def _report(clients: int, figures: dict[str, float]) -> None:
    print(
        f"{clients} client{'s' if clients != 1 else ''}: requests {figures['requests']}  "
        f"errors {figures['errors']}  cache hits {figures['cache_hits']}  "
        f"in {figures['wall_s']:.1f} s\n"
        f"  p50 {figures['p50_ms']:.1f} ms  p90 {figures['p90_ms']:.1f} ms  "
        f"p99 {figures['p99_ms']:.1f} ms  max {figures['max_ms']:.1f} ms  "
        f"throughput {figures['rps']:.1f} requests/s"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures; returns 0, or 1 if the server did not start."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="load duration [s]")
    parser.add_argument(
        "--clients", type=int, nargs="+", default=[1, 8], help="concurrent clients, per round"
    )
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--samples", type=int, default=10_000, help="Monte Carlo draws")
    parser.add_argument("--scenario", type=Path, default=DEFAULT_SCENARIO, help="scenario YAML")
    parser.add_argument("--warmup", type=int, default=4, help="untimed requests first")
    parser.add_argument("--timeout", type=float, default=120.0, help="per-request timeout [s]")
    parser.add_argument(
        "--same-request", action="store_true", help="the same request each time (cache hits)"
    )
    args = parser.parse_args(argv)

    body = json.dumps(yaml.safe_load(args.scenario.read_text(encoding="utf-8"))).encode()
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="bench-api-") as tmp:
        log = Path(tmp) / "gunicorn.log"
        proc = _start_server(port, args.workers, Path(tmp) / "runs.sqlite3", log)
        try:
            deadline = time.monotonic() + 60
            while not _healthy(port):
                if proc.poll() is not None or time.monotonic() > deadline:
                    print("gunicorn did not start:\n" + log.read_text(errors="replace")[-3000:])
                    return 1
                time.sleep(0.2)
            print(
                f"POST /v1/evaluate  {args.scenario.name}  samples={args.samples}  "
                f"gunicorn workers={args.workers}  CPUs={os.cpu_count()}  "
                + ("same request (cache hits)" if args.same_request else "distinct seeds")
            )
            seeds = itertools.count(1000)
            for clients in args.clients:
                _report(clients, _load(args, clients, port, body, seeds))
        finally:
            _stop_server(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
