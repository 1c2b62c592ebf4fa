"""The Monte Carlo rent-versus-buy engine: inputs, distributions, sampling, equations, results.

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
from .inputs import BuyInputs, Financing, InputError, ModelInputs, RentInputs
from .result import Result

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
    "Pert",
    "RentInputs",
    "Result",
    "Triangular",
    "Uniform",
    "simulate",
    "summarise",
]
