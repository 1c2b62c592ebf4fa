"""The one error type of the scenario layer, and the one flattener of marshmallow messages.

Both doors report problems the same way: the command line as ``file:line: key.path: message``
lines, HTTP as ``errors: [{path, message}]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from marshmallow import Schema, fields

from pricing.suggest import closest

__all__ = ["ScenarioError", "flatten_messages"]


class ScenarioError(ValueError):
    """A scenario that cannot be run.

    ``file`` is the source (a path, or ``"<request>"`` for HTTP bodies); ``errors`` is a list of
    ``{"path": "buy.pue", "message": "...", "line": 12?}`` with dotted key paths (``""`` for
    the whole document). ``str(error)`` is one readable line per problem.
    """

    def __init__(self, file: str | None, errors: list[dict]) -> None:
        self.file = file
        self.errors = errors
        super().__init__(self._text())

    def _text(self) -> str:
        lines = []
        for e in self.errors:
            where = self.file or "<scenario>"
            if e.get("line"):
                where += f":{e['line']}"
            path = f" {e['path']}:" if e.get("path") else ""
            lines.append(f"{where}:{path} {e['message']}")
        return "\n".join(lines)


def _child_schema(schema: Schema | None, key: str) -> Schema | None:
    field = schema.fields.get(key) if schema is not None else None
    if isinstance(field, fields.Nested):
        return field.schema
    cls = getattr(field, "schema_cls", None)  # a catalog id or an inline mapping
    return cls() if cls is not None else None


def _unknown(schema: Schema | None, key: str) -> str:
    if schema is None:
        return "unknown key"
    valid = [name for name, f in schema.fields.items() if not f.dump_only]
    close = closest(key, valid, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown key{hint}; valid keys: {', '.join(valid)}"


def _plain(text: str) -> str:
    if text == "Missing data for required field.":
        return "required key is missing"
    if text.startswith("Not a valid"):
        return f"wrong type: {text[0].lower()}{text[1:]}"
    if text == "Field may not be null.":
        return "must not be null"
    return text


def flatten_messages(
    messages: Any, schema: Schema | None = None, path: str = ""
) -> list[dict[str, str]]:
    """marshmallow (or webargs) error messages as ``[{path, message}]`` with dotted key paths.

    With the ``schema`` that produced them, unknown keys list the valid keys and the closest one.
    """
    out: list[dict[str, str]] = []
    _flatten(messages, schema, path, out)
    return out


def _flatten(messages: Any, schema: Schema | None, path: str, out: list[dict[str, str]]) -> None:
    if isinstance(messages, Mapping):
        for key, value in messages.items():
            if key == "_schema":
                _flatten(value, schema, path, out)
                continue
            if isinstance(key, int):
                child_path, child_schema = f"{path}[{key}]", schema
            else:
                child_path = f"{path}.{key}" if path else str(key)
                child_schema = _child_schema(schema, str(key))
            if value == ["Unknown field."]:
                out.append({"path": child_path, "message": _unknown(schema, str(key))})
            else:
                _flatten(value, child_schema, child_path, out)
    elif isinstance(messages, list | tuple):
        for item in messages:
            _flatten(item, schema, path, out)
    else:
        out.append({"path": path, "message": _plain(str(messages))})


def by_line(errors: list[dict]) -> list[dict]:
    """``errors`` in the order of their YAML lines (those without a line first, in order)."""
    return sorted(errors, key=lambda e: e.get("line") or 0)
