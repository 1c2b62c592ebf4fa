"""Pages drawn without rich (cli.plain) are the pages rich draws, byte for byte, or not drawn.

Where the plain console cannot draw a page exactly it raises ``Unplain`` and the command draws
it with rich; these tests draw every page both ways at many widths, and random text and tables,
and hold the plain drawing to rich's wherever it draws.
"""

from __future__ import annotations

import builtins
import io
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

import scenarios
from cli import tables
from cli.plain import PlainConsole, PlainTable, Unplain, plain_console
from pricing import load_catalog
from scenarios.compare import compare, load_request
from scenarios.library import examples

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "scenarios" / "examples").glob("*.yaml"))
WIDTHS = (20, 33, 40, 55, 72, 80, 100, 160, 250)

Draw = Callable[[object], None]


def _lines(text: str) -> str:
    """A page as ``cli.common.print_rendered`` prints it: lines without trailing blanks."""
    return "".join(line.rstrip() + "\n" for line in text.splitlines())


def _rich(draw: Draw, width: int) -> str:
    console = Console(width=width, highlight=False, color_system=None, file=io.StringIO())
    with console.capture() as capture:
        draw(console)
    return _lines(capture.get())


def _plain(draw: Draw, width: int) -> str | None:
    """The page drawn plain, or ``None`` where only rich draws it."""
    console = PlainConsole(width)
    try:
        draw(console)
    except Unplain:
        return None
    return _lines(console.text())


@pytest.fixture(scope="module")
def pages() -> dict[str, Draw]:
    """Every page the commands draw: each example's result, the catalog, the examples and a
    comparison."""
    out: dict[str, Draw] = {}
    for path in EXAMPLES:
        result = scenarios.evaluate(path, samples=300)
        page = tables.print_plan if path.stem.startswith("plan-") else tables.print_result
        out[path.stem] = lambda console, page=page, result=result: page(result, console)
    catalog = load_catalog()
    for table in ("gpus", "instances"):
        out[table] = lambda console, t=table: tables.print_catalog(catalog, t, console)
    shipped = examples()
    out["examples"] = lambda console: tables.print_examples(shipped, console)
    ranked = compare(load_request({"utilisation": 0.5, "samples": 100}), catalog)
    out["compare"] = lambda console: tables.print_compare(ranked, console, 8)
    return out


def test_every_page_is_drawn_plain_as_rich_draws_it_or_left_to_rich(pages):
    drawn = set()
    for name, draw in pages.items():
        for width in WIDTHS:
            plain = _plain(draw, width)
            if plain is not None:
                assert plain == _rich(draw, width), (name, width)
                drawn.add((name, width))
    # the pages of the commands people run are drawn plain where their tables fit
    assert {(p.stem, 80) for p in EXAMPLES if not p.stem.startswith("plan-h100")} <= drawn
    assert {(name, 100) for name in pages if name != "examples"} <= drawn  # its text wraps


def test_the_characters_drawn_plain_are_one_cell_wide_for_rich():
    plain = []
    for code in range(0x20, 0x3000):
        char = chr(code)
        try:
            PlainConsole(4).print(char)
        except Unplain:
            continue
        plain.append(char)
        assert cell_len(char) == 1, hex(code)
    assert {"a", "é", "–", "−", "→", "±", "†", "─"} <= set(plain)
    assert not {"\u00ad", "\u200b", "中", "\u0301"} & set(plain)  # soft hyphen, 0 or 2 cells


def _print_both(text: str, width: int, markup: bool) -> tuple[str | None, str | None]:
    """``text`` printed plain (``None`` where only rich prints it) and by rich (``None`` where
    the plain console did not print it: rich raises on some markup)."""

    def draw(console) -> None:
        console.print(text, markup=markup, highlight=False)

    plain = _plain(draw, width)
    return plain, None if plain is None else _rich(draw, width)


@settings(max_examples=400, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(["a", "bb", "ccc ", " ", "  ", "\n", "–", "é", "[bold]", "[/bold]", ":x:"])
        | st.sampled_from(["[a]", "[USD]", "x" * 12, ":smile:", "\\", "中", "\t"]),
        max_size=30,
    ).map("".join),
    width=st.integers(1, 30),
    markup=st.booleans(),
)
def test_text_is_wrapped_as_rich_wraps_it(text, width, markup):
    plain, rich = _print_both(text, width, markup)
    assert plain is None or plain == rich


def test_what_only_rich_draws_is_left_to_it():
    for text in ("lab [draft]", ":smile: lab", "a\\[b", "中文", "tab\there", "x" * 11):
        assert _print_both(text, 10, markup=True)[0] is None, text
    assert _print_both("[bold]lab[/bold]  (samples 1)", 40, markup=True)[0] == "lab  (samples 1)\n"
    assert _print_both("[draft]", 40, markup=False)[0] == "[draft]\n"


_cells = st.lists(st.sampled_from(["", "a", "bb", "1.5 %", "$1,000", "x\ny", "–", " z"]))


@settings(max_examples=300, deadline=None)
@given(
    columns=st.lists(st.tuples(_cells.map("".join), st.booleans()), min_size=1, max_size=5),
    rows=st.lists(st.lists(_cells.map("".join), min_size=5, max_size=5), max_size=4),
    width=st.integers(5, 40),
)
def test_tables_are_drawn_as_rich_draws_them(columns, rows, width):
    def draw(console) -> None:
        if isinstance(console, PlainConsole):
            table = PlainTable()
            for header, right in columns:
                table.add_column(header, right=right)
            add = table.add_row
        else:
            table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
            for header, right in columns:
                table.add_column(Text(header), justify="right" if right else "left", no_wrap=True)
            add = lambda *cells: table.add_row(*map(Text, cells))  # noqa: E731
        for row in rows:
            add(*row[: len(columns)])
        console.print(table)

    plain = _plain(draw, width)
    assert plain is None or plain == _rich(draw, width)


@pytest.mark.parametrize(
    "env, plain",
    [
        ({"COLUMNS": "57"}, True),
        ({"COLUMNS": "57", "FORCE_COLOR": "1"}, False),  # rich styles the output
        ({"COLUMNS": "57", "FORCE_COLOR": ""}, True),
        ({"COLUMNS": "57", "TTY_COMPATIBLE": "1"}, False),
        ({"COLUMNS": "57", "TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"}, True),
        ({}, True),
    ],
)
def test_the_plain_console_stands_in_where_rich_prints_no_styles(env, plain, monkeypatch):
    for key in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    console = plain_console()
    rich = Console(highlight=False)
    assert (console is not None) == plain == (rich.color_system is None)
    if console is not None:
        assert console.width == rich.width
    monkeypatch.setattr(builtins, "get_ipython", lambda: None, raising=False)
    assert plain_console() is None  # a notebook: rich sizes and styles it its own way


def test_a_run_into_a_pipe_imports_neither_rich_nor_the_other_commands():
    code = (
        "import sys; from cli import main; main(['run', 'worked-example']); "
        "print(sorted(m for m in sys.modules if m.startswith(('rich', 'cli.commands.'))), "
        "file=sys.stderr)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    assert "Break-even utilisation" in out.stdout
    assert out.stderr.strip() == "['cli.commands.run']"
