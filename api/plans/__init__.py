"""The ``plans`` blueprint: ``POST /v1/plans``."""

from .resources import blp

__all__ = ["blp"]
