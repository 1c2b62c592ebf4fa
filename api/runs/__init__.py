"""The ``runs`` blueprint: the run store over HTTP."""

from .resources import blp

__all__ = ["blp"]
