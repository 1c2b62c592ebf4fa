"""Read scenarios from YAML files or mappings and validate them against the schema.

YAML is parsed with ``yaml.safe_load`` semantics (the safe loader's node tree is composed once so
that errors can carry the line of the offending key, and duplicate keys are refused rather than
silently overwritten). Every problem is reported at once as a :class:`ScenarioError` naming the
file, the dotted key path, the line and the valid choices.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from marshmallow import Schema, ValidationError, fields

from .errors import ScenarioError
from .schema import ScenarioSchema, _Ref

__all__ = ["read_yaml", "validate", "load_documents"]


def _walk(node: yaml.Node, path: str, lines: dict[str, int], problems: list[dict]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value)
            child = f"{path}.{name}" if path else name
            if name in seen:
                problems.append(
                    {"path": child, "line": key.start_mark.line + 1, "message": "duplicate key"}
                )
            seen.add(name)
            lines[child] = key.start_mark.line + 1
            _walk(value, child, lines, problems)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, f"{path}[{i}]", lines, problems)


def read_yaml(path: str | os.PathLike) -> tuple[Any, dict[str, int]]:
    """Parse a YAML file; returns the data and a map from key path to line number.

    Raises :class:`ScenarioError` for a missing or unreadable file, malformed YAML (with its
    line) and duplicate keys.
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(source, [{"path": "", "message": "file not found"}]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(source, [{"path": "", "message": f"cannot read file: {exc}"}]) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        err = {"path": "", "message": f"malformed YAML: {problem}"}
        if mark is not None:
            err["line"] = mark.line + 1
        raise ScenarioError(source, [err]) from None
    lines: dict[str, int] = {}
    problems: list[dict] = []
    if node is not None:
        _walk(node, "", lines, problems)
    if problems:
        raise ScenarioError(source, problems)
    return data, lines


def _nested_schema(schema: Schema, key: str) -> Schema | None:
    field = schema.fields.get(key)
    if isinstance(field, fields.Nested):
        return field.schema
    if isinstance(field, _Ref):
        return field.schema_cls()
    return None


def _unknown_message(schema: Schema | None, key: str) -> str:
    if schema is None:
        return "unknown key"
    valid = [name for name in schema.fields if not schema.fields[name].dump_only]
    close = difflib.get_close_matches(key, valid, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown key{hint}; valid keys: {', '.join(valid)}"


def _flatten(messages: Any, schema: Schema | None, path: str, out: list[dict]) -> None:
    if isinstance(messages, Mapping):
        for key, value in messages.items():
            if key == "_schema":
                _flatten(value, schema, path, out)
                continue
            if isinstance(key, int):
                child_path, child_schema = f"{path}[{key}]", schema
            else:
                child_path = f"{path}.{key}" if path else str(key)
                child_schema = _nested_schema(schema, key) if schema is not None else None
            if value == ["Unknown field."]:
                out.append({"path": child_path, "message": _unknown_message(schema, str(key))})
            else:
                _flatten(value, child_schema, child_path, out)
    elif isinstance(messages, list | tuple):
        for item in messages:
            _flatten(item, schema, path, out)
    else:
        text = str(messages)
        if text == "Missing data for required field.":
            text = "required key is missing"
        elif text.startswith("Not a valid"):
            text = f"wrong type: {text[0].lower()}{text[1:]}"
        out.append({"path": path, "message": text})


def validate(data: Any, source: str, lines: dict[str, int] | None = None) -> dict:
    """Load ``data`` through :class:`ScenarioSchema`; raise :class:`ScenarioError` on problems."""
    if not isinstance(data, Mapping):
        kind = "empty document" if data is None else f"a {type(data).__name__}"
        raise ScenarioError(source, [{"path": "", "message": f"expected a mapping, got {kind}"}])
    schema = ScenarioSchema()
    try:
        return schema.load(data)
    except ValidationError as exc:
        errors: list[dict] = []
        _flatten(exc.messages, schema, "", errors)
        raise ScenarioError(source, _with_lines(errors, lines)) from None


def _with_lines(errors: list[dict], lines: dict[str, int] | None) -> list[dict]:
    if not lines:
        return errors
    out = []
    for e in errors:
        path = e["path"]
        while path and path not in lines:
            path = path.rsplit(".", 1)[0] if "." in path else ""
        out.append({**e, "line": lines.get(path)} if path in lines else e)
    return out


def load_documents(path: str | os.PathLike) -> list[tuple[str, Any, dict[str, int]]]:
    """The scenarios of a file: one mapping, or a list of mappings (``file[i]`` names item i)."""
    data, lines = read_yaml(path)
    if isinstance(data, list):
        out = []
        for i, item in enumerate(data):
            prefix = f"[{i}]"
            sub = {
                k[len(prefix) + 1 :] if k.startswith(prefix + ".") else "": v
                for k, v in lines.items()
                if k.startswith(prefix)
            }
            out.append((f"{path}[{i}]", item, sub))
        return out
    return [(str(path), data, lines)]
