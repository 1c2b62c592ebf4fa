"""Speed of ``costmodel compare``: the market ranked for training work and by model (a script,
not a timed test).

For each comparison it prints, over ``--repeats`` runs, the median of

- ``in process``: the wall time [s] of :func:`scenarios.compare.compare` in this process
  (every option resolved from its catalog row, its throughput measured or estimated, and
  evaluated; nothing is kept between calls), and the share of it spent resolving;
- ``process``: the CPU time [s] (user + system) of the whole ``costmodel compare ...
  --format json`` command in a new Python process (start-up, catalog, resolution,
  estimates, evaluation, JSON), with ``--process``;

with the number of options ranked. Target on a 2-core machine: ``compare --model`` over every
option in under 1 s of CPU for the whole command.

    python benchmarks/bench_compare.py                 # 2,000 draws, 5 repeats
    python benchmarks/bench_compare.py --samples 10000 --repeats 9 --process
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from pricing import load_catalog
from scenarios.compare import CompareRequest, compare

ROOT = Path(__file__).resolve().parents[1]

#: The comparisons timed: a name, the request's options and the command line's.
CASES = (
    ("training", {}, []),
    ("llama-3.1-8b", {"model": "llama-3.1-8b"}, ["--model", "llama-3.1-8b"]),
    ("llama-3.3-70b fp8", {"model": "llama-3.3-70b", "precision": "fp8"},
     ["--model", "llama-3.3-70b", "--precision", "fp8"]),
    ("llama-3.1-8b 5000/500", {"model": "llama-3.1-8b", "input_tokens": 5000,
                               "output_tokens": 500},
     ["--model", "llama-3.1-8b", "--input-tokens", "5000", "--output-tokens", "500"]),
)  # fmt: skip


def _timed(run, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        out.append(time.perf_counter() - start)
    return out


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _process(args: list[str], samples: int, repeats: int) -> float:
    """The median CPU time [s] of the whole command in a new process."""
    command = [sys.executable, "-m", "cli", "compare", "-u", "0.5", "--samples", str(samples),
               "--format", "json", *args]  # fmt: skip
    runs = []
    for _ in range(repeats):
        before = _children_cpu()
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
        runs.append(_children_cpu() - before)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000, help="draws per option")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each timing")
    parser.add_argument("--process", action="store_true", help="also time whole commands")
    args = parser.parse_args()
    catalog = load_catalog()
    print(f"compare at u = 0.5, {args.samples:,} draws per option, median of {args.repeats}")
    print(f"{'comparison':<24}{'options':>8}{'in process [s]':>16}{'resolve':>9}"
          f"{'process CPU [s]':>17}")  # fmt: skip
    for name, options, flags in CASES:
        request = CompareRequest(utilisation=0.5, samples=args.samples, **options)
        result = compare(request, catalog)
        shares = []

        def run(request=request, shares=shares):
            t = compare(request, catalog).timings
            shares.append(t["resolve_s"] / t["total_s"])

        runs = _timed(run, args.repeats)
        share = statistics.median(shares)
        whole = f"{_process(flags, args.samples, args.repeats):17.3f}" if args.process else ""
        print(f"{name:<24}{len(result.options):>8}{statistics.median(runs):>16.3f}"
              f"{share:>9.0%}{whole}")  # fmt: skip


if __name__ == "__main__":
    main()
