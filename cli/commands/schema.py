"""``costmodel schema``: the JSON Schema of the scenario format, for editors."""

from __future__ import annotations

import argparse
import json

from cli.options import command

__all__ = ["add_parser", "execute"]


def add_parser(sub) -> None:
    p = command(
        sub,
        "schema",
        help="print the JSON Schema of the scenario format",
        description="Print a JSON Schema (draft 2020-12) of the scenario format, for editors "
        "that complete and check YAML files.",
        examples=("costmodel schema > scenario.schema.json",),
    )
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    from scenarios.jsonschema import scenario_json_schema

    print(json.dumps(scenario_json_schema(), indent=2))
    return 0
