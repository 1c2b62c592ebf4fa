"""The one rule for the user's free text (names, descriptions, a price's source and note): it
must be valid Unicode and hold no control character that no report or spreadsheet can hold;
and the one rule for a count in words (``counted``: "1 server", "2 servers", "both regions").

>>> text_problem("lab build", "text") is None
True
>>> text_problem("a\\x01b", "text")
'text holds the control character U+0001; remove it'
>>> counted(1, "server"), counted(12_000, "draw"), counted(2, "region", every=True)
('1 server', '12,000 draws', 'both regions')
"""

from __future__ import annotations

import re

__all__ = ["counted", "text_problem"]

#: Control characters no report or spreadsheet can hold (tab, newline and CR are fine).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: A surrogate code point: half of a UTF-16 pair, no character on its own.
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def text_problem(text: str, what: str) -> str | None:
    """What is wrong with ``text`` (``what`` names it: ``"text"``, ``"key"``), or ``None``.

    A surrogate pair written as two escapes (``"\\ud83d\\ude80"``, which YAML does not join
    as JSON does) is named with the escape of the character it stands for."""
    control = _CONTROL.search(text)
    if control is not None:
        return f"{what} holds the control character U+{ord(control.group()):04X}; remove it"
    surrogate = _SURROGATE.search(text)
    if surrogate is None:
        return None
    high, low = text[surrogate.start() : surrogate.start() + 2].ljust(2)
    if "\ud800" <= high <= "\udbff" and "\udc00" <= low <= "\udfff":
        code = 0x10000 + ((ord(high) - 0xD800) << 10) + (ord(low) - 0xDC00)
        return (
            f"{what} holds the surrogate pair \\u{ord(high):04x}\\u{ord(low):04x}, which YAML "
            f"does not join into a character; write \\U{code:08x} or the character itself"
        )
    return (
        f"{what} holds the unpaired surrogate \\u{ord(high):04x}, which is not a character; "
        "use the character itself or its surrogate pair"
    )


def counted(n: float, noun: str, plural: str | None = None, *, every: bool = False) -> str:
    """``n`` of ``noun`` in words: "1 server", "3 servers", "12,000 draws", "0.5 GPUs"
    (``plural`` for a noun that takes no "s"). With ``every``, all of them: "the only region",
    "both regions", "all 3 regions"."""
    many = plural or f"{noun}s"
    number = f"{n:,}" if isinstance(n, int) else f"{n:,g}"
    if every:
        return {1: f"the only {noun}", 2: f"both {many}"}.get(n, f"all {number} {many}")
    return f"{number} {noun if n == 1 else many}"
