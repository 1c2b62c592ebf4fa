"""``costmodel run``: evaluate one scenario file and print the answer."""

from __future__ import annotations

import argparse
import sys

from cli.common import load, print_rendered, write_json
from cli.options import add_evaluation

__all__ = ["add_parser", "execute"]


def add_parser(sub) -> None:
    add_evaluation(
        sub,
        "run",
        execute,
        help="evaluate one scenario file and print the answer",
        description="Evaluate one scenario YAML file: verdict, break-even utilisation and a "
        "table of total cost by utilisation. FILE may also name a shipped example, from any "
        "folder.",
        examples=(
            "costmodel run scenario.yaml",
            "costmodel run lab-4x-rtx2080ti-vs-p3-8xlarge",
            "costmodel run scenario.yaml --samples 100000 --seed 7 --format json > result.json",
        ),
        document=(
            "scenario YAML file, or the name of a shipped example (see 'costmodel examples')",
            "the scenario's simulation block",
        ),
    )


def execute(args: argparse.Namespace) -> int:
    import scenarios
    from cli.progress import ProgressBar
    from cli.tables import print_result

    scenario = load(args.file, "scenario", args.prices)
    timings: dict[str, float] = {}
    with ProgressBar(sys.stderr) as bar:
        result = scenarios.evaluate(
            scenario, samples=args.samples, seed=args.seed, timings=timings, progress=bar
        )
    if args.format == "json":
        write_json(result)
    else:
        print_rendered(lambda console: print_result(result, console))
    if args.verbose:
        print(
            f"engine time: {timings['engine_s'] * 1000:.1f} ms for {result.samples} samples "
            f"x {len(result.utilisation)} utilisation levels",
            file=sys.stderr,
        )
    return 0
