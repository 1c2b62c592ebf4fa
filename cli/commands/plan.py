"""``costmodel plan``: evaluate a fleet plan and print the best mix and every candidate."""

from __future__ import annotations

import argparse

from cli.common import evaluate, load, show_evaluation
from cli.options import add_evaluation
from pricing.text import counted

__all__ = ["add_parser", "execute"]


def add_parser(sub) -> None:
    add_evaluation(
        sub,
        "plan",
        execute,
        help="evaluate a fleet plan: how many servers to own, reserve and burst",
        description="Evaluate a plan file (kind: plan): every mix of owned servers and "
        "reserved instances against a growing, uncertain demand, the rest burst to on-demand "
        "or spot instances; prints the best mix, the cost-versus-risk frontier and each "
        "candidate's cost.",
        examples=(
            "costmodel plan plan-lab-rtx4090-growth",
            "costmodel plan plan.yaml --samples 20000 --format json > plan-result.json",
        ),
        document=(
            "plan YAML file (kind: plan), or the name of a shipped example (see 'costmodel "
            "examples')",
            "the plan's simulation block",
        ),
    )


def execute(args: argparse.Namespace) -> int:
    from cli.tables import print_plan

    document = load(args.file, "plan", args.prices, args.serving)
    timings: dict[str, float] = {}
    result = evaluate(document, args, timings)
    show_evaluation(args, result, print_plan, timings, counted(len(result.candidates), "candidate"))
    return 0
