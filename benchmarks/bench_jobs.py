"""What a job costs the HTTP API: runs answered 202 and polled, against runs answered at once.

Starts gunicorn (2 workers, a SQLite store in a temporary folder) and prints medians of:

* ``POST /v1/runs`` of the worked example answered at once (201) and as a job (202, with
  ``Prefer: respond-async``): the time until the answer;
* one poll, ``GET /v1/runs/<id>``, of a queued job and of a done run;
* the worked example as a job from the POST to the GET that shows it done (polled every 50 ms),
  against the same run answered at once: what running in a process of its own adds;
* a fleet plan above the synchronous limit (101 x 101 candidates over 240 months at 1,000
  draws) from the 202 to done, and the latency of ``POST /v1/evaluate`` while it runs.

    python benchmarks/bench_jobs.py            # about a minute
    python benchmarks/bench_jobs.py --quick    # fewer repetitions, a smaller plan
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.test_api_gunicorn import free_port, request  # noqa: E402

WORKED = yaml.safe_load((ROOT / "scenarios/examples/worked-example.yaml").read_text("utf-8"))
PLAN = yaml.safe_load((ROOT / "scenarios/examples/plan-worked-example.yaml").read_text("utf-8"))
ASYNC = {"Prefer": "respond-async"}


def _timed(call: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def _until_done(port: int, location: str, every: float = 0.05) -> float:
    """Seconds until ``location`` shows the run done (polled every ``every`` seconds)."""
    import json

    start = time.perf_counter()
    while json.loads(request(port, "GET", location)[2])["status"] != "done":
        time.sleep(every)
    return time.perf_counter() - start


def _start(folder: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {**os.environ, "COSTMODEL_DB": f"{folder}/runs.sqlite3", "COSTMODEL_API_KEYS": "",
           "PYTHONPATH": str(ROOT)}  # fmt: skip
    command = [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers",
               "2", "--timeout", "120", "api:create_app()"]  # fmt: skip
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    while True:
        try:
            if request(port, "GET", "/health", timeout=2)[0] == 200:
                return proc, port
        except OSError:
            time.sleep(0.2)


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:8.1f} ms (median of {len(values)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, smaller plan")
    args = parser.parse_args()
    rounds = 5 if args.quick else 15
    with tempfile.TemporaryDirectory() as folder:
        proc, port = _start(folder)
        try:
            _report(port, rounds, 21 if args.quick else 101)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def _report(port: int, rounds: int, side: int) -> None:
    sync, posted, jobs, queued, done = [], [], [], [], []
    for i in range(rounds):
        body = {**WORKED, "name": f"bench-{i}"}
        sync.append(_timed(lambda b=body: request(port, "POST", "/v1/runs", b))[0])
        took, (status, headers, _) = _timed(
            lambda b=body: request(port, "POST", "/v1/runs", b, headers=ASYNC)
        )
        assert status == 202
        posted.append(took)
        queued.append(_timed(lambda h=headers: request(port, "GET", h["Location"]))[0])
        jobs.append(took + _until_done(port, headers["Location"]))
        done.append(_timed(lambda h=headers: request(port, "GET", h["Location"]))[0])
    print(f"POST /v1/runs, answered at once (201):      {_ms(sync)}")
    print(f"POST /v1/runs, as a job (202):              {_ms(posted)}")
    print(f"GET /v1/runs/<id> of a queued job:          {_ms(queued)}")
    print(f"GET /v1/runs/<id> of a done run:            {_ms(done)}")
    print(f"the worked example as a job, POST to done:  {_ms(jobs)}")
    plan = copy.deepcopy(PLAN)
    plan["own"]["servers"] = {"min": 0, "max": side - 1}
    plan["reserve"]["instances"] = {"min": 0, "max": side - 1}
    plan["horizon_months"] = 240
    status, headers, body = request(port, "POST", "/v1/runs?samples=1000&seed=1", plan)
    assert status == 202, body[:300]
    start = time.perf_counter()
    meanwhile = []
    while True:
        meanwhile.append(_timed(lambda: request(port, "POST", "/v1/evaluate", WORKED))[0])
        status, _, body = request(port, "GET", headers["Location"])
        if b'"status":"done"' in body:
            break
        time.sleep(0.2)
    took, size = time.perf_counter() - start, len(body) / 2**20
    print(f"a plan of {side} x {side} candidates, 240 months, 1,000 draws, as a job: "
          f"{took:.1f} s to done, {size:.1f} MiB polled")  # fmt: skip
    print(f"POST /v1/evaluate meanwhile:                {_ms(meanwhile)}")


if __name__ == "__main__":
    main()
