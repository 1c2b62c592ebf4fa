"""The ``throughput`` blueprint: ``GET /v1/throughput`` and ``GET /v1/throughput/calibration``."""

from .resources import blp

__all__ = ["blp"]
