"""A flood of jobs from one client: the server's memory stays bounded and nothing is lost.

Starts gunicorn (2 workers, SQLite, the default limits), posts 20 jobs at once from one client
(each a plan of 101 x 101 candidates over 12 months at 3,600 draws, counted some 960 MiB, near
``COSTMODEL_MAX_MEMORY``), and polls every accepted one to its end while it samples the
resident memory of the server's whole process tree every 50 ms. Prints how many were
accepted (202), refused (429) and otherwise answered, how many accepted jobs ended done, and the
peak memory; exits 1 unless the tree stayed under 1.5 GiB, every accepted job is done, every
refused one was a 429 with Retry-After and the store holds exactly the accepted ones.

    python benchmarks/bench_flood.py      # about a minute; stops after 5 minutes at most
"""

from __future__ import annotations

import copy
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import yaml
from served import ROOT, TreeMemory, gunicorn, request

PLAN = yaml.safe_load((ROOT / "scenarios/examples/plan-worked-example.yaml").read_text("utf-8"))
POSTS = 20
DRAWS = 3_600
LIMIT_BYTES = 1.5 * 2**30
BOUND_S = 300.0


def _plan() -> dict:
    doc = copy.deepcopy(PLAN)
    doc["own"]["servers"] = {"min": 0, "max": 100}
    doc["reserve"]["instances"] = {"min": 0, "max": 100}
    doc["horizon_months"] = 12
    return doc


def _until_ended(port: int, locations: list[str], deadline: float) -> dict[str, str]:
    """The status each job ends with (polled every 0.5 s until ``deadline``)."""
    ended: dict[str, str] = {}
    while len(ended) < len(locations) and time.monotonic() < deadline:
        for location in locations:
            if location not in ended:
                status = json.loads(request(port, "GET", location)[2])["status"]
                if status in ("done", "failed"):
                    ended[location] = status
        time.sleep(0.5)
    return ended


def main() -> int:
    doc, started = _plan(), time.monotonic()
    with tempfile.TemporaryDirectory() as folder, gunicorn(folder) as (port, pid):
        with TreeMemory(pid) as memory:
            idle = memory.last

            def post(i: int) -> tuple[int, dict[str, str]]:
                status, headers, _ = request(
                    port, "POST", f"/v1/runs?samples={DRAWS}&seed={i}", doc,
                    headers={"Prefer": "respond-async"}, timeout=120,
                )  # fmt: skip
                return status, headers

            with ThreadPoolExecutor(POSTS) as pool:
                answers = list(pool.map(post, range(POSTS)))
            accepted = [h["Location"] for s, h in answers if s == 202]
            refused = [h for s, h in answers if s == 429]
            other = [s for s, _ in answers if s not in (202, 429)]
            ended = _until_ended(port, accepted, started + BOUND_S)
        stored = json.loads(request(port, "GET", "/v1/runs?page_size=100")[2])["total"]
    done = sum(1 for s in ended.values() if s == "done")
    mib = 2**20
    print(f"posts {POSTS} at once: {len(accepted)} accepted (202), {len(refused)} refused (429), "
          f"{len(other)} other {other}")  # fmt: skip
    print(f"accepted jobs done: {done} of {len(accepted)}; runs stored: {stored}")
    print(f"server tree memory: idle {idle / mib:.0f} MiB, peak {memory.peak / mib:.0f} MiB "
          f"(bound {LIMIT_BYTES / mib:.0f} MiB); {time.monotonic() - started:.0f} s")  # fmt: skip
    ok = (
        memory.peak < LIMIT_BYTES
        and done == len(accepted) > 0
        and not other
        and all("Retry-After" in h for h in refused)
        and stored == len(accepted)
    )
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
