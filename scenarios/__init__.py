"""The scenario format: schema, YAML loading, catalog resolution, runs, batch and the CLI."""

from .errors import ScenarioError
from .scenario import Scenario, load_file, load_files, load_mapping, run
from .schema import ScenarioSchema

__all__ = [
    "Scenario",
    "ScenarioError",
    "ScenarioSchema",
    "load_file",
    "load_files",
    "load_mapping",
    "run",
]
