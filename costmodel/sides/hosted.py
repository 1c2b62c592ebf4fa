"""A hosted API (``api``) billed per million tokens, doing the owned side's work."""

from __future__ import annotations

from ..inputs import ApiInputs
from .registry import Side

__all__ = ["HOSTED"]

HOSTED = Side(name="api", label="API", option="API", doing="the API", inputs=ApiInputs)
