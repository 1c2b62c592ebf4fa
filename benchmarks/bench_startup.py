"""Start-up: a whole ``costmodel run`` beside a Python that only imports numpy and PyYAML.

Runs ``costmodel run`` on the worked example (one draw: the process is nearly all start-up)
and ``python -c "import numpy, yaml"`` in turn, pair by pair, and prints the median wall and
CPU time of each and the medians of their ratios (taken pair by pair, so that a machine whose
speed drifts moves both). Target: ``costmodel run`` within 2.5 times the bare imports.

Children run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed), after one
unmeasured run of each, as an installed package runs: measure an installed copy (``pip install
.``, not ``-e``) for the figure users see.

    python benchmarks/bench_startup.py                 # 21 pairs
    python benchmarks/bench_startup.py --pairs 41 --scenario lab-4x-rtx2080ti-vs-p3-8xlarge
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

TARGET = 2.5
BARE = [sys.executable, "-c", "import numpy, yaml"]


def _costmodel() -> list[str]:
    """The ``costmodel`` script beside this Python, else ``python -m cli``."""
    script = Path(sys.executable).with_name("costmodel")
    return [str(script)] if script.exists() else [sys.executable, "-m", "cli"]


def _timed(cmd: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system, its children's included) time of one run [s]."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=21, help="paired runs (default 21)")
    parser.add_argument("--scenario", default="worked-example", help="file or shipped example")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    run = [*_costmodel(), "run", args.scenario]
    for cmd in (run, BARE):  # warm-up: caches the bytecode
        _timed(cmd, env)
    pairs = [(_timed(run, env), _timed(BARE, env)) for _ in range(args.pairs)]
    print(f'costmodel run {args.scenario} beside python -c "{BARE[-1]}": {args.pairs} pairs')
    for i, what in enumerate(("wall", "CPU")):
        a = statistics.median(p[0][i] for p in pairs)
        b = statistics.median(p[1][i] for p in pairs)
        ratio = statistics.median(p[0][i] / p[1][i] for p in pairs)
        print(f"  {what:4} median  run {a:.3f} s  imports {b:.3f} s  ratio {ratio:.2f}x")
    print(f"target: a ratio within {TARGET}x")


if __name__ == "__main__":
    main()
