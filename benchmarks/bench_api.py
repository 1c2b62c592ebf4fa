"""Load benchmark of ``POST /v1/evaluate`` on gunicorn (a script, not a timed test).

Starts gunicorn as the service runs it (``gunicorn -c python:api.gunicorn_conf
"api:create_app()"``, 2 workers) on a free loopback port with a temporary run store, sends
the example scenario (10,000 samples x 20 levels x 36 months) first from one client, then from
eight concurrent clients, each for a bounded time, and prints the median and 99th-percentile
latency [ms], the throughput [requests/s], the error count and the load average (the machine
may be shared, and a loaded machine slows every figure); the server is always stopped.

Every request carries a new seed, so every request runs the Monte Carlo engine; with
``--same-request`` identical requests are answered from the per-worker result cache after the
first one (header ``X-Cache``). Targets on a quiet 2-core machine with 2 workers: p50 <= 15 ms
from one client, and no errors from eight.

``--vs DIR`` compares this checkout (A) with another one (B, e.g. a worktree of ``main``) paired:
both servers run at once, on the same machine, each with its own interpreter (``DIR/.venv`` when
there is one, else ``--vs-python``), and the load alternates between them in slices of
``--slice`` seconds, the same seeds to both, so that a machine that slows down or speeds up
during the run weighs on both alike. It prints each side's figures, the ratio of their p50s
and the median of the per-slice ratios.

``--in-process`` measures CPU instead of latency: a fresh process per round runs the Flask test
client (no server, no sockets), sends ``--requests`` requests with distinct seeds after the
warm-up and prints the process CPU time per request [ms] and its parts, timed inside the same
requests: the engine (``simulate`` and ``summarise``; of it, drawing the inputs), writing the
JSON answer (``result_json``) and the rest (Flask, the body's hash and its cached document, the
limits, the verdict and sentences; the test client's own work too). With ``--vs DIR`` the
rounds alternate between the checkouts, on the same seeds, and it prints the ratio of their
medians (B/A: how many times less CPU A takes). Target: 1.6 times less than f69c217. With
``--new-body`` every request's body differs (a description of its own), so that each is parsed,
validated and resolved anew, as a client's new document is, instead of found in the cache.

    python benchmarks/bench_api.py                      # 1 then 8 clients, 2 workers, 20 s each
    python benchmarks/bench_api.py --clients 16 --seconds 30 --same-request
    python benchmarks/bench_api.py --clients 1 --vs ../main   # A = here, B = ../main
    python benchmarks/bench_api.py --in-process --vs ../main   # CPU per request, paired
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"  # loopback only
DEFAULT_SCENARIO = ROOT / "scenarios" / "examples" / "lab-4x-rtx2080ti-vs-p3-8xlarge.yaml"


@dataclass
class _Server:
    """One gunicorn server under load: its checkout, interpreter, port and what it measured."""

    name: str
    root: Path
    python: Path
    port: int = 0
    seeds: Iterator[int] = field(default_factory=lambda: itertools.count(1000))
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    hits: int = 0
    wall: float = 0.0
    slices: list[float] = field(default_factory=list)  # p50 of each slice [s]


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


def _start_server(
    server: _Server, port: int, workers: int, db: Path, log: Path
) -> subprocess.Popen:
    env = {
        **os.environ,
        "COSTMODEL_DB": str(db),
        "COSTMODEL_API_KEYS": "",
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(server.root), os.environ.get("PYTHONPATH")])
        ),
    }
    # the service's own settings (docs/api.md), where the checkout has them
    config = (
        ["-c", "python:api.gunicorn_conf"]
        if (server.root / "api" / "gunicorn_conf.py").exists()
        else []
    )
    command = [
        str(server.python),
        "-m",
        "gunicorn",
        *config,
        "--bind",
        f"{HOST}:{port}",
        "--workers",
        str(workers),
        "--timeout",
        "120",
        "api:create_app()",
    ]
    return subprocess.Popen(
        command, cwd=server.root, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT
    )


def _stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=15)


def _load(
    args: argparse.Namespace, clients: int, server: _Server, body: bytes, seconds: float
) -> None:
    """Run ``clients`` clients against ``server`` for ``seconds``, adding to its figures."""
    lock = threading.Lock()
    start = time.perf_counter()
    deadline = start + seconds
    latencies: list[float] = []

    def path() -> str:
        query = f"/v1/evaluate?samples={args.samples}"
        if not args.same_request:
            with lock:
                query += f"&seed={next(server.seeds)}"
        return query

    def client() -> None:
        while time.perf_counter() < deadline:
            target = path()
            t0 = time.perf_counter()
            try:
                status, cache = _post(server.port, target, body, args.timeout)
            except OSError:
                status, cache = 0, ""
            elapsed = time.perf_counter() - t0
            with lock:
                if status == 200:
                    latencies.append(elapsed)
                    server.hits += cache == "hit"
                else:
                    server.errors += 1

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    server.wall += time.perf_counter() - start
    server.latencies += latencies
    server.slices.append(_percentile(sorted(latencies), 0.50))


def _figures(server: _Server) -> dict[str, float]:
    ordered = sorted(server.latencies)
    return {
        "requests": len(ordered) + server.errors,
        "ok": len(ordered),
        "errors": server.errors,
        "cache_hits": server.hits,
        "wall_s": server.wall,
        "rps": len(ordered) / server.wall if server.wall else float("nan"),
        "p50_ms": 1000 * _percentile(ordered, 0.50),
        "p90_ms": 1000 * _percentile(ordered, 0.90),
        "p99_ms": 1000 * _percentile(ordered, 0.99),
        "max_ms": 1000 * (ordered[-1] if ordered else float("nan")),
    }


def _report(clients: int, server: _Server, label: str = "") -> dict[str, float]:
    figures = _figures(server)
    print(
        f"{label}{clients} client{'s' if clients != 1 else ''}: requests {figures['requests']}  "
        f"errors {figures['errors']}  cache hits {figures['cache_hits']}  "
        f"in {figures['wall_s']:.1f} s  load average {_load_average()}\n"
        f"  p50 {figures['p50_ms']:.1f} ms  p90 {figures['p90_ms']:.1f} ms  "
        f"p99 {figures['p99_ms']:.1f} ms  max {figures['max_ms']:.1f} ms  "
        f"throughput {figures['rps']:.1f} requests/s"
    )
    return figures


def _round(args: argparse.Namespace, clients: int, servers: list[_Server], body: bytes) -> None:
    """One load level: the whole ``--seconds`` on one server, or alternating slices on two."""
    for server in servers:
        server.latencies, server.slices = [], []
        server.errors = server.hits = 0
        server.wall = 0.0
    if len(servers) == 1:
        _load(args, clients, servers[0], body, args.seconds)
        _report(clients, servers[0])
        return
    for _ in range(max(1, round(args.seconds / args.slice))):
        for server in servers:
            _load(args, clients, server, body, args.slice)
    a, b = (_report(clients, s, f"{s.name}  ") for s in servers)
    pairs = sorted(x / y for x, y in zip(servers[0].slices, servers[1].slices, strict=True))
    print(
        f"  A/B: p50 {a['p50_ms'] / b['p50_ms']:.3f}  throughput {a['rps'] / b['rps']:.3f}  "
        f"median per-slice p50 ratio {_percentile(pairs, 0.5):.3f} ({len(pairs)} slices)"
    )


_IN_PROCESS = r"""
import json, sys, tempfile, time
import api.service, costmodel.engine, scenarios.scenario
from api import create_app
body, samples, seeds, warmup, first, new_body = sys.argv[1], *map(int, sys.argv[2:7])
spent = {"document": 0.0, "draw": 0.0, "engine": 0.0, "write": 0.0}
def timed(module, name, key):  # CPU of every call of module.name, added to spent[key]
    inner = getattr(module, name)
    def wrapper(*args, **kwargs):
        start = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[key] += time.process_time() - start
    setattr(module, name, wrapper)
timed(api.service, "request_document", "document")
timed(costmodel.engine, "draw", "draw")  # sampling: percentiles, copula, ppf
timed(scenarios.scenario, "simulate", "engine")
timed(scenarios.scenario, "summarise", "engine")
timed(api.service, "result_json", "write")
app = create_app({"TESTING": True, "DB": tempfile.mktemp(suffix=".sqlite3")})
client = app.test_client()
def request_body(seed):  # with new_body, a description of its own: the document is read anew
    if not new_body:
        return body
    data = json.loads(body)
    data["description"] = f"{data.get('description', '')} ({seed})"
    return json.dumps(data)
bodies = {seed: request_body(seed) for seed in [*range(warmup), *range(first, first + seeds)]}
def post(seed):
    url = f"/v1/evaluate?samples={samples}&seed={seed}"
    response = client.post(url, data=bodies[seed], content_type="application/json")
    assert response.status_code == 200, response.data[:300]
    assert response.headers["X-Cache"] == "miss"
for seed in range(warmup):
    post(seed)
spent.update(dict.fromkeys(spent, 0.0))
start = time.process_time()
for seed in range(first, first + seeds):
    post(seed)
figures = {"request": time.process_time() - start, **spent}
print(json.dumps({k: 1000 * v / seeds for k, v in figures.items()}))
"""

#: The parts of a request's CPU time that ``--in-process`` prints, as (key, words).
_PARTS = (
    ("document", "reading the document (parsed, validated, resolved once per body)"),
    ("engine", "the engine (simulate and summarise)"),
    ("draw", "  of which sampling (percentiles, copula, ppf)"),
    ("write", "writing the JSON answer"),
    ("rest", "the rest: HTTP, limits, verdict, sentences, the test client"),
)


def _in_process(args: argparse.Namespace, servers: list[_Server], body: bytes) -> None:
    """CPU per request in process, each checkout in turn in fresh processes (``--rounds``),
    and its parts, measured inside the same requests."""
    figures: dict[str, list[dict[str, float]]] = {s.name: [] for s in servers}
    for i in range(args.rounds):
        first = 1000 + i * args.requests  # new seeds each round, the same for each checkout
        for server in servers:
            env = {**os.environ, "PYTHONPATH": str(server.root), "COSTMODEL_API_KEYS": ""}
            argv = [body.decode(), str(args.samples), str(args.requests), str(args.warmup)]
            argv += [str(first), str(int(args.new_body))]
            out = subprocess.run(
                [str(server.python), "-c", _IN_PROCESS, *argv],
                cwd=server.root, env=env, capture_output=True, text=True, check=True,
            )  # fmt: skip
            found = json.loads(out.stdout.strip().splitlines()[-1])
            parts = ("document", "engine", "write")  # "draw" is part of "engine"
            found["rest"] = found["request"] - sum(found[k] for k in parts)
            figures[server.name].append(found)
    print(
        f"POST /v1/evaluate in process  {args.scenario.name}  samples={args.samples}  "
        f"{args.requests} requests x {args.rounds} rounds, distinct seeds"
        f"{', a new body each' if args.new_body else ''}; medians over rounds "
        f"[ms of CPU per request]; load average {_load_average()}"
    )
    medians = {}
    for server in servers:
        median = {
            k: statistics.median(f[k] for f in figures[server.name])
            for k in figures[server.name][0]
        }
        medians[server.name] = median["request"]
        print(f"  {server.name}: {median['request']:.2f} ms per request")
        for key, words in _PARTS:
            share = 100 * median[key] / median["request"]
            print(f"    {median[key]:6.2f} ms {share:3.0f} %  {words}")
    if len(servers) == 2:
        a, b = (medians[s.name] for s in servers)
        pairs = sorted(y["request"] / x["request"] for x, y in zip(*figures.values(), strict=True))
        print(
            f"  B/A: {b / a:.2f}x the CPU per request (ratio of medians; round by round "
            f"{pairs[0]:.2f} to {pairs[-1]:.2f})"
        )


def _load_average() -> str:
    """The 1-, 5- and 15-minute load averages, as ``uptime`` prints them (the machine is shared)."""
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def _servers(args: argparse.Namespace) -> list[_Server]:
    servers = [_Server(f"A {ROOT.name}", ROOT, Path(sys.executable))]
    if args.vs is not None:
        root = args.vs.resolve()
        venv = root / ".venv" / "bin" / "python"
        python = args.vs_python or (venv if venv.exists() else Path(sys.executable))
        servers.append(_Server(f"B {root.name}", root, python))
    return servers


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures; returns 0, or 1 if a server did not start."""
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
    parser.add_argument("--vs", type=Path, help="another checkout to compare with (B)")
    parser.add_argument("--vs-python", type=Path, help="B's interpreter (default DIR/.venv)")
    parser.add_argument("--slice", type=float, default=2.0, help="paired slice length [s]")
    parser.add_argument(
        "--in-process", action="store_true", help="CPU per request in process, no server"
    )
    parser.add_argument("--requests", type=int, default=100, help="timed requests per round")
    parser.add_argument("--rounds", type=int, default=5, help="--in-process rounds")
    parser.add_argument(
        "--new-body",
        action="store_true",
        help="--in-process: a new body each request (its document read anew, not cached)",
    )
    args = parser.parse_args(argv)

    body = json.dumps(yaml.safe_load(args.scenario.read_text(encoding="utf-8"))).encode()
    servers = _servers(args)
    if args.in_process:
        _in_process(args, servers, body)
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-api-") as tmp:
        procs = []
        try:
            for i, server in enumerate(servers):
                server.port = _free_port()
                log = Path(tmp) / f"gunicorn-{i}.log"
                db = Path(tmp) / f"runs-{i}.sqlite3"
                procs.append((_start_server(server, server.port, args.workers, db, log), log))
            for server, (proc, log) in zip(servers, procs, strict=True):
                deadline = time.monotonic() + 60
                while not _healthy(server.port):
                    if proc.poll() is not None or time.monotonic() > deadline:
                        print(f"gunicorn did not start:\n{log.read_text(errors='replace')[-3000:]}")
                        return 1
                    time.sleep(0.2)
                # Warm-up (not timed): imports, catalog load and the first engine runs.
                for seed in range(args.warmup):
                    query = f"/v1/evaluate?samples={args.samples}&seed={seed}"
                    _post(server.port, query, body, args.timeout)
            print(
                f"POST /v1/evaluate  {args.scenario.name}  samples={args.samples}  "
                f"gunicorn workers={args.workers}  CPUs={os.cpu_count()}  "
                + ("same request (cache hits)" if args.same_request else "distinct seeds")
                + "".join(f"\n  {s.name}: {s.root} ({s.python})" for s in servers[1:])
            )
            for clients in args.clients:
                _round(args, clients, servers, body)
        finally:
            for proc, _ in procs:
                _stop_server(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
