"""The options several commands share, each built once: every command module adds its own
options to a parser made by :func:`command`, and takes the common ones from here.

Nothing here imports the engine, so that ``--help`` stays quick.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from typing import Any

__all__ = [
    "FORMATS",
    "HelpFormatter",
    "MAX_SAMPLES",
    "MIN_UTILISATION",
    "SERVING_FLAGS",
    "add_evaluation",
    "add_format",
    "add_overrides",
    "add_prices",
    "add_samples",
    "add_seed",
    "add_serving",
    "add_serving_request",
    "add_tier",
    "add_verbose",
    "bounded_int",
    "command",
    "epilog",
]

#: Report formats (``present.reports.FORMATS``, kept here so that ``--help`` needs no
#: engine import; tests/test_cli.py checks that the two agree).
FORMATS = ("html", "md", "csv", "xlsx", "json")
MAX_SAMPLES = 1_000_000
#: The least busy share a comparison takes [-] (``costmodel.inputs.MIN_UTILISATION``, kept here
#: for ``--help`` as well; tests/test_cli.py checks that the two agree).
MIN_UTILISATION = 1e-6
_MAX_SEED = 2**63 - 1


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` gives it [column]: ``COLUMNS``, else
    standard output's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):  # no, a closed or no terminal
            columns = 0
    return columns or 80


class HelpFormatter(argparse.HelpFormatter):
    """Help that fits the terminal (``COLUMNS``): the description's lines are wrapped to its
    width, indented lines (the examples) are kept as written."""

    def __init__(self, prog: str, **kwargs: Any) -> None:
        # argparse makes one for each option added and asks shutil for the width, whose import
        # (with bz2 and lzma) a run needs not
        kwargs.setdefault("width", _columns() - 2)
        super().__init__(prog, **kwargs)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines: list[str] = []
        for line in text.splitlines():
            if line[:1].isspace() or not line:
                lines.append(indent + line)
            else:
                lines += textwrap.wrap(line, width, initial_indent=indent, subsequent_indent=indent)
        return "\n".join(lines)


def epilog(*lines: str) -> str:
    """The ``examples:`` epilog every command's help ends with."""
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def command(
    sub: Any, name: str, *, help: str, description: str, examples: tuple[str, ...]
) -> argparse.ArgumentParser:
    """The parser of command ``name``: its description and its examples epilog."""
    return sub.add_parser(
        name,
        help=help,
        description=description,
        epilog=epilog(*examples),
        formatter_class=HelpFormatter,
    )


def _count(text: str, what: str, low: int, high: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what} must be an integer, got {text!r}") from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"{what} must be in [{low}, {high:,}], got {value}")
    return value


def bounded_int(what: str, low: int, high: int):
    """An argparse ``type``: an integer from ``low`` to ``high``, else an error naming
    ``what``."""
    return lambda text: _count(text, what, low, high)


def _samples(text: str) -> int:
    return _count(text, "samples", 1, MAX_SAMPLES)


def _seed(text: str) -> int:
    return _count(text, "seed", 0, _MAX_SEED)


def add_samples(p: argparse.ArgumentParser, help: str) -> None:
    """``--samples N``: Monte Carlo draws, 1 to :data:`MAX_SAMPLES` [count]."""
    p.add_argument("--samples", type=_samples, metavar="N", help=help)


def add_seed(p: argparse.ArgumentParser, help: str) -> None:
    """``--seed S``: the random seed, 0 to 2**63 - 1."""
    p.add_argument("--seed", type=_seed, metavar="S", help=help)


def add_overrides(p: argparse.ArgumentParser, what: str) -> None:
    """``--samples`` and ``--seed`` overriding ``what`` (a document's simulation block)."""
    add_samples(p, f"Monte Carlo draws, 1 to {MAX_SAMPLES:,} (overrides {what})")
    add_seed(p, f"random seed (overrides {what})")


def add_prices(p: argparse.ArgumentParser) -> None:
    """``--prices FILE``: the user's prices laid over the catalog's."""
    p.add_argument(
        "--prices",
        metavar="FILE",
        help="your own prices (CSV or YAML: negotiated or current instance and GPU prices) "
        "laid over the catalog's; see docs/prices.md",
    )


def add_serving(p: argparse.ArgumentParser) -> None:
    """``--serving FILE``: the user's serving measurements laid over the catalog's."""
    p.add_argument(
        "--serving",
        metavar="FILE",
        help="your own serving measurements (a CSV written by 'costmodel serving import') "
        "used before the catalog's; see docs/serving-benchmarks.md",
    )


def add_format(p: argparse.ArgumentParser, choices: tuple[str, ...], help: str, **kw: Any) -> None:
    """``--format`` among ``choices`` (``kw``: a default, or ``nargs`` for several)."""
    p.add_argument("--format", choices=choices, help=help, **kw)


def add_verbose(p: argparse.ArgumentParser, help: str) -> None:
    """``--verbose``/``-v``: timings on stderr."""
    p.add_argument("--verbose", "-v", action="store_true", help=help)


def add_evaluation(
    sub: Any,
    name: str,
    func: Any,
    *,
    help: str,
    description: str,
    examples: tuple[str, ...],
    document: tuple[str, str],
) -> argparse.ArgumentParser:
    """A command that evaluates one document (``run``, ``plan``): FILE, the sampling
    overrides, --prices, --serving, --format table|json and --verbose; ``document`` is what
    FILE is and the block the overrides replace. Returns the command's parser."""
    p = command(sub, name, help=help, description=description, examples=examples)
    what, block = document
    p.add_argument("file", metavar="FILE", help=what)
    add_overrides(p, block)
    add_prices(p)
    add_serving(p)
    add_format(
        p,
        ("table", "json"),
        "table for people (default), json for the full result",
        default="table",
    )
    add_verbose(p, "print the engine time on stderr")
    p.set_defaults(func=func)
    return p


def add_tier(p: argparse.ArgumentParser) -> None:
    """``--tier T``: keep the instances of one kind of provider."""
    p.add_argument(
        "--tier",
        metavar="T",
        help="only instances of this tier: hyperscaler, neocloud or marketplace",
    )


#: The options of a serving request (``throughput``, ``compare --model``) by the key each sets,
#: to name the option in an error about its key.
SERVING_FLAGS = {
    "input_tokens": "--input-tokens",
    "output_tokens": "--output-tokens",
    "min_tokens_per_s_per_user": "--min-tokens-per-s-per-user",
    "max_tpot_ms": "--max-tpot-ms",
    "max_ttft_ms": "--max-ttft-ms",
}


def add_serving_request(
    p: argparse.ArgumentParser, *, shape: str, floor: str, ceiling: str
) -> None:
    """The options of :data:`SERVING_FLAGS`: ``--input-tokens I`` and ``--output-tokens O``
    [tokens per request], ``--min-tokens-per-s-per-user S`` [output tokens/s per request],
    ``--max-tpot-ms T`` and ``--max-ttft-ms T`` [ms]. Their help: ``shape`` with ``{side}``
    (input, output), ``floor``, and ``ceiling`` with ``{what}`` (per output token, to first
    token)."""
    for side in ("input", "output"):
        p.add_argument(
            SERVING_FLAGS[f"{side}_tokens"],
            type=int,
            metavar=side[0].upper(),
            help=shape.format(side=side),
        )
    p.add_argument(SERVING_FLAGS["min_tokens_per_s_per_user"], type=float, metavar="S", help=floor)
    for key, what in (("max_tpot_ms", "per output token"), ("max_ttft_ms", "to first token")):
        p.add_argument(SERVING_FLAGS[key], type=float, metavar="T", help=ceiling.format(what=what))
