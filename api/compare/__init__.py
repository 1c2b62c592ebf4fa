"""The ``compare`` blueprint: ``POST /v1/compare``."""

from .resources import blp

__all__ = ["blp"]
