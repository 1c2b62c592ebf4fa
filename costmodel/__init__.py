"""The Monte Carlo rent-versus-buy engine: inputs, distributions, sampling, equations, results.

One entry per question: a comparison of sides over utilisation levels
(``summarise(simulate(inputs))``, inputs a :class:`ModelInputs`), a plan over candidates
(``summarise_plan(simulate_plan(inputs))``, inputs a :class:`PlanInputs`) and the figures of
options ranked on shared draws (:func:`evaluate_options`).

>>> from costmodel import simulate, summarise
>>> result = summarise(simulate(inputs))      # inputs: a ModelInputs
>>> result.breakeven_utilisation.p50          # [-]
"""

from .distributions import (
    Discrete,
    Distribution,
    DistributionError,
    Fixed,
    LogNormal,
    Normal,
    Pert,
    Triangular,
    Uniform,
)
from .engine import simulate, summarise
from .inputs import BuyInputs, Financing, InputError, ModelInputs, PlanInputs, RentInputs
from .result import Result

#: The names of the modules that only a plan or a market comparison needs, imported on first
#: use (a scenario's run does without them).
_LATER = {
    "simulate_plan": "fleet",
    "summarise_plan": "fleet",
    "OptionInputs": "options",
    "ThroughputError": "options",
    "evaluate_options": "options",
}


def __getattr__(name: str) -> object:
    if name not in _LATER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{_LATER[name]}", __name__), name)


__all__ = [
    "BuyInputs",
    "Discrete",
    "Distribution",
    "DistributionError",
    "Financing",
    "Fixed",
    "InputError",
    "LogNormal",
    "ModelInputs",
    "Normal",
    "OptionInputs",
    "Pert",
    "PlanInputs",
    "RentInputs",
    "Result",
    "ThroughputError",
    "Triangular",
    "Uniform",
    "evaluate_options",
    "simulate",
    "simulate_plan",
    "summarise",
    "summarise_plan",
]
