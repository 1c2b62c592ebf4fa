"""Read scenarios from YAML files or mappings and validate them against the schema.

YAML is parsed once with ``yaml.safe_load`` semantics; its node tree gives errors the line of the
offending key, and duplicate keys are refused rather than silently overwritten. Hostile documents
are refused before they cost much: a file larger than :func:`max_file_bytes` before it is parsed,
more than :data:`MAX_VALUES` values while it is parsed (with libyaml's parser where installed),
alias bombs, deep nesting, and numbers or text Python cannot hold before anything walks them
recursively. Every problem is reported at once as a :class:`ScenarioError` naming the file, the
dotted key path, the line and the valid choices.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import yaml
from marshmallow import ValidationError
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from present.prebuilt import prebuilt
from pricing.text import text_problem

from .errors import ScenarioError, flatten_messages
from .schema import PlanSchema, ScenarioSchema

__all__ = [
    "FILE_BYTES_VAR",
    "KINDS",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_VALUES",
    "byte_setting",
    "check_shape",
    "load_documents",
    "max_file_bytes",
    "read_yaml",
    "validate",
    "with_lines",
]


#: The most values (mappings, lists and scalars, aliases counted each time they are used) a
#: document may hold: a scenario holds a few hundred, so only an alias bomb comes near.
MAX_VALUES = 100_000
#: The deepest nesting of mappings and lists a document may have (a scenario needs 5).
MAX_DEPTH = 32
#: The largest scenario file read by default [byte]; a scenario is a few kilobytes.
MAX_FILE_BYTES = 1024 * 1024
#: The environment variable that sets another limit [byte].
FILE_BYTES_VAR = "COSTMODEL_MAX_FILE_BYTES"


def max_file_bytes() -> int:
    """The largest file :func:`read_yaml` reads [byte]: ``$COSTMODEL_MAX_FILE_BYTES``, else
    :data:`MAX_FILE_BYTES`. Raises ``ValueError`` naming the variable when it is not a positive
    integer."""
    return byte_setting(FILE_BYTES_VAR, MAX_FILE_BYTES)


def byte_setting(var: str, default: int) -> int:
    """A count of bytes from the environment variable ``var``, else ``default`` [byte].
    Raises ``ValueError`` naming the variable when it is not a positive integer."""
    text = os.environ.get(var, "").strip()
    if not text:
        return default
    try:
        limit = int(text)
    except ValueError:
        limit = 0
    if limit < 1:
        raise ValueError(f"{var} must be a positive integer [byte], got {text!r}")
    return limit


def _too_many() -> str:
    return (
        f"the document holds more than {MAX_VALUES:,} values (YAML aliases count each time they "
        "are used); a scenario needs a few hundred"
    )


def _path(parent: str, key: object) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


def check_shape(data: Any) -> list[dict]:
    """Problems of a parsed document that the schema cannot see safely: more than
    :data:`MAX_VALUES` values (YAML aliases count each time they are used, so an alias bomb is
    refused before anything expands it), nesting deeper than :data:`MAX_DEPTH`, and text that
    is not valid Unicode (a lone surrogate such as ``"\\ud800"``) or holds a control character
    no report can hold. Iterative, so that no input can exhaust the stack; stops at the first
    size or depth problem.
    """
    problems: list[dict] = []
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    count = 0
    while stack:
        value, path, depth = stack.pop()
        count += 1
        if count > MAX_VALUES:
            return [*problems, {"path": "", "message": _too_many()}]
        if isinstance(value, Mapping | list | tuple) and depth >= MAX_DEPTH:
            message = f"nested deeper than {MAX_DEPTH} levels; a scenario needs 5"
            return [*problems, {"path": path, "message": message}]
        if isinstance(value, Mapping):
            for key, item in value.items():
                problem = text_problem(key, "key") if isinstance(key, str) else None
                if problem is not None:
                    problems.append({"path": path, "message": problem})
                    continue
                stack.append((item, _path(path, key), depth + 1))
        elif isinstance(value, list | tuple):
            stack.extend((item, _path(path, i), depth + 1) for i, item in enumerate(value))
        elif isinstance(value, str):
            problem = text_problem(value, "text")
            if problem is not None:
                problems.append({"path": path, "message": problem})
    return problems


def _lines(node: yaml.Node) -> tuple[dict[str, int], list[dict]]:
    """The YAML line of every key path, and the duplicate keys; the walk stops after
    :data:`MAX_VALUES` nodes (:func:`check_shape` says why)."""
    lines: dict[str, int] = {}
    problems: list[dict] = []
    stack: list[tuple[yaml.Node, str]] = [(node, "")]
    for _ in range(MAX_VALUES):
        if not stack:
            break
        node, path = stack.pop()
        lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in node.value:
                name = str(key.value)
                child = _path(path, name)
                if name in seen:
                    problems.append(
                        {"path": child, "line": key.start_mark.line + 1, "message": "duplicate key"}
                    )
                seen.add(name)
                lines[child] = key.start_mark.line + 1
                stack.append((value, child))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, _path(path, i)) for i, item in enumerate(node.value))
    problems.sort(key=lambda p: p["line"])
    return lines, problems


class _TooManyValues(Exception):
    """Raised while composing: the document has more than :data:`MAX_VALUES` nodes."""


class _Counting:
    """Composes at most :data:`MAX_VALUES` nodes (an alias counts once per use), so that a
    file of a million list items stops after the first hundred thousand."""

    _nodes = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._nodes += 1
        if self._nodes > MAX_VALUES:
            raise _TooManyValues
        return super().compose_node(parent, index)  # type: ignore[misc]


class _Resolver(Resolver):
    """The safe loader's implicit types, with YAML 1.2's floats too: ``1.5e3`` and ``2E6`` are
    numbers, not the text YAML 1.1 reads them as (its exponent needs a dot and a sign)."""


_Resolver.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


class _PythonLoader(_Counting, yaml.SafeLoader, _Resolver):
    """PyYAML's own safe loader: its messages name the offending character and line."""


def _libyaml_loader() -> type | None:
    """The safe loader on libyaml's parser, composing in Python (so that nodes are counted),
    or ``None`` without libyaml: parsing is several times faster."""
    try:
        from yaml._yaml import CParser
    except ImportError:
        return None

    def init(self: Any, stream: str) -> None:
        CParser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)

    def compose_scalar_node(self: Any, anchor: Any) -> Any:
        event = self.peek_event()
        if event.tag == "!":  # PyYAML's parser marks a "!"-tagged scalar implicit; libyaml not
            event.implicit = (True, False)
        return Composer.compose_scalar_node(self, anchor)

    # Composer before CParser: its Python composition replaces libyaml's, on libyaml's events
    bases = (_Counting, Composer, CParser, SafeConstructor, _Resolver)
    methods = {"__init__": init, "compose_scalar_node": compose_scalar_node}
    return type("_LibyamlLoader", bases, methods)


_FAST_LOADER = _libyaml_loader()


def _load(loader_class: type, text: str) -> tuple[Any, yaml.Node | None]:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return data, node


def _parse(text: str) -> tuple[Any, yaml.Node | None]:
    """The data and node tree of a YAML text, parsed once with the safe loader's rules; raises
    ``_TooManyValues`` past :data:`MAX_VALUES` nodes. A text libyaml refuses is parsed again
    by PyYAML, whose messages the errors quote."""
    if _FAST_LOADER is not None:
        try:
            return _load(_FAST_LOADER, text)
        except yaml.YAMLError:
            pass
    return _load(_PythonLoader, text)


def _read_text(path: str | os.PathLike, source: str) -> str:
    """The text of a file of at most :func:`max_file_bytes` bytes, refused unread if larger."""
    try:
        limit = max_file_bytes()
    except ValueError as exc:
        raise ScenarioError(source, [{"path": "", "message": str(exc)}]) from None
    try:
        with open(path, "rb") as f:
            raw = f.read(limit + 1)
    except FileNotFoundError:
        raise ScenarioError(source, [{"path": "", "message": "file not found"}]) from None
    except IsADirectoryError:
        message = (
            f"is a folder, not a file; 'costmodel batch {source} --out DIR' runs every file in it"
        )
        raise ScenarioError(source, [{"path": "", "message": message}]) from None
    except OSError as exc:
        reason = exc.strerror or exc  # the path is said once, by the error
        raise ScenarioError(
            source, [{"path": "", "message": f"cannot read file: {reason}"}]
        ) from None
    if len(raw) > limit:
        message = (
            f"the file is larger than {limit:,} bytes ({FILE_BYTES_VAR}); a scenario is a few "
            "kilobytes"
        )
        raise ScenarioError(source, [{"path": "", "message": message}])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(source, [{"path": "", "message": f"cannot read file: {exc}"}]) from None


def read_yaml(path: str | os.PathLike) -> tuple[Any, dict[str, int]]:
    """Parse a YAML file; returns the data and a map from key path to line number.

    Raises :class:`ScenarioError` for a missing or unreadable file, a file larger than
    :func:`max_file_bytes` (before it is parsed), malformed YAML (with its line), numbers YAML
    cannot hold, a document too large or too deep (:func:`check_shape`; more than
    :data:`MAX_VALUES` values already while it is parsed), text that is not valid Unicode and
    duplicate keys.
    """
    source = str(path)
    text = _read_text(path, source)
    try:
        data, node = _parse(text)
    except _TooManyValues:
        raise ScenarioError(source, [{"path": "", "message": _too_many()}]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        if "'\\t'" in problem:
            problem += "; indent with spaces, not tabs"
        err = {"path": "", "message": f"malformed YAML: {problem}"}
        if mark is not None:
            err["line"] = mark.line + 1
        raise ScenarioError(source, [err]) from None
    except RecursionError:
        message = (
            f"malformed YAML: nested too deeply (a scenario needs 5 levels, at most {MAX_DEPTH})"
        )
        raise ScenarioError(source, [{"path": "", "message": message}]) from None
    except ValueError as exc:  # a date that is no date, an integer of over 4,300 digits
        text = str(exc).split(";")[0]  # not Python's advice on sys.set_int_max_str_digits
        message = f"malformed YAML: a value cannot be read: {text}"
        raise ScenarioError(source, [{"path": "", "message": message}]) from None
    lines, duplicates = _lines(node) if node is not None else ({}, [])
    problems = check_shape(data) + duplicates
    if problems:
        raise ScenarioError(source, with_lines(problems, lines))
    return data, lines


def _what(data: Any) -> str:
    """What a document that is no mapping holds, in words (not Python's type names)."""
    if data is None:
        return "empty document"
    if isinstance(data, bool):
        return "true or false"
    if isinstance(data, int | float):  # not every integer has a repr (4,300 digits at most)
        return (
            f"a number, {data!r}" if isinstance(data, float) or abs(data) < 10**40 else "a number"
        )
    if isinstance(data, str):
        return f"text, {data[:40]!r}" + ("..." if len(data) > 40 else "")
    return "a list" if isinstance(data, list | tuple) else f"a {type(data).__name__}"


#: Document kinds: a rent-versus-buy scenario (also when ``kind`` is left out) or a fleet plan.
KINDS = ("scenario", "plan")


def validate(data: Any, source: str, lines: dict[str, int] | None = None) -> dict:
    """Load ``data`` through :class:`ScenarioSchema`, or :class:`PlanSchema` for ``kind: plan``;
    raise :class:`ScenarioError` on problems. A plan keeps ``kind: plan``; a scenario has no
    ``kind`` key."""
    if not isinstance(data, Mapping):
        message = f"expected a mapping (key: value lines), got {_what(data)}"
        raise ScenarioError(source, [{"path": "", "message": message}])
    problems = check_shape(data)
    if problems:
        raise ScenarioError(source, with_lines(problems, lines))
    kind = data.get("kind", "scenario")
    if kind not in KINDS:
        message = f"unknown kind {kind!r}; valid kinds: {', '.join(KINDS)} (default scenario)"
        raise ScenarioError(source, with_lines([{"path": "kind", "message": message}], lines))
    if kind == "scenario":
        data = {k: v for k, v in data.items() if k != "kind"}
    schema = prebuilt(PlanSchema if kind == "plan" else ScenarioSchema)
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
