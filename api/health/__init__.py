"""The ``health`` blueprint: ``GET /health``."""

from .resources import blp

__all__ = ["blp"]
