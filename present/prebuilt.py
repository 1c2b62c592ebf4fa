"""The one instance of a marshmallow schema for the kinds of side registered now, shared by the
result forms (:mod:`present.schema`) and the document schemas of :mod:`scenarios`.

Building a schema deep-copies its declared fields, and each nested schema is built on its first
use, so a document validated or a result written with fresh schemas builds a dozen to some 40 of
them; a prebuilt one builds none. Kept apart from :mod:`present.schema` so that importing it
costs nothing beyond marshmallow.
"""

from __future__ import annotations

import functools

from marshmallow import Schema

from costmodel.sides import SIDES

__all__ = ["prebuilt"]


def prebuilt(cls: type[Schema]) -> Schema:
    """The one instance of schema ``cls`` for the sides registered now, built on first use.

    A side registered later gets a schema of its own (a by-side figure, or a document's block
    of a further side, is a field per side). Loading and dumping keep no state in the schema,
    so threads may share it.
    """
    return _built(cls, tuple(SIDES))


@functools.lru_cache(maxsize=64)
def _built(cls: type[Schema], sides: tuple[str, ...]) -> Schema:
    return cls()
