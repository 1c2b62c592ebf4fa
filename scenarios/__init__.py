"""The scenario format: schema, YAML loading, catalog resolution, evaluation, batch runs and the
run store; plus the example scenario library.

>>> import scenarios
>>> result = scenarios.evaluate(scenarios.example("lab-4x-rtx2080ti-vs-p3-8xlarge"))
>>> result.verdict
"""

from . import email_patterns  # noqa: F401  (first: marshmallow without its e-mail patterns)
from .errors import ScenarioError
from .library import example
from .resolve import Plan
from .scenario import Scenario, evaluate, load_file, load_files, load_mapping
from .schema import PlanSchema, ScenarioSchema

__all__ = [
    "Plan",
    "PlanSchema",
    "Scenario",
    "ScenarioError",
    "ScenarioSchema",
    "evaluate",
    "example",
    "load_file",
    "load_files",
    "load_mapping",
]
