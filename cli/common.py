"""What the commands share when they run: the usage error, the catalog with the user's prices,
loading a document of the command's kind, evaluating it, checked choices and output paths,
printing."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "UsageError",
    "catalog",
    "check_output",
    "choice",
    "evaluate",
    "load",
    "print_rendered",
    "show_evaluation",
]


class UsageError(ValueError):
    """A command-line argument the command cannot use (exit status 2)."""


def print_rendered(draw) -> None:
    """Print what ``draw(console)`` renders, fitted to the terminal, without trailing blanks:
    drawn in plain text where that is what rich would print (:mod:`cli.plain`), else by rich."""
    from cli.plain import Unplain, plain_console

    text = None
    plain = plain_console()
    if plain is not None:
        try:
            draw(plain)
            text = plain.text()
        except Unplain:
            pass
    if text is None:
        from rich.console import Console

        console = Console(highlight=False)
        with console.capture() as capture:
            draw(console)
        text = capture.get()
    sys.stdout.write("".join(line.rstrip() + "\n" for line in text.splitlines()))


def evaluate(document, args, timings: dict[str, float]):
    """The result of a scenario or plan with ``--samples`` and ``--seed``, the engine time in
    ``timings``, drawing a progress bar on stderr while a long run goes (:mod:`cli.progress`)."""
    import scenarios
    from cli.progress import ProgressBar
    from costmodel.allocator import keep_freed_memory

    keep_freed_memory()  # the engine's arrays, freed and made again, not faulted in anew
    with ProgressBar(sys.stderr) as bar:
        return scenarios.evaluate(
            document, samples=args.samples, seed=args.seed, timings=timings, progress=bar
        )


def show_evaluation(args, result, draw, timings: dict[str, float], size: str) -> None:
    """A result as ``--format`` asks (its JSON contract, or the table ``draw(result, console)``
    renders) and with ``--verbose`` the engine time on stderr for ``size`` (what was drawn
    for, beside the samples)."""
    if args.format == "json":
        from present import to_json

        sys.stdout.buffer.write(to_json(result) + b"\n")
        sys.stdout.flush()
    else:
        print_rendered(lambda console: draw(result, console))
    if args.verbose:
        print(
            f"engine time: {timings['engine_s'] * 1000:.1f} ms for {result.samples} samples "
            f"x {size}",
            file=sys.stderr,
        )


def catalog(prices: str | None, serving: str | None = None):
    """The shipped catalog, with the user's prices file (``--prices``) and serving file
    (``--serving``, its rows before the catalog's) laid over it."""
    from pricing import apply_prices, apply_serving, load_catalog, read_prices, read_serving

    found = apply_prices(load_catalog(), read_prices(prices)) if prices else load_catalog()
    return apply_serving(found, read_serving(serving)) if serving else found


def load(path: str, kind: str, prices: str | None = None, serving: str | None = None):
    """The scenario or plan of ``path``, which must be of ``kind`` (the command's), resolved
    with the user's ``prices`` and ``serving`` files laid over the catalog. A bare name that is
    no file (no folder, no ``.yaml``) is the shipped example of that name."""
    import scenarios

    source = Path(path)
    bare = source.name == path and source.suffix.lower() not in (".yaml", ".yml")
    if bare and not source.exists():
        try:
            source = scenarios.example(path)
        except scenarios.ScenarioError as exc:
            raise UsageError(f"{path}: file not found, and {exc.errors[0]['message']}") from None
    loaded = scenarios.load_file(source, catalog=catalog(prices, serving))
    found = "plan" if isinstance(loaded, scenarios.Plan) else "scenario"
    if found != kind:
        command = "plan" if found == "plan" else "run"
        raise UsageError(f"{path}: is a {found}; evaluate it with 'costmodel {command} {path}'")
    return loaded


def choice(kind: str, value: str, valid: Sequence[str]) -> str:
    """``value`` lowercased when it is one of ``valid``; else a usage error listing them."""
    from pricing.suggest import did_you_mean

    key = value.strip().casefold()
    if key in valid:
        return key
    hint = did_you_mean(key, valid)
    raise UsageError(f"unknown {kind} {value!r}; valid: {', '.join(valid)}{hint}")


def check_output(output: str, fmt: str | None, inputs: Sequence[str | None] = ()) -> None:
    """Refuse, before any work, an ``-o`` that names a folder, lies under a file or is one of
    the files the command reads (``inputs``); a missing folder is fine (it is made)."""
    path = Path(output)
    if output.endswith(("/", os.sep)) or path.is_dir():
        example = path / f"report.{fmt or 'html'}"
        raise UsageError(f"{path}: is a folder; give the report's file name, e.g. {example}")
    parent = next((p for p in path.parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise UsageError(f"{path}: cannot write the report: {parent} is not a folder")
    if path.exists():
        same = next((i for i in inputs if i and Path(i).exists() and path.samefile(i)), None)
        if same is not None:
            raise UsageError(f"{output}: is the input {same}; give the output another name")
