"""The typical range of each money, energy, reliability and carbon input a user types, from the
team's public reference data, and how far from it a value must be to be likely mistyped (cents
typed as dollars, a percent as a share, a year's cost as a month's, kg as g).

:data:`TYPICAL` is the one table of them; the advice rule ``input_far_from_typical``
(:mod:`scenarios.advice`) warns about a given value beyond its row's ``below`` or ``above``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TYPICAL", "Typical"]


@dataclass(frozen=True)
class Typical:
    """One input's typical range and where a value is far from it.

    Attributes:
        key: the input's name in its block (``electricity_usd_per_kwh``; ``grid`` for a grid
            intensity given as a number).
        low, high: the typical range the sources give [the input's unit].
        below, above: a value under ``below`` or over ``above`` is far from it (``None``: no
            such side) [the input's unit].
        unit: the input's unit, as the warning prints it.
        source: where the range comes from, in words.
        none: the value that says "not counted" (no colocation, no resale), never far.
        misread: the likely slip, as the factor that undoes it and its words (``(0.01,
            "in cents")``), or ``None``.
    """

    key: str
    low: float
    high: float
    below: float | None
    above: float | None
    unit: str
    source: str
    none: float = 0.0
    misread: tuple[float, str] | None = None

    def far(self, value: float) -> bool:
        """Whether ``value`` is far from the typical range (the ``none`` value never is)."""
        if value == self.none:
            return False
        return (self.below is not None and value < self.below) or (
            self.above is not None and value > self.above
        )

    def reading(self, value: float) -> str | None:
        """The words of :attr:`misread` where undoing it brings ``value`` into the typical
        range (``"perhaps typed in cents: read so, it is 0.08 USD/kWh"``), else None."""
        if self.misread is None:
            return None
        factor, words = self.misread
        if self.low <= value * factor <= self.high:
            unit = f" {self.unit}" if self.unit else ""
            return f"perhaps {words}: read so, it is {value * factor:,.6g}{unit}"
        return None


TYPICAL: tuple[Typical, ...] = (
    Typical(
        "electricity_usd_per_kwh",
        0.05,
        0.40,
        0.02,
        0.80,
        "USD/kWh",
        "US states' industrial and commercial averages 6.4-39 cents (EIA, 2023), EU "
        "non-household 0.09-0.28 EUR (Eurostat, 2023)",
        misread=(0.01, "typed in cents"),
    ),
    Typical(
        "pue",
        1.0,
        1.7,
        None,
        2.5,
        "",
        "an office 1.0, hyperscale 1.08-1.2, the industry average 1.58 (Uptime Institute, "
        "2023), on-premises enterprise 1.63 (IDC, 2025)",
    ),
    Typical(
        "hosting_usd_per_kw_month",
        120,
        275,
        50,
        600,
        "USD/(kW*month)",
        "CBRE colocation rents, North America 120-140 (2018) to 184 (H2 2024), global 217 "
        "(Q1 2025), Silicon Valley up to 275",
        misread=(1 / 12, "a year's fee"),
    ),
    Typical(
        "maintenance_rate",
        0.03,
        0.12,
        None,
        0.3,
        "1/year",
        "support contracts of 3-12 % of the hardware price a year (an estimate: no survey in "
        "the reference data)",
        misread=(0.01, "typed as a percent"),
    ),
    Typical(
        "gpu_annual_failure_rate",
        0.02,
        0.11,
        None,
        0.4,
        "1/year",
        "permanent replacements 2.5-6 % a GPU-year (analyst synthesis) to 11 % GPU-attributed "
        "interruptions on 16,384 H100s (Llama 3, 2024)",
        misread=(0.01, "typed as a percent"),
    ),
    Typical(
        "repair_days",
        1,
        14,
        None,
        60,
        "day",
        "next business day with advance replacement, 3-14 business days by standard RMA "
        "(vendor practice)",
    ),
    Typical(
        "resale_annual_decay",
        0.12,
        0.40,
        None,
        0.8,
        "1/year",
        "used GeForce cards lost 12-24 % a year (Dettmers, 2020); an H100 keeps 60-65 % after "
        "a year (vendor estimate)",
        none=1.0,
    ),
    Typical(
        "admin_usd_per_month",
        100,
        1000,
        None,
        10_000,
        "USD/month",
        "208 a server (Lambda's TCO calculator: 10,000 a year per four servers), 170 "
        "(SemiAnalysis, 2026: support and internet), the shipped examples' 300-1,000",
        misread=(1 / 12, "a year's cost"),
    ),
    Typical(
        "input_usd_per_mtok",
        0.02,
        5,
        0.005,
        20,
        "USD/M tokens",
        "input prices of 37 hosted-model offers, 2026 (the reference API price table)",
    ),
    Typical(
        "output_usd_per_mtok",
        0.05,
        30,
        0.01,
        120,
        "USD/M tokens",
        "output prices of 37 hosted-model offers, 2026 (the reference API price table)",
    ),
    Typical(
        "grid",
        11,
        726,
        5,
        1200,
        "gCO2e/kWh",
        "152 country, US subregion and cloud-region grids (Ember, eGRID, Electricity Maps, "
        "2022-2025)",
        misread=(1000, "given in kg/kWh"),
    ),
)
