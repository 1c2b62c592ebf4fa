"""Presentation of results: their JSON form, one-sentence verdicts, number formatting, the
report exporters and the notebook display. The engine never imports this package; the scenario
layer and the doors above it do. Imported inside a running IPython (a Jupyter kernel), it
registers the HTML of :mod:`.notebook` for results.

>>> from present import to_dict, to_json, from_dict
>>> data = to_dict(result)                  # the documented JSON form, plain Python data
>>> from_dict(data)                         # a Result or PlanResult again, validated
"""

from __future__ import annotations

import json
import sys
from typing import Any

from costmodel.plan_result import PlanResult
from costmodel.result import Result

__all__ = ["from_dict", "to_dict", "to_json"]


def to_dict(result: Result | PlanResult) -> dict[str, Any]:
    """The documented JSON form of a result or plan result (``null`` for NaN), as plain
    Python data."""
    if isinstance(result, PlanResult):
        from .plan_schema import PlanResultSchema

        return PlanResultSchema().dump(result)
    from .schema import ResultSchema

    return ResultSchema().dump(result)


def to_json(result: Result | PlanResult) -> bytes:
    """The JSON form as UTF-8 bytes, indented by 2 (what files and reports hold)."""
    return json.dumps(to_dict(result), indent=2, allow_nan=False).encode("utf-8")


def from_dict(data: Any) -> Result | PlanResult:
    """Validate and load either JSON result: a plan's (``kind: plan``) or a scenario's;
    raises ``marshmallow.ValidationError`` naming the key path of each problem."""
    from .plan_schema import result_from_dict

    return result_from_dict(data)


if "IPython" in sys.modules:  # perhaps inside a running IPython: results show as HTML there
    from . import notebook

    notebook.register()
