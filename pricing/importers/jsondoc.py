"""Reading a JSON source file: one error naming the file and the place for any malformed text."""

from __future__ import annotations

import json
from typing import Any

from ..errors import CatalogError

__all__ = ["load", "mapping"]


def load(text: str, file: str) -> Any:
    """The decoded document; invalid or truncated JSON is an error at its line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogError(
            f"invalid JSON at column {exc.colno}: {exc.msg} (a truncated file?)",
            file=file,
            row_id=f"line {exc.lineno}",
        ) from None


def mapping(value: Any, file: str, where: str, what: str) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an error saying what was expected there."""
    if not isinstance(value, dict):
        raise CatalogError(
            f"expected {what} (a JSON object), got {type(value).__name__}", file=file, row_id=where
        )
    return value
