"""Engine time per example scenario: sampling, equations and summaries, best of several runs.

Target (issue 2): well under a second for 10,000 samples on a 2-core machine.

    python benchmarks/bench_engine.py [--samples 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import scenarios

EXAMPLES = Path(__file__).resolve().parents[1] / "scenarios" / "examples"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'scenario':45} {'levels':>6} {'months':>6} {'best [ms]':>10} {'median [ms]':>12}")
    for path in sorted(EXAMPLES.glob("*.yaml")):
        sc = scenarios.load_file(path)
        times = []
        for _ in range(args.repeat):
            t: dict[str, float] = {}
            result = scenarios.run(sc, samples=args.samples, timings=t)
            times.append(t["engine_s"] * 1000)
        times.sort()
        print(
            f"{sc.name:45} {len(result['utilisation']):>6} "
            f"{result['scenario']['horizon_months']:>6} {times[0]:>10.1f} "
            f"{times[len(times) // 2]:>12.1f}"
        )
    print(f"samples per run: {args.samples}")


if __name__ == "__main__":
    main()
