"""``costmodel run``: evaluate one scenario file and print the answer."""

from __future__ import annotations

import argparse

from cli.common import evaluate, load, show_evaluation
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


def _print_result(result, console) -> None:
    from cli.tables import print_result  # the tables only when they are shown, not for JSON

    print_result(result, console)


def execute(args: argparse.Namespace) -> int:
    document = load(args.file, "scenario", args.prices, args.serving)
    timings: dict[str, float] = {}
    result = evaluate(document, args, timings)
    show_evaluation(
        args, result, _print_result, timings, f"{len(result.utilisation)} utilisation levels"
    )
    return 0
