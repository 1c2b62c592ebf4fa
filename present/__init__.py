"""Presentation of results: the answer that carries an engine result with its words
(:class:`Answer`), their JSON form, one-sentence verdicts, number formatting, the report
exporters and the notebook display. The engine never imports this package; the scenario layer
and the doors above it do. Imported inside a running IPython (a Jupyter kernel), it registers
the HTML of :mod:`.notebook` for answers.

>>> from present import to_dict, to_json, from_dict
>>> data = to_dict(answer)                  # the documented JSON form, plain Python data
>>> from_dict(data)                         # the Answer again, validated
"""

from __future__ import annotations

import json
import sys
from typing import Any

from costmodel.plan_result import PlanResult
from costmodel.result import Result

from .answer import Answer

__all__ = ["Answer", "from_dict", "to_dict", "to_json"]


def to_dict(answer: Answer | Result | PlanResult) -> dict[str, Any]:
    """The documented JSON form of a scenario's or plan's answer (``null`` for NaN), as plain
    Python data; an engine result alone is written as an answer without words."""
    from .schema import ResultSchema, prebuilt

    answer = Answer.of(answer)
    if not answer.is_plan:  # a scenario's answer: the plans' schemas are not imported
        return prebuilt(ResultSchema).dump(answer)
    from .plan_schema import PlanResultSchema

    return prebuilt(PlanResultSchema).dump(answer)


def to_json(answer: Answer | Result | PlanResult) -> bytes:
    """The JSON form as UTF-8 bytes, indented by 2 (what files and reports hold)."""
    return json.dumps(to_dict(answer), indent=2, allow_nan=False).encode("utf-8")


def from_dict(data: Any) -> Answer:
    """Validate and load either JSON result, a plan's (``kind: plan``) or a scenario's, as
    its :class:`Answer`; raises ``marshmallow.ValidationError`` naming the key path of each
    problem."""
    from .plan_schema import result_from_dict

    return result_from_dict(data)


if "IPython" in sys.modules:  # perhaps inside a running IPython: results show as HTML there
    from . import notebook

    notebook.register()
