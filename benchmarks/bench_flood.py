"""A flood of jobs from one client: the server's memory stays bounded and nothing is lost.

Starts gunicorn (2 workers, SQLite, the default limits), posts 20 jobs at once from one client,
each the heaviest job those limits admit, and polls every accepted one to its end while it
samples the resident memory of the server's whole process tree every 50 ms. The heaviest job,
by the memory ``api.memory`` counts, is a scenario with an API side and an uncertain carbon
price at the most draws, utilisation levels and months (``COSTMODEL_MAX_SAMPLES``,
``MAX_LEVELS``, ``MAX_HORIZON``): counted 575 MiB of ``COSTMODEL_MAX_MEMORY``'s 1 GiB, 466 MiB
measured (``bench_memory.py``); a plan counts less, its candidates' outcomes held a block at a
time. Prints how many were accepted (202), refused (429) and otherwise answered, how many
accepted jobs ended done, and the peak memory; exits 1 unless the tree stayed under 1.5 GiB,
every accepted job is done, every refused one was a 429 with Retry-After and the store holds
exactly the accepted ones.

    python benchmarks/bench_flood.py      # a minute or two; stops after 5 minutes at most
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import yaml
from served import ROOT, TreeMemory, gunicorn, request

from api.config import DEFAULTS
from api.memory import plan_memory, scenario_memory

SCENARIO = ROOT / "scenarios/examples/inference-8b-rtx6000ada-vs-api.yaml"
POSTS = 20
LIMIT_BYTES = 1.5 * 2**30
BOUND_S = 300.0


def _heaviest() -> tuple[dict, int, int]:
    """The heaviest job the default limits admit: its document, draws and counted memory
    [byte]; checked to count more than the largest plan and no more than the limit."""
    draws, levels = DEFAULTS["MAX_SAMPLES"], DEFAULTS["MAX_LEVELS"]
    months = DEFAULTS["MAX_HORIZON"]
    doc = yaml.safe_load(SCENARIO.read_text("utf-8"))  # it has an API side
    doc.update(horizon_months=months, report_utilisation=None,
               utilisation=[round(i / (levels - 1), 6) for i in range(levels)])  # fmt: skip
    doc["carbon"] = {"usd_per_tonne": {"dist": "triangular", "low": 50, "mode": 100, "high": 200}}
    counted = scenario_memory(draws, levels, months, sides=1, priced=True)
    plan = plan_memory(draws, DEFAULTS["MAX_CANDIDATES"], months, carbon=True)
    assert plan < counted <= DEFAULTS["MAX_MEMORY"], (plan, counted)
    return doc, draws, counted


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
    (doc, draws, counted), started = _heaviest(), time.monotonic()
    with tempfile.TemporaryDirectory() as folder, gunicorn(folder) as (port, pid):
        with TreeMemory(pid) as memory:
            idle = memory.last

            def post(i: int) -> tuple[int, dict[str, str]]:
                status, headers, _ = request(
                    port, "POST", f"/v1/runs?samples={draws}&seed={i}", doc,
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
    print(f"each job: a scenario with an API side and a carbon price, {draws:,} draws x "
          f"{len(doc['utilisation'])} levels x {doc['horizon_months']} months, counted "
          f"{counted / mib:.0f} MiB")  # fmt: skip
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
