"""Builds that can be built: a default build of a catalog GPU sits on a platform tier that
takes its form factor and whose power supply holds its peak (GPUs at TDP + the platform)."""

from __future__ import annotations

import pytest

import scenarios
from pricing import load_catalog
from scenarios.compare.market import GPU_COUNTS

CATALOG = load_catalog()
#: What a power supply that cannot hold a build draws.
POWER_SUPPLY = {"psu_undersized", "gpu_power_high"}


def _warnings(gpu: str, count: int) -> tuple:
    return scenarios.load_mapping(_doc(gpu, count)).warnings


def _built() -> list[tuple[str, int]]:
    """Every catalog GPU with a price at every count a tier of the catalog takes it."""
    return [
        (g.id, n)
        for g in CATALOG.gpus.values()
        if g.price_usd is not None
        for n in GPU_COUNTS
        if CATALOG.platform_tier(n, g).takes(g)
    ]


def test_every_build_the_catalog_makes_has_a_supply_that_holds_it():
    built = _built()
    # modules are built only on baseboards of their count: SXM at 4 and 8, the MI300X at 8
    assert ("h100-sxm5-80gb", 4) in built and ("h100-sxm5-80gb", 2) not in built
    assert ("mi300x", 8) in built and ("mi300x", 4) not in built
    assert ("rtx-5090", 1) in built and len(built) > 150
    problems = [
        (gpu, n, w.code)
        for gpu, n in built
        for w in _warnings(gpu, n)
        if w.side == "buy" and (w.severity == "error" or w.code in POWER_SUPPLY)
    ]
    assert problems == []


@pytest.mark.parametrize(
    ("gpu", "count", "tier", "psu_w"),
    [
        # 4 x 400 W + 1,500 W = 3,100 W <= 5,600 W
        ("a100-sxm4-80gb", 4, "4-GPU baseboard server", 5600),
        # 4 x 1,000 W + 1,500 W = 5,500 W <= 5,600 W
        ("b200", 4, "4-GPU baseboard server", 5600),
        # 8 x 700 W + 4,600 W = 10,200 W (the DGX H100 maximum) <= 13,200 W
        ("h100-sxm5-80gb", 8, "8-GPU baseboard server", 13200),
        ("a100-sxm4-80gb", 8, "8-GPU baseboard server", 13200),
        # 8 x 350 W + 600 W = 3,400 W > 3,200 W: the server with 2+2 x 3000 W supplies
        ("h100-pcie-80gb", 8, "8-GPU server, 2+2 x 3000 W PSUs", 6000),
        # 8 x 300 W + 600 W = 3,000 W <= 3,200 W: the 2+1 x 1600 W server
        ("a100-pcie-80gb", 8, "8-GPU server", 3200),
        # 575 W + 100 W = 675 W > 600 W; 2 x 450 W + 150 W = 1,050 W > 1,000 W
        ("rtx-5090", 1, "1-GPU desktop, 1000 W PSU", 1000),
        ("rtx-4090", 2, "2-GPU workstation, 1600 W PSU", 1600),
        # 350 W + 100 W = 450 W <= 600 W
        ("rtx-3090", 1, "1-GPU desktop", 600),
    ],
)
def test_the_default_tier_fits_the_gpus(gpu, count, tier, psu_w):
    chosen = CATALOG.platform_tier(count, CATALOG.gpu(gpu))
    assert (chosen.name, chosen.psu_w) == (tier, psu_w)
    resolved = scenarios.load_mapping(_doc(gpu, count)).resolved
    used = {a.key: a.value for a in resolved.assumptions}
    assert used["buy.platform_price_usd"] == chosen.price_usd
    assert used["buy.platform_power_w"] == chosen.power_w


def _doc(gpu: str, count: int) -> dict:
    return {
        "version": 1,
        "name": "build",
        "buy": {"gpu": gpu, "gpu_count": count},
        "rent": {"instance": "aws/p3.8xlarge"},
    }


def test_a_module_build_is_not_a_workstation():
    """The 4x A100 SXM4 build of the issue: a baseboard server, not the 3,500 USD, 300 W
    workstation; its office circuit warning stands (3,100 W is data-centre power), the
    workstation advice goes."""
    codes = {w.code: w.severity for w in _warnings("a100-sxm4-80gb", 4)}
    assert "form_factor" not in codes and not POWER_SUPPLY & set(codes)
    assert codes["office_circuit"] == "warning"
    # a baseboard server has the workstation parts loud_hot asks for; 4 PCIe cards still get it
    assert "loud_hot" not in codes
    assert "loud_hot" in {w.code for w in _warnings("rtx-6000-ada", 4)}
