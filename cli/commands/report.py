"""``costmodel report``: a report of a scenario, a plan or a result JSON."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cli.common import UsageError, catalog, check_output
from cli.options import FORMATS, add_format, add_overrides, add_prices, add_serving, command

__all__ = ["add_parser", "execute"]

#: The report format each file extension stands for.
_SUFFIXES = {".html": "html", ".htm": "html", ".md": "md", ".csv": "csv", ".xlsx": "xlsx",
             ".json": "json"}  # fmt: skip


def add_parser(sub) -> None:
    p = command(
        sub,
        "report",
        help="write a report of a scenario, a plan or a result JSON",
        description="Write an HTML, Markdown, CSV, XLSX or JSON report of a scenario or plan "
        "YAML (evaluated first) or of a result JSON written by 'run', 'plan' or 'batch'.",
        examples=(
            "costmodel report scenario.yaml -o report.html",
            "costmodel report result.json --format xlsx -o report",
        ),
    )
    p.add_argument("input", metavar="FILE", help="scenario or plan YAML, or result JSON")
    add_format(p, FORMATS, "report format (default: from OUT's extension); OUT is written as named")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="report file to write")
    add_overrides(p, "the scenario's simulation block; scenarios only")
    add_prices(p)
    add_serving(p)
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    import scenarios
    from present.reports import write

    check_output(args.output, args.format, (args.input, args.prices, args.serving))
    out, fmt = Path(args.output), _format(args.output, args.format)
    source = Path(args.input)
    result = _read_result(source) if source.suffix.lower() == ".json" else None
    if result is None:
        result = scenarios.evaluate(
            source,
            samples=args.samples,
            seed=args.seed,
            catalog=catalog(args.prices, args.serving),
        )
    elif any(v is not None for v in (args.samples, args.seed, args.prices, args.serving)):
        raise UsageError(
            "--samples/--seed/--prices/--serving apply to a scenario or a plan, not to a result "
            "JSON"
        )
    try:
        written = write(result, fmt, out)
    except OSError as exc:
        raise UsageError(f"{out}: cannot write the report: {exc.strerror or exc}") from None
    for path in written:
        print(path)
    return 0


def _format(output: str, fmt: str | None) -> str:
    """The report's format: ``--format``, else the one ``-o``'s extension stands for."""
    if fmt is not None:
        return fmt
    known = _SUFFIXES.get(Path(output).suffix.lower())
    if known is None:
        raise UsageError(
            f"cannot tell the report format from {output!r}: give --format, or end the "
            f"file name in one of {', '.join(_SUFFIXES)}"
        )
    return known


#: The largest result JSON read [byte]: more than any result written by 'run', 'plan' or 'batch'.
_MAX_RESULT_BYTES = 2**30


def _result_text(source: Path) -> str:
    """The text of a result JSON file: a regular file (a device or a pipe may never end) of at
    most :data:`_MAX_RESULT_BYTES`."""
    from scenarios.errors import ScenarioError

    problem = None
    try:
        size = source.stat().st_size
        if not source.is_file():
            what = "a folder" if source.is_dir() else "not a file (a device or a pipe)"
            problem = f"is {what}; a result JSON is read from a file"
        elif size > _MAX_RESULT_BYTES:
            problem = f"the file is larger than {_MAX_RESULT_BYTES:,} bytes: no result is"
        else:
            return source.read_text(encoding="utf-8")
    except FileNotFoundError:
        problem = "file not found"
    except OSError as exc:
        problem = str(exc)
    except UnicodeDecodeError as exc:
        problem = f"malformed JSON: {exc}"
    raise ScenarioError(str(source), [{"path": "", "message": problem}])


def _text_problems(data: dict) -> list[dict[str, str]]:
    """``{path, message}`` of each text of a result that :func:`pricing.text.text_problem`
    refuses (a control character, a lone surrogate), in key-path order; iterative."""
    from pricing.text import text_problem

    problems = []
    stack: list[tuple[object, str]] = [(data, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(value))
        elif isinstance(value, str) and (problem := text_problem(value, "text")):
            problems.append({"path": path, "message": problem})
    return sorted(problems, key=lambda p: p["path"])


def _read_result(source: Path):
    """A result JSON file, validated: a plan's (``kind: plan``) or a scenario's; any other JSON
    is ``None`` (read as a scenario or a plan)."""
    from marshmallow import ValidationError

    from present import from_dict
    from scenarios.errors import ScenarioError, flatten_messages

    text = _result_text(source)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ScenarioError(
            str(source), [{"path": "", "message": f"malformed JSON: {exc}"}]
        ) from None
    except RecursionError:
        raise ScenarioError(
            str(source), [{"path": "", "message": "malformed JSON: nested too deeply"}]
        ) from None
    if not (isinstance(data, dict) and "schema_version" in data):
        return None
    problems = _text_problems(data)
    if problems:  # a hand-edited file: no report (an XLSX sheet least) can hold such text
        raise ScenarioError(str(source), problems)
    try:
        return from_dict(data)
    except ValidationError as exc:
        raise ScenarioError(str(source), flatten_messages(exc.messages)) from None
