"""``costmodel examples``: the example scenarios and plans shipped with the package."""

from __future__ import annotations

import argparse

from cli.common import print_rendered
from cli.options import command

__all__ = ["add_parser", "execute"]


def add_parser(sub) -> None:
    p = command(
        sub,
        "examples",
        help="list the shipped example scenarios and plans",
        description="List the example scenarios and plans shipped with the package: name, "
        "kind and what each compares. 'costmodel run NAME' and 'costmodel plan NAME' take a "
        "name from any folder; in Python, scenarios.example(NAME) is its path.",
        examples=(
            "costmodel examples",
            "costmodel run lab-4x-rtx2080ti-vs-p3-8xlarge",
            "costmodel plan plan-lab-rtx4090-growth",
        ),
    )
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    from cli.tables import print_examples
    from scenarios.library import examples

    shipped = examples()
    print_rendered(lambda console: print_examples(shipped, console))
    return 0
