"""The ``catalog`` blueprint: the pricing catalog over HTTP."""

from .resources import blp

__all__ = ["blp"]
