"""The ``evaluate`` blueprint: ``POST /v1/evaluate``."""

from .resources import blp

__all__ = ["blp"]
