"""marshmallow imported without compiling the e-mail patterns of its validators at import.

``marshmallow.validate.Email`` compiles two patterns as its module is imported; the domain one,
a case-insensitive class of every character from U+00A1 to U+FFFF written out five times, takes
some 25 ms, a tenth of a plain ``costmodel run``, and no scenario field validates e-mail
addresses. While this module imports marshmallow, a pattern that ``marshmallow.validate``
compiles is handed back as one that compiles itself when first used; every other caller of
:func:`re.compile` is served as usual.
"""

from __future__ import annotations

import re
import sys
from typing import Any

__all__: list[str] = []

_MODULE = "marshmallow.validate"
_compile = re.compile


class _OnFirstUse:
    """A regular expression compiled the first time one of its attributes is read (dunder
    names excepted: ``abc`` and ``copy`` look those up on class attributes without using
    them)."""

    __slots__ = ("_args", "_pattern")

    def __init__(self, pattern: Any, flags: int) -> None:
        self._args = (pattern, flags)
        self._pattern: re.Pattern | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if self._pattern is None:
            self._pattern = _compile(*self._args)
        return getattr(self._pattern, name)


def _deferring(pattern: Any, flags: int = 0) -> Any:
    if sys._getframe(1).f_globals.get("__name__") == _MODULE:
        return _OnFirstUse(pattern, flags)
    return _compile(pattern, flags)


if _MODULE not in sys.modules:
    re.compile = _deferring  # type: ignore[assignment]
    try:
        import marshmallow.validate  # noqa: F401
    finally:
        re.compile = _compile
