"""The example scenarios and plans shipped with the package, by name, from any directory.

>>> import scenarios
>>> path = scenarios.example("lab-4x-rtx2080ti-vs-p3-8xlarge")   # a pathlib.Path
>>> result = scenarios.evaluate(path)

An example's name is its file name without ``.yaml``; :func:`examples` lists them all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from pricing.suggest import closest

from .errors import ScenarioError

__all__ = ["Example", "example", "examples"]

_FOLDER = "examples"
_SUFFIX = ".yaml"


@dataclass(frozen=True)
class Example:
    """A shipped example: its ``name``, ``kind`` (``"scenario"`` or ``"plan"``), a one-sentence
    ``description`` (the first of the file's own) and the ``path`` of its YAML file."""

    name: str
    kind: str
    description: str
    path: Path


def _folder() -> Path:
    """The package's folder of examples (installed as files: see :func:`pricing.load_catalog`
    on ``importlib.resources``)."""
    return Path(__file__).with_name(_FOLDER)


def _names() -> list[str]:
    return sorted(p.name[: -len(_SUFFIX)] for p in _folder().iterdir() if p.name.endswith(_SUFFIX))


def example(name: str) -> Path:
    """The path of the shipped example ``name`` (e.g. ``"worked-example"``).

    Raises :class:`~scenarios.errors.ScenarioError` naming the closest example and listing
    them all when there is none of that name.
    """
    names = _names()
    key = str(name).strip().removesuffix(_SUFFIX)
    if key in names:
        return _folder() / f"{key}{_SUFFIX}"
    close = closest(key, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    message = f"no shipped example of that name{hint}; examples: {', '.join(names)}"
    raise ScenarioError(str(name), [{"path": "", "message": message}])


def examples() -> tuple[Example, ...]:
    """Every shipped example, by name."""
    return tuple(_describe(name, _folder() / f"{name}{_SUFFIX}") for name in _names())


def _describe(name: str, path: Path) -> Example:
    """An example's kind and the first sentence of its description (its ``description``, else
    the comment that opens the file)."""
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    kind = data.get("kind", "scenario")
    description = data.get("description")
    if not description:
        comment = []
        for line in text.splitlines():
            if not line.startswith("#"):
                break
            comment.append(line.lstrip("#").strip())
        description = " ".join(comment)
    return Example(name, kind, _first_sentence(str(description)), path)


#: A sentence ends at ., ? or ! before a space ("Llama 3.1 8B" and "docs/model.md: every"
#: go on), except after "e.g.", "i.e." and "vs.".
_SENTENCE_END = re.compile(r"(?<!e\.g\.)(?<!i\.e\.)(?<!vs\.)(?<=[.?!])\s+")


def _first_sentence(text: str) -> str:
    first = _SENTENCE_END.split(" ".join(text.split()), maxsplit=1)[0]
    return first if first.endswith(("?", "!")) else first.rstrip(".") + "."
