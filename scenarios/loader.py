"""Read scenarios from YAML files or mappings and validate them against the schema.

YAML is parsed with ``yaml.safe_load`` semantics (the safe loader's node tree is composed once so
that errors can carry the line of the offending key, and duplicate keys are refused rather than
silently overwritten). Every problem is reported at once as a :class:`ScenarioError` naming the
file, the dotted key path, the line and the valid choices.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from marshmallow import ValidationError

from .errors import ScenarioError, flatten_messages
from .schema import ScenarioSchema

__all__ = ["load_documents", "read_yaml", "validate", "with_lines"]


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
        if "'\\t'" in problem:
            problem += "; indent with spaces, not tabs"
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


def validate(data: Any, source: str, lines: dict[str, int] | None = None) -> dict:
    """Load ``data`` through :class:`ScenarioSchema`; raise :class:`ScenarioError` on problems."""
    if not isinstance(data, Mapping):
        kind = "empty document" if data is None else f"a {type(data).__name__}"
        raise ScenarioError(source, [{"path": "", "message": f"expected a mapping, got {kind}"}])
    schema = ScenarioSchema()
    try:
        return schema.load(data)
    except ValidationError as exc:
        errors = flatten_messages(exc.messages, schema)
        raise ScenarioError(source, with_lines(errors, lines)) from None


def with_lines(errors: list[dict], lines: dict[str, int] | None) -> list[dict]:
    """``errors`` with the YAML line of each key path (or of its nearest parent) added."""
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
