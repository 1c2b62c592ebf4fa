"""marshmallow imported without what its e-mail and RFC 822 date support costs at import.

``marshmallow.validate.Email`` compiles two patterns as its module is imported; the domain one,
a case-insensitive class of every character from U+00A1 to U+FFFF written out five times, takes
some 25 ms, a tenth of a plain ``costmodel run``, and no scenario field validates e-mail
addresses. While this module imports marshmallow, a pattern that ``marshmallow.validate``
compiles is handed back as one that compiles itself when first used; every other caller of
:func:`re.compile` is served as usual.

``marshmallow.fields`` imports ``email.utils`` (with ``socket``, ``random``, ``calendar`` and
the e-mail header codecs, some 7 ms) for the RFC 822 format of its DateTime field, which no
scenario uses. While marshmallow is imported, ``email.utils`` is a stand-in whose functions
import the real module when first called (any other name read of it is the real module's);
afterwards the next ``import email.utils`` imports the real module.
"""

from __future__ import annotations

import importlib
import re
import sys
import types
from collections.abc import Callable
from typing import Any

__all__: list[str] = []

_MODULE = "marshmallow.validate"
_EMAIL_UTILS = "email.utils"
#: What ``marshmallow.fields`` reads of ``email.utils`` as it is imported.
_RFC822 = ("format_datetime", "parsedate_to_datetime")
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


def _real_email_utils() -> types.ModuleType:
    """The real ``email.utils``, the stand-in taken out of ``sys.modules`` first if it is
    still there."""
    if isinstance(sys.modules.get(_EMAIL_UTILS), _EmailUtils):
        del sys.modules[_EMAIL_UTILS]
    return importlib.import_module(_EMAIL_UTILS)


def _on_call(name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(_real_email_utils(), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


class _EmailUtils(types.ModuleType):
    """``email.utils`` while marshmallow is imported: the :data:`_RFC822` functions, and the
    real module's for any other name."""

    def __init__(self) -> None:
        super().__init__(_EMAIL_UTILS)
        for name in _RFC822:
            setattr(self, name, _on_call(name))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(_real_email_utils(), name)


if _MODULE not in sys.modules:
    import email

    if _EMAIL_UTILS not in sys.modules:
        sys.modules[_EMAIL_UTILS] = email.utils = _EmailUtils()
    re.compile = _deferring  # type: ignore[assignment]
    try:
        import marshmallow.validate  # noqa: F401
    finally:
        re.compile = _compile
        if isinstance(sys.modules.get(_EMAIL_UTILS), _EmailUtils):
            del sys.modules[_EMAIL_UTILS]  # email.utils stays the stand-in until imported
