"""The Monte Carlo rent-versus-buy engine: inputs, distributions, sampling, equations, outcomes."""

from .distributions import Distribution, DistributionError, Fixed, from_spec
from .engine import Simulation, simulate, summarise
from .inputs import BuyInputs, InputError, ModelInputs, RentInputs

__all__ = [
    "BuyInputs",
    "Distribution",
    "DistributionError",
    "Fixed",
    "InputError",
    "ModelInputs",
    "RentInputs",
    "Simulation",
    "from_spec",
    "simulate",
    "summarise",
]
