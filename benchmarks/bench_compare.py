"""Speed of ``costmodel compare``: the market ranked for training work and by model (a script,
not a timed test).

For each comparison it prints the median wall time [s] over ``--repeats`` runs of

- ``cold``: in this process, every option resolved anew (the resolution caches cleared, the
  options' carbon inputs among them), as the first request of a server process or a command
  line run finds it;
- ``warm``: in this process, the options already resolved (a server's later requests);
- ``process``: the whole ``costmodel compare ... --format json`` command in a new Python
  process (start-up, catalog, resolution, evaluation, JSON), with ``--process``;

with the number of options ranked and the share of the cold time spent resolving them. Target
on a 2-core machine: ``compare --model`` over every option in under 1 s (cold, and the whole
process).

    python benchmarks/bench_compare.py                 # 2,000 draws, 5 repeats
    python benchmarks/bench_compare.py --samples 10000 --repeats 9 --process
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from pricing import load_catalog
from scenarios.compare import CompareRequest, compare, market

ROOT = Path(__file__).resolve().parents[1]

#: The comparisons timed: a name, the request's options and the command line's.
CASES = (
    ("training", {}, []),
    ("llama-3.3-70b fp8", {"model": "llama-3.3-70b", "precision": "fp8"},
     ["--model", "llama-3.3-70b", "--precision", "fp8"]),
    ("llama-3.1-8b 5000/500", {"model": "llama-3.1-8b", "input_tokens": 5000,
                               "output_tokens": 500},
     ["--model", "llama-3.1-8b", "--input-tokens", "5000", "--output-tokens", "500"]),
)  # fmt: skip


def _cleared() -> None:
    """Forget every resolved option and its carbon inputs."""
    market._resolved.cache_clear()
    market._carbons.cache_clear()


def _timed(run, repeats: int, before=lambda: None) -> list[float]:
    out = []
    for _ in range(repeats):
        before()
        start = time.perf_counter()
        run()
        out.append(time.perf_counter() - start)
    return out


def _process(args: list[str], samples: int, repeats: int) -> float:
    command = [sys.executable, "-m", "cli", "compare", "-u", "0.5", "--samples", str(samples),
               "--format", "json", *args]  # fmt: skip
    runs = _timed(
        lambda: subprocess.run(command, cwd=ROOT, check=True, capture_output=True), repeats
    )
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000, help="draws per option")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each timing")
    parser.add_argument("--process", action="store_true", help="also time whole commands")
    args = parser.parse_args()
    catalog = load_catalog()
    print(f"compare at u = 0.5, {args.samples:,} draws per option, median of {args.repeats}")
    print(f"{'comparison':<24}{'options':>8}{'cold [s]':>10}{'resolve':>9}{'warm [s]':>10}"
          f"{'process [s]':>13}")  # fmt: skip
    for name, options, flags in CASES:
        request = CompareRequest(utilisation=0.5, samples=args.samples, **options)
        result = compare(request, catalog)
        shares = []

        def run(request=request, shares=shares):
            t = compare(request, catalog).timings
            shares.append(t["resolve_s"] / t["total_s"])

        cold = _timed(run, args.repeats, _cleared)
        share = statistics.median(shares)
        warm = _timed(run, args.repeats)
        whole = f"{_process(flags, args.samples, args.repeats):13.3f}" if args.process else ""
        print(f"{name:<24}{len(result.options):>8}{statistics.median(cold):>10.3f}"
              f"{share:>9.0%}{statistics.median(warm):>10.3f}{whole}")  # fmt: skip


if __name__ == "__main__":
    main()
