"""Pages of plain text drawn as rich draws them where the output is no terminal, without rich.

Importing rich and drawing a page with it costs a plain ``costmodel run`` some 30 ms, a tenth of
the whole process, and into a file or a pipe rich drops the only style the pages have (bold).
:class:`PlainConsole` draws such output itself, as rich would: the same width (``COLUMNS``, else
the terminal's, else 80), the same word wrap, the same tables (rich's ``SIMPLE_HEAD`` box
without edges, at their natural width). What it cannot draw exactly as rich does raises
:class:`Unplain`, and the caller draws the page with rich instead: markup other than
``[bold]``, emoji codes, backslashes, characters that are not one cell wide, a word longer than
a line, a table wider than the line. :func:`plain_console` gives none where rich would style
the output (a terminal, ``FORCE_COLOR``, a notebook) or measure it otherwise (Windows).
"""

from __future__ import annotations

import builtins
import os
import re
import sys
from collections.abc import Sequence

__all__ = ["PlainConsole", "PlainTable", "Unplain", "plain_console"]

#: Characters one cell wide for rich (tests/test_plain.py checks each against rich): printable
#: ASCII and Latin, general punctuation, arrows, mathematical operators and box drawing.
_NARROW = re.compile(
    "[\x20-\x7e\u00a1-\u02ff\u2010-\u2027\u2030-\u205e\u2190-\u21ff\u2200-\u22ff\u2500-\u257f]*"
)
#: A word as rich's wrap sees it: the spaces before it (at the start of a line) and after it.
_WORD = re.compile(r"\s*\S+\s*")
#: A markup tag (rich.markup.RE_TAGS) and an emoji code (rich's ``:name:``, even unknown ones).
_TAG = re.compile(r"\[([a-z#/@][^[]*?)]")
_EMOJI = re.compile(r":\S*?:")
_BOLD = ("bold", "/bold")


class Unplain(Exception):
    """Raised for what only rich draws exactly; the page is then drawn with rich."""


def _checked(text: str) -> str:
    """``text`` when each of its lines holds only characters one cell wide, else
    :class:`Unplain`."""
    for line in text.split("\n"):
        if not (line.isprintable() and _NARROW.fullmatch(line)):
            raise Unplain(f"not one cell per character: {line!r}")
    return text


def _cell(text: str) -> str:
    """``text`` for a table cell: :func:`_checked`, and not ending in a new line (rich measures
    such a cell one line shorter than it draws it)."""
    if text.endswith("\n"):
        raise Unplain("a cell ending in a new line")
    return _checked(text)


def _unmarked(text: str) -> str:
    """``text`` without its ``[bold]``/``[/bold]`` tags, which must pair; any other markup is
    :class:`Unplain`."""
    if "[" not in text:
        return text
    if "\\" in text:
        raise Unplain("a backslash in markup")
    opened = False
    for tag in _TAG.findall(text):
        if tag != _BOLD[opened]:
            raise Unplain(f"markup [{tag}]")
        opened = not opened
    return _TAG.sub("", text)


def _wrapped(line: str, width: int) -> list[str]:
    """``line`` broken where rich breaks it (``rich._wrap.divide_line``): before the first word
    that would overrun the line; a word longer than the line (rich folds it) is
    :class:`Unplain`."""
    breaks = [0]
    offset = 0
    for match in _WORD.finditer(line):
        word = match.group()
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            raise Unplain(f"a word longer than {width} characters")
        elif offset and match.start():
            breaks.append(match.start())
            offset = len(word)
    return [line[a:b] for a, b in zip(breaks, [*breaks[1:], len(line)], strict=True)]


class PlainTable:
    """What rich draws for ``Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)`` of
    plain-text cells when it fits the line: each column as wide as its widest line plus one
    space of padding on each inner side, one space between columns, a rule under the header;
    headers aligned to the bottom, rows to the top."""

    def __init__(self) -> None:
        self._columns: list[tuple[str, bool]] = []
        self._rows: list[tuple[str, ...]] = []

    def add_column(self, header: str, *, right: bool) -> None:
        """A column headed ``header``, its cells right-aligned when ``right``, else left."""
        self._columns.append((_cell(header), right))

    def add_row(self, *cells: str) -> None:
        self._rows.append(tuple(_cell(cell) for cell in cells))

    def _pads(self, index: int) -> tuple[int, int]:
        return int(index > 0), int(index < len(self._columns) - 1)

    def _widths(self) -> list[int]:
        """Each column's width, its padding included [cell]."""
        widths = []
        for index, (header, _) in enumerate(self._columns):
            cells = [header, *(row[index] for row in self._rows)]
            text = max((len(line) for cell in cells for line in cell.splitlines()), default=0)
            widths.append(text + sum(self._pads(index)))
        if not all(widths):
            raise Unplain("an empty column")  # rich draws it one cell wide
        return widths

    @property
    def width(self) -> int:
        """The width of the table [cell]."""
        return sum(self._widths()) + len(self._columns) - 1

    def lines(self) -> list[str]:
        """The table's lines, padded to its width."""
        widths = self._widths()
        header = tuple(h for h, _ in self._columns)
        out = self._row(header, widths, bottom=True)
        out.append("─" * self.width)
        for row in self._rows:
            out += self._row(row, widths, bottom=False)
        return out

    def _row(self, cells: Sequence[str], widths: list[int], *, bottom: bool) -> list[str]:
        split = [cell.split("\n") for cell in cells]
        height = max(len(lines) for lines in split)
        drawn = []
        for index, lines in enumerate(split):
            (left, right), (_, justify_right) = self._pads(index), self._columns[index]
            inner = widths[index] - left - right
            blank = [""] * (height - len(lines))
            lines = blank + lines if bottom else lines + blank
            drawn.append(
                [
                    " " * left
                    + (line.rstrip().rjust(inner) if justify_right else line.ljust(inner))
                    + " " * right
                    for line in lines
                ]
            )
        return [" ".join(parts) for parts in zip(*drawn, strict=True)]


class PlainConsole:
    """The part of a rich ``Console(highlight=False)`` that :mod:`cli.tables` draws with:
    :meth:`print` and :attr:`width`; :meth:`text` is the page drawn so far."""

    def __init__(self, width: int) -> None:
        self.width = width
        self._lines: list[str] = []

    def print(
        self,
        text: str | PlainTable = "",
        *,
        markup: bool = True,
        emoji: bool = True,
        highlight: bool | None = None,
        style: str | None = None,
    ) -> None:
        """Draw ``text`` word-wrapped to the width (its ``[bold]`` markup dropped unless
        ``markup`` is false) or a table; ``highlight`` and ``style`` draw nothing in plain
        text."""
        if isinstance(text, PlainTable):
            if text.width > self.width:
                raise Unplain("a table wider than the line")  # rich wraps its cells
            self._lines += text.lines()
            return
        if emoji and _EMOJI.search(text):
            raise Unplain("an emoji code")
        plain = _checked(_unmarked(text) if markup else text)
        for line in plain.split("\n"):
            self._lines += _wrapped(line, self.width)

    def text(self) -> str:
        """The page drawn so far, one line per line."""
        return "".join(line + "\n" for line in self._lines)


def _is_terminal() -> bool:
    """Whether rich would treat standard output as a terminal (``rich.console.Console``'s
    ``is_terminal``)."""
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = os.environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


def _width() -> int:
    """The width rich gives a page [cell]: ``COLUMNS``, else the terminal's of standard input,
    output or error, else 80."""
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    for fd in (0, 1, 2):
        try:
            return os.get_terminal_size(fd).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80


def plain_console() -> PlainConsole | None:
    """A console for standard output, or ``None`` where rich would style it (a terminal, a
    notebook), draw other boxes (no UTF-8) or measure it otherwise (Windows)."""
    encoding = (getattr(sys.stdout, "encoding", None) or "utf-8").lower()
    if sys.platform == "win32" or hasattr(builtins, "get_ipython"):
        return None
    if not encoding.startswith("utf") or _is_terminal():
        return None
    try:
        return PlainConsole(_width())
    except ValueError:  # a COLUMNS of digits int() does not read
        return None
