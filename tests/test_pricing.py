"""Tests of the pricing catalogs: shipped data, validators, lookups and the throughput rule.

Hand-computed cases carry their arithmetic in comments; sources are in pricing/data/NOTES.md.
"""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
import json
import shutil
import sys
from importlib import resources
from pathlib import Path

import pytest

import pricing
from pricing import (
    GPU,
    CatalogError,
    UnknownIdError,
    load_catalog,
    relative_throughput,
)
from pricing.catalog import read_catalog
from pricing.errors import ThroughputUnavailableError
from pricing.throughput import work_peak

REPO = Path(__file__).resolve().parents[1]
TOOL = REPO / "tools" / "build_throughput.py"
REFERENCE_THROUGHPUT = REPO / "tools" / "reference" / "throughput.csv"
TOL = 1e-9

CONTRACT_GPUS = [
    "gtx-960",
    "gtx-970",
    "gtx-980",
    "gtx-980-ti",
    "gtx-titan-x-maxwell",
    "gtx-1050",
    "gtx-1060-6gb",
    "gtx-1070",
    "gtx-1080",
    "gtx-1080-ti",
    "titan-xp",
    "rtx-2060",
    "rtx-2070",
    "rtx-2080",
    "rtx-2080-ti",
    "titan-rtx",
    "rtx-3080-10gb",
    "rtx-3090",
    "rtx-4090",
    "rtx-5090",
    "tesla-k80",
    "p100-pcie-16gb",
    "v100-sxm2-16gb",
    "v100-pcie-16gb",
    "v100-sxm2-32gb",
    "t4",
    "a10g",
    "a100-sxm4-40gb",
    "a100-sxm4-80gb",
    "l4",
    "l40s",
    "h100-sxm5-80gb",
    "h100-pcie-80gb",
    "h200-sxm-141gb",
    "b200",
    # added for cloud rows
    "a10",
    "a100-pcie-40gb",
    "radeon-pro-v520",
    # 2026.11.30: the measured-throughput GPUs the catalog lacked, and the MI300X
    "a100-pcie-80gb",
    "gh200-96gb",
    "rtx-3070",
    "quadro-rtx-5000",
    "quadro-rtx-6000",
    "quadro-rtx-8000",
    "rtx-6000-ada",
    "rtx-a6000",
    "titan-v",
    "mi300x",
]
CONTRACT_INSTANCES = [
    "aws/p3.2xlarge",
    "aws/p3.8xlarge",
    "aws/p3.16xlarge",
    "aws/p3dn.24xlarge",
    "aws/g4dn.xlarge",
    "aws/g4dn.2xlarge",
    "aws/g4dn.12xlarge",
    "aws/g4dn.metal",
    "aws/g4ad.xlarge",
    "aws/p4d.24xlarge",
    "aws/p4de.24xlarge",
    "aws/p5.48xlarge",
    "aws/p5.4xlarge",
    "aws/g5.xlarge",
    "aws/g5.48xlarge",
    "aws/g6.xlarge",
    "gcp/a2-highgpu-1g",
    "gcp/a2-highgpu-8g",
    "gcp/a3-highgpu-1g",
    "gcp/a3-highgpu-8g",
    "azure/standard_nc6s_v3",
    "azure/standard_nd96asr_v4",
    "azure/standard_nd96amsr_a100_v4",
    "lambda/gpu_1x_a100",
    "lambda/gpu_8x_a100",
    "lambda/gpu_8x_a100_80gb_sxm4",
    "lambda/gpu_1x_h100_pcie",
    "lambda/gpu_1x_h100_sxm5",
    "lambda/gpu_8x_h100_sxm5",
]


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


# --------------------------------------------------------------------------- shipped catalog


def test_public_api_matches_contract():
    assert sorted(pricing.__all__) == sorted(
        [
            "load_catalog",
            "read_catalog",
            "Bound",
            "COOLING",
            "INTERCONNECTS",
            "PRECISIONS",
            "PRICING_MODELS",
            "RESERVATION_MONTHS",
            "RESERVED_PRICINGS",
            "Throughput",
            "Catalog",
            "GPU",
            "Instance",
            "PlatformTier",
            "PriceRecord",
            "CatalogError",
            "UnknownIdError",
            "relative_throughput",
            # the user's own prices (pricing.prices)
            "PriceEntry",
            "read_prices",
            "apply_prices",
            # inference: models, serving throughput, API offers (pricing.serving)
            "SERVING_PRECISIONS",
            "Model",
            "ServingPoint",
            "ApiOffer",
            "ServingThroughput",
            "tokens_per_s",
            # the user's own serving measurements (pricing.userserving)
            "read_serving",
            "apply_serving",
        ]
    )


def test_catalog_is_dated_versioned_and_cached(cat):
    assert cat is load_catalog()
    assert cat.version == "2026.12.05"
    assert cat.as_of == "2026-12-05"
    assert cat.reference_gpu == "v100-sxm2-16gb"
    assert cat.reference.measured == {"fp32": 1.0, "fp16": 1.0}


@pytest.mark.parametrize("gpu_id", CONTRACT_GPUS)
def test_contract_gpu_ids_exist(cat, gpu_id):
    assert cat.gpu(gpu_id).id == gpu_id


@pytest.mark.parametrize("instance_id", CONTRACT_INSTANCES)
def test_contract_instance_ids_exist_and_reference_known_gpus(cat, instance_id):
    inst = cat.instance(instance_id)
    assert inst.id == instance_id
    assert inst.gpu in cat.gpus
    assert inst.on_demand_usd_per_hour > 0


def test_catalog_sizes(cat):
    assert set(cat.gpus) == set(CONTRACT_GPUS)
    assert set(CONTRACT_INSTANCES) <= set(cat.instances)
    assert len(cat.instances) == 77
    assert [t.gpu_count for t in cat.tiers] == [1, 1, 2, 2, 4, 4, 4, 8, 8, 8]
    assert cat.tier_counts == (1, 2, 4, 8)


@pytest.mark.parametrize(
    ("typed", "closest"),
    [
        # the provider's instances with the GPU the id names (before: Lambda's A100s; none)
        (
            "lambda/h100",
            "lambda/gpu_1x_h100_pcie, lambda/gpu_1x_h100_sxm5, lambda/gpu_8x_h100_sxm5",
        ),
        ("aws/h100", "aws/p5.4xlarge, aws/p5.48xlarge"),
        ("coreweave/h100", "coreweave/hgx-h100-8x"),
        # the ids a prefix begins (before: aws/p5.4xlarge only), also written with a space
        ("aws/p5", "aws/p5.48xlarge, aws/p5.4xlarge, aws/p5en.48xlarge"),
        ("AWS p5", "aws/p5.48xlarge, aws/p5.4xlarge, aws/p5en.48xlarge"),
        # else the closest by spelling, as for GPU ids
        ("p4d.24xlarge", "aws/p4d.24xlarge, aws/p4de.24xlarge, aws/p3dn.24xlarge"),
    ],
)
def test_unknown_instance_ids_list_the_closest(cat, typed, closest):
    with pytest.raises(UnknownIdError) as info:
        cat.instance(typed)
    assert f"unknown instance id {typed!r}; closest: {closest};" in str(info.value)


def test_lookups_are_case_insensitive(cat):
    assert cat.instance("AWS/P3.8XLARGE") is cat.instance("aws/p3.8xlarge")
    assert cat.instance("azure/Standard_NC6s_v3").name == "Standard_NC6s_v3"
    assert cat.gpu(" RTX-2080-Ti ") is cat.gpu("rtx-2080-ti")


def test_every_row_cites_a_source(cat):
    for gpu in cat.gpus.values():
        assert "http" in gpu.source, gpu.id
        if gpu.measured:
            assert "http" in gpu.measured_source, gpu.id
    for inst in cat.instances.values():
        assert "http" in inst.source, inst.id
        for rec in inst.history:
            assert "http" in rec.source, rec
    for tier in cat.tiers:
        assert "http" in tier.source, tier.gpu_count
    for (ic, n), point in cat.scaling.items():
        assert point.source.strip(), (ic, n)
        if n > 1:
            assert "http" in point.source, (ic, n)


def test_estimates_are_marked_and_explained(cat):
    # Turing tensor figures derived in gpus_notes.md (tensor cores x boost x 128 FLOP/clk,
    # FP16 accumulate: 51.6, 59.7, 80.5), halved to the FP32-accumulate rate GeForce trains at
    for gpu_id, fp16 in (("rtx-2060", 25.8), ("rtx-2070", 29.9), ("rtx-2080", 40.3)):
        gpu = cat.gpu(gpu_id)
        assert gpu.fp16_tflops == fp16
        assert "fp16_tflops" in gpu.estimated_fields
        assert "derived" in gpu.note
    for gpu in cat.gpus.values():
        assert gpu.idle_w_estimated and gpu.idle_w == pytest.approx(0.1 * gpu.tdp_w, abs=0.05)
        if gpu.price_estimated or gpu.estimated_fields:
            assert gpu.note, gpu.id
    assert cat.gpu("h100-sxm5-80gb").price_usd == 36718.75
    assert cat.gpu("h100-sxm5-80gb").price_estimated
    a10g, a10 = cat.gpu("a10g"), cat.gpu("a10")
    assert {"measured_fp32", "measured_fp16"} <= set(a10g.estimated_fields)
    # the A10's measurement scaled by the A10G/A10 ratio of the peaks each precision runs at:
    # fp32 on TF32 tensor cores 35/62.5 = 0.56 (the A10's fp32 figure is a TF32 run; the CUDA-
    # core ratio 31.5/31.2 gave 1.3660 before), fp16 70/125 = 0.56: 1.353 x 0.56 = 0.75768,
    # 0.929 x 0.56 = 0.52024
    assert (a10g.tf32_tflops, a10.tf32_tflops) == (35, 62.5)
    assert a10g.measured["fp32"] == pytest.approx(1.353 * 35 / 62.5, abs=1e-4)
    assert a10g.measured["fp16"] == pytest.approx(0.929 * 70 / 125, abs=1e-4)
    assert all(t.estimated == bool(t.estimated_fields) for t in cat.tiers)


def test_form_factors_of_gpus_and_tiers(cat):
    # modules are exactly the GPUs cooled as modules; the MI300X is an OAM module
    modules = {g.id for g in cat.gpus.values() if g.form_factor != "pcie"}
    assert modules == {g.id for g in cat.gpus.values() if g.cooling == "sxm"}
    assert cat.gpu("mi300x").form_factor == "oam"
    assert cat.gpu("h100-sxm5-80gb").form_factor == "sxm"
    assert cat.gpu("h100-pcie-80gb").form_factor == "pcie"
    # SXM and OAM modules only on the baseboard servers: SXM on 4- and 8-GPU boards, OAM on
    # the universal baseboard of 8; every other tier takes PCIe cards only
    takes = {t.name: t.form_factors for t in cat.tiers if t.form_factors != ("pcie",)}
    assert takes == {"4-GPU baseboard server": ("sxm",), "8-GPU baseboard server": ("sxm", "oam")}
    mi300x, h100 = cat.gpu("mi300x"), cat.gpu("h100-sxm5-80gb")
    assert not cat.platform_tier(2, mi300x).takes(mi300x)
    assert not cat.platform_tier(4, mi300x).takes(mi300x)
    assert cat.platform_tier(8, mi300x).name == "8-GPU baseboard server"
    assert cat.platform_tier(3, h100).name == "4-GPU baseboard server"
    # without a GPU, the first tier of the size (the one the file lists first)
    assert cat.platform_tier(8).name == "8-GPU server"
    # TF32 from Ampere on, half the FP16 tensor rate (A100 156 of 312), marked derived
    assert cat.gpu("a100-sxm4-80gb").tf32_tflops == 156
    assert cat.gpu("v100-sxm2-16gb").tf32_tflops is None
    for gpu in cat.gpus.values():
        if gpu.tf32_tflops is not None:
            assert gpu.tf32_tflops == pytest.approx(gpu.fp16_tflops / 2, abs=0.01), gpu.id
            assert "tf32_tflops" in gpu.estimated_fields, gpu.id


def test_cooling_classes(cat):
    assert cat.gpu("gtx-1080-ti").cooling == "blower"
    assert cat.gpu("rtx-2080-ti").cooling == "open-air"
    assert cat.gpu("t4").cooling == "passive"
    assert cat.gpu("h100-sxm5-80gb").cooling == "sxm"


def test_gpus_are_hashable(cat):
    assert len({cat.gpu("t4"), cat.gpu("t4"), cat.reference}) == 2


# --------------------------------------------------------------------------- unknown ids


def test_unknown_gpu_lists_closest_ids(cat):
    with pytest.raises(UnknownIdError) as info:
        cat.gpu("rtx-2080ti")
    err = info.value
    assert str(err) == (
        "unknown GPU id 'rtx-2080ti'; closest: rtx-2080-ti, rtx-2080; see 'costmodel catalog gpus'"
    )
    assert isinstance(err, ValueError) and isinstance(err, CatalogError)
    assert not isinstance(err, KeyError)
    assert err.kind == "gpu" and err.id == "rtx-2080ti"
    assert err.close_matches == ("rtx-2080-ti", "rtx-2080")
    assert "t4" in err.valid


def test_unknown_ids_suggest_prefix_matches(cat):
    with pytest.raises(UnknownIdError) as info:
        cat.gpu("h100")
    assert info.value.close_matches == ("h100-pcie-80gb", "h100-sxm5-80gb")
    with pytest.raises(UnknownIdError, match=r"closest: aws/p3\.8xlarge"):
        cat.instance("aws/p3.8xlarg")


def test_unknown_pricing_and_precision(cat):
    with pytest.raises(UnknownIdError, match="unknown pricing 'ondemand'; closest: on_demand"):
        cat.instance("aws/p3.8xlarge").price("ondemand")
    with pytest.raises(UnknownIdError, match="unknown precision 'bf16'"):
        relative_throughput(cat.gpu("t4"), cat.reference, "bf16")


# --------------------------------------------------------------------------- instances, prices


def test_p3_8xlarge_prices_and_interconnect(cat):
    inst = cat.instance("aws/p3.8xlarge")
    assert (inst.gpu, inst.gpu_count, inst.interconnect) == ("v100-sxm2-16gb", 4, "nvlink")
    assert inst.price("on_demand") == 12.24
    assert inst.price("reserved_1y") == 7.96  # 1.99 USD/GPU-h x 4 (AWS page, 2018)
    assert inst.price("reserved_3y") == 4.92  # 1.23 x 4
    assert inst.price("spot") == 3.67


def test_g4dn_xlarge(cat):
    inst = cat.instance("aws/g4dn.xlarge")
    assert (inst.gpu, inst.gpu_count, inst.on_demand_usd_per_hour) == ("t4", 1, 0.526)
    assert inst.reserved_1y_usd_per_hour == 0.331
    assert inst.reserved_3y_usd_per_hour is None
    assert cat.instance("aws/g4dn.12xlarge").interconnect == "pcie-x16"


def test_p5_price_after_june_2025_cut_is_current_and_old_price_is_history(cat):
    p5 = cat.instance("aws/p5.48xlarge")
    assert p5.price("on_demand") == 55.04
    old = [r for r in p5.history if r.pricing == "on_demand"]
    assert [(r.usd_per_hour, r.valid_to) for r in old] == [(98.32, "2025-06-01")]
    # cloud.csv has no reservation for p5.48xlarge: the price is unknown, not zero
    assert p5.reserved_1y_usd_per_hour is None
    with pytest.raises(CatalogError, match="no reserved_1y price"):
        p5.price("reserved_1y")
    p4d = cat.instance("aws/p4d.24xlarge")
    assert p4d.price("on_demand") == 21.957642
    assert {(r.pricing, r.usd_per_hour) for r in p4d.history} == {
        ("on_demand", 32.7726),
        ("reserved_1y", 19.2),
        ("reserved_3y", 11.6),
    }


def test_lambda_old_prices_are_history_not_instances(cat):
    assert not any("2022" in i or "2023" in i for i in cat.instances)
    assert [r.usd_per_hour for r in cat.instance("lambda/gpu_1x_a100").history] == [1.10]
    assert cat.instance("lambda/gpu_8x_h100_sxm5").history[0].usd_per_hour == 27.92
    assert len(cat.price_history) == 28


# --------------------------------------------------------------------------- tiers, scaling


def test_platform_tiers(cat):
    assert cat.platform_tier(3).gpu_count == 4
    assert cat.platform_tier(1).gpu_count == 1
    assert cat.platform_tier(2).psu_w == 1000
    assert cat.platform_tier(8).dram_gb == 256
    with pytest.raises(CatalogError, match="no platform tier holds 9 GPUs"):
        cat.platform_tier(9)
    with pytest.raises(CatalogError, match="positive integer"):
        cat.platform_tier(0)


@pytest.mark.parametrize("interconnect", ["nvlink", "pcie-x16", "pcie-x8", "pcie-x4"])
def test_scaling_is_one_for_one_gpu_and_falls_with_count(cat, interconnect):
    assert cat.scaling_efficiency(interconnect, 1) == 1.0
    effs = [cat.scaling_efficiency(interconnect, n) for n in (1, 2, 4, 8)]
    assert effs == sorted(effs, reverse=True)
    assert all(0 < e <= 1 for e in effs)


def test_scaling_values_and_interpolation(cat):
    assert cat.scaling_efficiency("nvlink", 8) == 0.922
    # 3 GPUs: linear in log2(n) between 2 (0.976) and 4 (0.955):
    # t = log2(3) - 1 = 0.58496; 0.976 + 0.58496 * (0.955 - 0.976) = 0.963716
    assert cat.scaling_efficiency("pcie-x16", 3) == pytest.approx(0.963716, abs=1e-6)
    # links narrow -> never better than x16
    for n in (2, 4, 8):
        x16, x8, x4 = (cat.scaling_efficiency(ic, n) for ic in ("pcie-x16", "pcie-x8", "pcie-x4"))
        assert x16 >= x8 >= x4
    with pytest.raises(UnknownIdError, match="closest: nvlink"):
        cat.scaling_efficiency("nvlnk", 2)
    with pytest.raises(CatalogError, match="table stops at 8"):
        cat.scaling_efficiency("nvlink", 16)


# --------------------------------------------------------------------------- throughput rule


def _thr(cat, gpu: str, ref: str, precision: str) -> tuple[float, str]:
    t = relative_throughput(cat.gpu(gpu), cat.gpu(ref), precision)
    return t.value, t.basis


def test_relative_throughput_measured(cat):
    v100 = "v100-sxm2-16gb"
    # RTX 2080 Ti fp16, PyTorch vs V100 32GB: 0.531 x bridge 1.1873 = 0.6305 (4 d.p.); V100 = 1
    assert _thr(cat, "rtx-2080-ti", v100, "fp16") == (pytest.approx(0.6305), "measured")
    # fp32: 0.629 x 1.2182 = 0.7662
    assert _thr(cat, "rtx-2080-ti", v100, "fp32") == (pytest.approx(0.7662), "measured")
    # both measured against a non-reference GPU: 3090 fp16 1.224 / 2080 Ti 0.6305 = 1.94131
    assert _thr(cat, "rtx-3090", "rtx-2080-ti", "fp16")[0] == pytest.approx(1.224 / 0.6305)
    # the 32 GB V100 measures the bridge factor
    assert _thr(cat, "v100-sxm2-32gb", v100, "fp16")[0] == pytest.approx(1.1873)
    # a GPU against itself is exactly 1, measured or not (T4 has no measurement)
    assert _thr(cat, "t4", "t4", "int8") == (1.0, "identity")


def test_relative_throughput_scaled_from_the_nearest_measured_precision(cat):
    v100 = "v100-sxm2-16gb"
    # RTX 3090 int8: measured fp16 1.224 x its own int8/fp16 peaks 284/71 = 4 -> 4.896 (the
    # fp16 peak is the FP32-accumulate one mixed-precision training runs at, half the GeForce
    # FP16-accumulate 142; INT8 runs at full rate); V100 has no INT8 tensor peak, so it runs
    # INT8 at its FP16 rate: 1.0 x 125/125 = 1
    assert _thr(cat, "rtx-3090", v100, "int8") == (pytest.approx(4.896), "scaled")
    # GTX 1080 Ti has no tensor cores at all: int8 and fp16 run at its FP32 rate, ratio 1
    assert _thr(cat, "gtx-1080-ti", v100, "int8") == (pytest.approx(0.3028), "scaled")
    # A100 40 GB SXM4 int8: 2.2726 x 624/312 = 4.5452; RTX 2080 Ti int8: 0.6305 x 227.7/56.9
    # = 2.52312; ratio 1.80141...
    a100 = 2.2726 * 624 / 312
    rtx = 0.6305 * 227.7 / 56.9
    assert _thr(cat, "a100-sxm4-40gb", "rtx-2080-ti", "int8") == (
        pytest.approx(a100 / rtx),
        "scaled",
    )


def _card(name: str, **peaks: float) -> GPU:
    """An inline GPU with the given peaks (TF32 too, which scenarios do not take)."""
    tf32 = peaks.pop("tf32_tflops", None)
    card = GPU.inline(name, memory_gb=24, tdp_w=300, price_usd=1000, **peaks)
    return dataclasses.replace(card, tf32_tflops=tf32)


def test_relative_throughput_peaks_are_like_for_like(cat):
    v100 = cat.reference
    # fp16: both have FP16 tensor peaks: 65 / 125 = 0.52
    t4ish = _card("t4ish", fp32_tflops=8.1, fp16_tflops=65, int8_tops=130)
    assert _pair(t4ish, v100, "fp16") == (pytest.approx(65 / 125), "peaks")
    # int8: the V100 has no INT8 tensor cores and runs INT8 at its FP16 tensor rate: 130 / 125
    assert _pair(t4ish, v100, "int8") == (pytest.approx(130 / 125), "peaks")
    # fp32: neither has TF32, CUDA cores against CUDA cores: 8.1 / 15.7 = 0.515924
    assert _pair(t4ish, v100, "fp32") == (pytest.approx(8.1 / 15.7), "peaks")
    # the basis is never mixed: the 3090 has a measured fp16 figure, the card none -> peaks
    # 71 / 65 = 1.092308
    assert _pair(cat.gpu("rtx-3090"), t4ish, "fp16") == (pytest.approx(71 / 65), "peaks")


def test_relative_throughput_never_sets_unlike_peaks_against_each_other(cat):
    v100 = cat.reference
    # no tensor cores: the card runs fp16 work on CUDA cores, the V100 on tensor cores; the
    # ratio of their FP32 peaks (8.873 / 15.7 = 0.565) was used before, though the measured
    # GTX 1080 Ti does fp16 work at 0.3028 of the V100 and fp32 work at 0.5689
    plain = _card("no tensor cores", fp32_tflops=8.873)
    with pytest.raises(ThroughputUnavailableError, match="vector units .* tensor units"):
        relative_throughput(plain, v100, "fp16")
    # TF32 tensor cores against the V100's CUDA cores at fp32 (the L40S case: 91.6 / 15.7)
    ada = _card("ada", fp32_tflops=91.6, tf32_tflops=181, fp16_tflops=362)
    with pytest.raises(ThroughputUnavailableError, match="tensor units .*tf32_tflops"):
        relative_throughput(ada, v100, "fp32")
    # the same card against a TF32 GPU: TF32 against TF32, 181 / 156 = 1.160256
    assert _pair(ada, cat.gpu("a100-pcie-40gb"), "fp32") == (pytest.approx(181 / 156), "peaks")
    # scaling from fp16 needs each GPU's own fp32/fp16 peaks of one kind: the V100's are not
    # (CUDA 15.7 / tensor 125), so a GPU with only an fp16 figure has no fp32 path to it
    half = dataclasses.replace(ada, id="inline:half", measured={"fp16": 2.0})
    with pytest.raises(ThroughputUnavailableError):
        relative_throughput(half, v100, "fp32")
    # ... but it scales against a TF32 GPU with figures at both: 2.0 / 2.3 (A100 PCIe fp16)
    # x (181/362) / (156/312) = 0.869565
    a100 = cat.gpu("a100-pcie-40gb")
    assert _pair(half, a100, "fp32") == (pytest.approx(2.0 / 2.3), "scaled")


def test_every_catalog_gpu_has_figures_and_peak_bases_never_mix(cat):
    """Every catalog GPU has an fp32 and an fp16 figure (measured or marked estimated), so no
    two catalog GPUs fall back to peaks; every work peak names the column it comes from."""
    for gpu in cat.gpus.values():
        assert set(gpu.measured) == {"fp32", "fp16"}, gpu.id
        for precision in ("fp32", "fp16", "int8"):
            peak = work_peak(gpu, precision)
            assert peak.kind == ("vector" if peak.column == "fp32_tflops" else "tensor")
            if precision == "fp32" and gpu.tf32_tflops is not None:
                assert peak.column == "tf32_tflops", gpu.id
    ids = sorted(cat.gpus)
    for precision in ("fp32", "fp16", "int8"):
        for a in ids:
            for b in ids:
                t = relative_throughput(cat.gpu(a), cat.gpu(b), precision)
                assert t.basis in ("identity", "measured", "scaled", "estimated"), (a, b)
                estimated = any(
                    f"measured_{p}" in cat.gpu(g).estimated_fields
                    for g in (a, b)
                    for p in ("fp32", "fp16")
                    if p in t.how
                )
                assert (t.basis == "estimated") == estimated, (a, b, precision, t)


def test_corrected_throughput_figures(cat):
    """The figures issue 18 found wrong, against public training benchmarks."""
    v100 = "v100-sxm2-16gb"
    # RTX 5090: the 4090's Lambda figures x the 5090/4090 geometric mean of one timm training
    # run (5 models): fp16 1.976 x 1.3977 = 2.7619, above the 4090 (peaks gave 209.5/125 =
    # 1.676); fp32 2.865 x 1.5146 = 4.3393 = 1.515x the 4090 (peaks gave 104.8/15.7 = 6.675,
    # 2.33x)
    assert _thr(cat, "rtx-5090", v100, "fp16") == (pytest.approx(2.7619), "measured")
    assert _thr(cat, "rtx-5090", v100, "fp32") == (pytest.approx(4.3393), "measured")
    assert _thr(cat, "rtx-5090", "rtx-4090", "fp32")[0] == pytest.approx(1.5146, abs=1e-4)
    assert _thr(cat, "rtx-5090", "rtx-4090", "fp16")[0] > 1
    # MI300X: the H100's 5.355 x MLPerf's time-to-train ratio 27.928/28.269 min (rounded
    # 0.9880) = 5.2907, at the H100 (peaks gave 1307.4/125 = 10.459, 1.95x); fp32: 5.2907 x
    # the H100's 8.157/5.355 x (653.7/1307.4)/(494.7/989.4) = 8.0591
    assert _thr(cat, "mi300x", v100, "fp16") == (pytest.approx(5.2907), "estimated")
    assert _thr(cat, "mi300x", "h100-sxm5-80gb", "fp16")[0] == pytest.approx(0.98799, abs=1e-4)
    assert _thr(cat, "mi300x", v100, "fp32")[0] == pytest.approx(5.2907 * 8.157 / 5.355, 1e-4)
    # L40S fp32: the RTX 6000 Ada's 2.725 (same AD102) x TF32 peaks 181/182.15 = 2.7078, 0.785x
    # the A100 40 GB PCIe's 3.45 (CUDA-core peaks gave 91.6/15.7 = 5.834, 1.69x)
    l40s = pytest.approx(2.725 * 181 / 182.15, 1e-4)
    assert _thr(cat, "l40s", v100, "fp32") == (l40s, "estimated")
    assert _thr(cat, "l40s", "a100-pcie-40gb", "fp32")[0] == pytest.approx(0.7849, abs=1e-4)
    # no tensor cores: GTX 1080 = the 1080 Ti's 0.3028 x 8.873/11.34 = 0.23693 at fp16 (the
    # FP32-peak ratio to the V100 gave 0.565, above the measured 1080 Ti)
    assert _thr(cat, "gtx-1080", v100, "fp16")[0] == pytest.approx(0.3028 * 8.873 / 11.34, 1e-3)


def _pair(gpu: GPU, ref: GPU, precision: str) -> tuple[float, str]:
    t = relative_throughput(gpu, ref, precision)
    return t.value, t.basis


def test_relative_throughput_without_figures_names_gpu_and_precision(cat):
    blank = GPU.inline("mystery card", memory_gb=16, tdp_w=200, price_usd=500)
    with pytest.raises(ThroughputUnavailableError, match="'inline:mystery-card' has no fp16"):
        relative_throughput(blank, cat.reference, "fp16")


def test_inline_gpu_defaults_and_validation():
    gpu = GPU.inline("consumer 24 GB card", memory_gb=24, tdp_w=350, price_usd=1500)
    assert gpu.id == "inline:consumer-24-gb-card"
    assert gpu.idle_w == 35.0 and gpu.idle_w_estimated
    assert dict(gpu.measured) == {}
    explicit = GPU.inline("x", memory_gb=8, tdp_w=200, price_usd=100, idle_w=20)
    assert explicit.idle_w == 20 and not explicit.idle_w_estimated
    with pytest.raises(CatalogError, match="'tdp_w'"):
        GPU.inline("hot", memory_gb=24, tdp_w=5000, price_usd=1500)
    with pytest.raises(CatalogError, match="'price_usd'"):
        GPU.inline("cheap", memory_gb=24, tdp_w=300, price_usd=-1)


# --------------------------------------------------------------------------- reconciliation tool


def _load_tool():
    spec = importlib.util.spec_from_file_location("build_throughput", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tool_rows():
    tool = _load_tool()
    return tool, tool.read_rows(REFERENCE_THROUGHPUT)


def test_bridge_factors_match_committed_figures(cat, tool_rows):
    tool, rows = tool_rows
    bridges = tool.bridge_factors(rows)
    for precision in ("fp32", "fp16"):
        factor, pairs = bridges[precision]
        assert len(pairs) == 4
        assert {name for name, _ in pairs} == {
            "A100 40GB PCIe",
            "RTX 3090",
            "RTX 8000",
            "RTX A6000",
        }
        assert round(factor, 4) == cat.bridge_factors[precision]
        assert cat.gpu("v100-sxm2-32gb").measured[precision] == round(factor, 4)
    # fp16 by hand: (1.224/1.007 * 2.300/1.750 * 1.417/1.199 * 0.939/0.892) ** (1/4) = 1.18733
    assert bridges["fp16"][0] == pytest.approx(
        (1.224 / 1.007 * 2.300 / 1.750 * 1.417 / 1.199 * 0.939 / 0.892) ** 0.25, abs=TOL
    )


def test_measured_columns_equal_tool_output(cat, tool_rows):
    tool, rows = tool_rows
    figures = tool.catalog_figures(rows)
    shipped = {g.id: dict(g.measured) for g in cat.gpus.values() if g.measured}
    assert shipped == figures


def test_tool_prints_table(capsys, tool_rows):
    tool, _ = tool_rows
    assert tool.main([str(REFERENCE_THROUGHPUT)]) == 0
    out = capsys.readouterr().out
    assert "# bridge fp16 = 1.1873 (n=4" in out
    assert "rtx-2080-ti,RTX 2080 Ti,fp16,0.6305,0.531,1.1873,pytorch-32gb-bridged" in out


# --------------------------------------------------------------------------- validators


@pytest.fixture
def data_dir(tmp_path):
    target = tmp_path / "data"
    with resources.as_file(resources.files("pricing").joinpath("data", "catalog.json")) as meta:
        shutil.copytree(Path(meta).parent, target)
    return target


def _edit(path: Path, key: str, column: str, value: str, *, key_column: str | None = None):
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header, rows = reader.fieldnames, list(reader)
    key_column = key_column or header[0]
    hits = [r for r in rows if r[key_column] == key]
    assert hits, f"{key} not in {path.name}"
    hits[0][column] = value
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def _append_copy(path: Path, key: str, **changes: str):
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header, rows = reader.fieldnames, list(reader)
    row = dict(next(r for r in rows if r[header[0]] == key), **changes)
    rows.append(row)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def test_copied_data_loads(data_dir):
    assert read_catalog(data_dir).version == "2026.12.05"


@pytest.mark.parametrize(
    ("file", "key", "column", "value", "problem"),
    [
        ("gpus.csv", "rtx-2080-ti", "tdp_w", "5000", "must be <= 2,000"),
        ("gpus.csv", "rtx-2080-ti", "tdp_w", "5", "must be >= 10"),
        ("gpus.csv", "t4", "memory_gb", "16000", "must be <= 512"),
        ("gpus.csv", "t4", "memory_gb", "0.25", "must be >= 0.5"),
        ("gpus.csv", "t4", "price_usd", "-2299", "must be >= 0"),
        ("gpus.csv", "t4", "fp32_tflops", "0", "must be > 0"),
        ("gpus.csv", "t4", "fp16_tflops", "-65", "must be > 0"),
        ("gpus.csv", "t4", "int8_tops", "lots", "'lots' is not a number"),
        ("gpus.csv", "t4", "idle_w", "100", "must be <= tdp_w (70 [W])"),
        ("gpus.csv", "t4", "cooling", "water", "unknown cooling 'water'"),
        ("gpus.csv", "t4", "form_factor", "socket", "unknown form factor 'socket'"),
        ("gpus.csv", "t4", "form_factor", "sxm", "cooling 'sxm' exactly when it is a module"),
        ("gpus.csv", "mi300x", "form_factor", "pcie", "got cooling 'sxm'"),
        ("gpus.csv", "rtx-4090", "tf32_tflops", "200", "at least as high; got 200 against 165.2"),
        ("gpus.csv", "t4", "tf32_tflops", "0", "must be > 0"),
        ("gpus.csv", "t4", "price_estimated", "maybe", "not true or false"),
        ("gpus.csv", "t4", "year", "2018.5", "not an integer"),
        ("gpus.csv", "rtx-3090", "measured_fp16", "-1", "must be > 0"),
        ("gpus.csv", "t4", "estimated_fields", "colour", "unknown field 'colour'"),
        ("gpus.csv", "t4", "source", "", "is required"),
        ("instances.csv", "aws/p3.8xlarge", "gpu", "rtx-2080ti", "unknown GPU id 'rtx-2080ti'"),
        ("instances.csv", "aws/p3.8xlarge", "interconnect", "infiniband", "unknown interconnect"),
        ("instances.csv", "aws/p3.8xlarge", "on_demand_usd_per_hour", "-12.24", "must be > 0"),
        ("instances.csv", "aws/p3.8xlarge", "spot_usd_per_hour", "-1", "must be >= 0"),
        ("instances.csv", "aws/p3.8xlarge", "gpu_count", "0", "must be >= 1 [GPU], got 0"),
        ("instances.csv", "aws/p3.8xlarge", "id", "AWS/p3.8xlarge", "invalid instance id"),
        ("instances.csv", "aws/p3.8xlarge", "id", "aws/p3.8xlarge-x", "provider + '/' + name"),
        ("price_history.csv", "aws/p5.48xlarge", "pricing", "hourly", "unknown pricing 'hourly'"),
        ("price_history.csv", "aws/p5.48xlarge", "valid_to", "June 2025", "not an ISO date"),
        ("price_history.csv", "aws/p5.48xlarge", "usd_per_hour", "-98", "must be >= 0"),
        ("platforms.csv", "4", "price_usd", "-3500", "must be >= 0"),
        ("platforms.csv", "4", "interconnect", "pcie-x32", "unknown interconnect 'pcie-x32'"),
        ("platforms.csv", "8", "form_factors", "pcie;slot", "unknown form factor 'slot'"),
        ("platforms.csv", "1", "form_factors", "", "at least one form factor"),
        ("scaling.csv", "pcie-x8", "efficiency", "1.5", "outside (0, 1]"),
    ],
)
def test_validators_reject_bad_values(data_dir, file, key, column, value, problem):
    _edit(data_dir / file, key, column, value)
    with pytest.raises(CatalogError) as info:
        read_catalog(data_dir)
    err = info.value
    assert err.file == file
    assert err.column == column
    assert problem in str(err)
    assert str(err).startswith(f"{file}, row ")


def test_error_message_names_file_row_column(data_dir):
    _edit(data_dir / "gpus.csv", "rtx-2080-ti", "tdp_w", "5000")
    with pytest.raises(CatalogError) as info:
        read_catalog(data_dir)
    assert str(info.value) == (
        "gpus.csv, row 'rtx-2080-ti', column 'tdp_w': must be <= 2,000 [W], got 5,000"
    )
    assert info.value.row_id == "rtx-2080-ti"


def test_duplicate_ids_are_rejected(data_dir):
    _append_copy(data_dir / "gpus.csv", "t4")
    with pytest.raises(CatalogError, match="gpus.csv, row 't4', column 'id': duplicate id 't4'"):
        read_catalog(data_dir)


def test_duplicate_instance_ids_are_rejected(data_dir):
    _append_copy(data_dir / "instances.csv", "aws/g6.xlarge")
    with pytest.raises(CatalogError, match="duplicate id 'aws/g6.xlarge'"):
        read_catalog(data_dir)


def test_history_for_unknown_instance_is_rejected(data_dir):
    _edit(data_dir / "price_history.csv", "aws/p5.48xlarge", "id", "aws/p5.48xlarg")
    with pytest.raises(CatalogError, match="unknown instance id 'aws/p5.48xlarg'.*p5.48xlarge"):
        read_catalog(data_dir)


def test_scaling_rules_are_enforced(data_dir):
    path = data_dir / "scaling.csv"
    original = path.read_text(encoding="utf-8")
    path.write_text(original.replace("pcie-x4,8,0.793,", "pcie-x4,8,0.95,"), encoding="utf-8")
    with pytest.raises(CatalogError, match="row 'pcie-x4/8', column 'efficiency'.*rises"):
        read_catalog(data_dir)
    path.write_text(original.replace("pcie-x4,1,1.0,", "pcie-x4,1,0.99,"), encoding="utf-8")
    with pytest.raises(CatalogError, match="one GPU must scale at exactly 1.0"):
        read_catalog(data_dir)


def test_missing_or_unexpected_columns_are_rejected(data_dir):
    path = data_dir / "platforms.csv"
    text = path.read_text(encoding="utf-8").replace("power_w", "power_kw", 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CatalogError, match="platforms.csv: missing column\\(s\\): power_w"):
        read_catalog(data_dir)


def test_catalog_json_reference_must_exist(data_dir):
    meta_path = data_dir / "catalog.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["reference_gpu"] = "v100"
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(CatalogError, match="reference GPU 'v100' is not in gpus.csv"):
        read_catalog(data_dir)


def test_missing_file_is_reported(data_dir):
    (data_dir / "scaling.csv").unlink()
    with pytest.raises(CatalogError, match="^scaling.csv: file not found$"):
        read_catalog(data_dir)


# --------------------------------------------------------------------------- the market

_ISO = r"^\d{4}-\d{2}-\d{2}$"


def _iso(text: str) -> bool:
    import datetime as dt
    import re

    if not re.match(_ISO, text):
        return False
    dt.date.fromisoformat(text)
    return True


def test_every_row_has_a_source_and_an_iso_date(cat):
    for inst in cat.instances.values():
        assert "http" in inst.source, inst.id
        assert _iso(inst.as_of), (inst.id, inst.as_of)
        for rec in inst.history:
            assert "http" in rec.source, rec
            assert _iso(rec.valid_to), rec
            assert rec.valid_from == "" or _iso(rec.valid_from), rec
            assert rec.valid_from <= rec.valid_to, rec
        if inst.estimated_fields:
            assert "estimate" in inst.note or "assumption" in inst.note, inst.id
    for gpu in cat.gpus.values():
        assert "http" in gpu.source, gpu.id


def test_tiers_are_valid_and_cover_the_market(cat):
    from pricing.vocabulary import TIERS

    assert TIERS == ("hyperscaler", "neocloud", "marketplace")
    tiers: dict[str, set[str]] = {}
    for inst in cat.instances.values():
        assert inst.tier in TIERS, inst.id
        tiers.setdefault(inst.provider, set()).add(inst.tier)
    assert all(len(t) == 1 for t in tiers.values()), tiers  # one tier per provider
    assert {p for p, t in tiers.items() if t == {"hyperscaler"}} == {"aws", "gcp", "azure"}
    assert tiers["vastai"] == {"marketplace"}
    for provider in ("lambda", "coreweave", "runpod", "crusoe", "nebius", "together"):
        assert tiers[provider] == {"neocloud"}, provider
    assert len(tiers) >= 8
    assert len(cat.instances) >= 50


def test_new_gpus_are_rented_where_the_issue_asks(cat):
    def gpus_of(provider):
        return {i.gpu for i in cat.instances.values() if i.provider == provider}

    for iid, gpu in (
        ("aws/p5en.48xlarge", "h200-sxm-141gb"),
        ("gcp/a3-ultragpu-8g", "h200-sxm-141gb"),
        ("azure/standard_nd96isr_h200_v5", "h200-sxm-141gb"),
        ("aws/p6-b200.48xlarge", "b200"),
        ("azure/standard_nd96isr_mi300x_v5", "mi300x"),
        ("crusoe/mi300x-192gb-ib.8x", "mi300x"),
    ):
        inst = cat.instance(iid)
        assert (inst.gpu, inst.gpu_count, inst.interconnect) == (gpu, 8, "nvlink"), iid
    assert "b200" in gpus_of("runpod") and "b200" in gpus_of("coreweave")
    # prices as the sources give them: per-GPU rate x GPUs
    assert cat.instance("aws/p5en.48xlarge").price("on_demand") == 63.296
    assert cat.instance("azure/standard_nd96isr_mi300x_v5").price("on_demand") == 48.0  # 6.00 x 8
    assert cat.instance("crusoe/mi300x-192gb-ib.8x").price("on_demand") == pytest.approx(27.6)
    # a marketplace price is a median of verified hosts, and says so
    for inst in cat.instances.values():
        if inst.tier == "marketplace":
            assert "median" in inst.note and "verified hosts" in inst.note, inst.id
    assert cat.instance("vastai/1x_h100_sxm").price("on_demand") == 4.40


def test_changed_prices_keep_the_old_one_as_history(cat):
    lam = cat.instance("lambda/gpu_8x_h100_sxm5")
    assert (lam.price("on_demand"), lam.as_of) == (31.92, "2026-08-01")  # $3.99/GPU-h x 8
    assert [(r.usd_per_hour, r.valid_from, r.valid_to) for r in lam.history] == [
        (27.92, "2024-07-11", "2024-09-01"),
        (23.92, "2024-09-01", "2026-08-01"),
    ]
    p5en = cat.instance("aws/p5en.48xlarge")
    assert [(r.usd_per_hour, r.valid_to) for r in p5en.history] == [(84.8, "2025-06-01")]
    runpod = cat.instance("runpod/8x_h100-sxm_secure")
    assert runpod.price("on_demand") == pytest.approx(26.32)  # 3.29 x 8 on 2026-08-19
    assert [r.usd_per_hour for r in runpod.history] == [pytest.approx(23.92)]  # 2.99 x 8
    # every history record is older than the instance's current price
    for inst in cat.instances.values():
        for rec in inst.history:
            assert rec.valid_to <= inst.as_of, (inst.id, rec)


@pytest.mark.parametrize(
    ("gpu_id", "price", "estimated"),
    [
        ("titan-v", 2999, False),
        ("quadro-rtx-5000", 2300, False),
        ("quadro-rtx-6000", 6300, False),
        ("quadro-rtx-8000", 10000, False),
        ("rtx-3070", 499, False),
        ("rtx-a6000", 4649, False),
        ("rtx-6000-ada", 6800, False),
        ("a100-pcie-80gb", 13287.5, True),
        ("gh200-96gb", 46675, True),
        ("mi300x", 15000, True),
        ("titan-rtx", 2499, False),  # NVIDIA's announced MSRP: official, not an estimate
    ],
)
def test_gpu_prices_are_flagged_correctly(cat, gpu_id, price, estimated):
    gpu = cat.gpu(gpu_id)
    assert (gpu.price_usd, gpu.price_estimated) == (price, estimated)
    if estimated:
        assert "estimate" in gpu.note, gpu_id


def test_v100_32gb_costs_more_than_16gb(cat):
    pcie16, sxm16, sxm32 = (
        cat.gpu(g).price_usd for g in ("v100-pcie-16gb", "v100-sxm2-16gb", "v100-sxm2-32gb")
    )
    assert pcie16 < sxm16 < sxm32
    # 11,458 (Microway, V100 32GB) x 11,500 / 10,664 (SXM2/PCIe at 16 GB) = 12,356.4
    assert sxm32 == round(11458 * 11500 / 10664)
    assert cat.gpu("v100-sxm2-32gb").price_estimated


def test_fp16_column_is_the_fp32_accumulate_training_peak(cat):
    a100 = cat.gpu("a100-sxm4-40gb")
    assert a100.fp16_tflops == 312
    # GeForce: half the FP16-accumulate figure (Ada whitepaper 165.2, GA102 whitepaper 71)
    assert cat.gpu("rtx-4090").fp16_tflops == 165.2
    assert cat.gpu("rtx-3090").fp16_tflops == 71
    assert cat.gpu("rtx-2080-ti").fp16_tflops == 56.9
    for gpu in cat.gpus.values():
        consumer = gpu.family.startswith(("GeForce", "Titan"))
        if consumer and gpu.fp16_tflops is not None:
            assert "FP32 accumulate" in gpu.note, gpu.id
            if gpu.fp16_tflops > a100.fp16_tflops:  # only if it genuinely trains faster
                assert gpu.measured.get("fp16", 0) > a100.measured["fp16"], gpu.id
    # a GeForce card's FP16 peak no longer exceeds the A100's while it measures slower
    assert cat.gpu("rtx-4090").measured["fp16"] < a100.measured["fp16"]


def test_throughput_build_covers_every_reference_gpu(cat, tool_rows):
    tool, rows = tool_rows
    table = tool.reconcile(rows)
    assert all(rec.gpu_id for rec in table), sorted({r.name for r in table if not r.gpu_id})
    assert set(tool.NAME_TO_ID.values()) <= set(cat.gpus)
    figures = tool.catalog_figures(rows)
    for gpu_id in (
        "a100-pcie-80gb",
        "gh200-96gb",
        "rtx-3070",
        "quadro-rtx-5000",
        "quadro-rtx-6000",
        "quadro-rtx-8000",
        "rtx-6000-ada",
        "rtx-a6000",
        "titan-v",
    ):
        assert set(figures[gpu_id]) == {"fp32", "fp16"}, gpu_id
        assert dict(cat.gpu(gpu_id).measured) == figures[gpu_id]
    # every anchored estimate is its donor's measured figure times the like-for-like peak ratio
    # (T4 fp16 = Quadro RTX 5000 0.6364 x 65/89.2 = 0.46375), marked estimated in the catalog
    for gpu_id, (donor, _) in tool.ANCHORS.items():
        gpu, source = cat.gpu(gpu_id), cat.gpu(donor)
        assert {"measured_fp32", "measured_fp16"} <= set(gpu.estimated_fields), gpu_id
        assert not {"measured_fp32", "measured_fp16"} & set(source.estimated_fields), donor
        if gpu_id == "mi300x":
            continue  # its fp16 comes from MLPerf (below); fp32 is carried from it
        for precision in ("fp32", "fp16"):
            mine, theirs = work_peak(gpu, precision), work_peak(source, precision)
            assert mine.kind == theirs.kind, (gpu_id, precision)
            expected = source.measured[precision] * mine.value / theirs.value
            assert gpu.measured[precision] == pytest.approx(expected, abs=6e-5), gpu_id
    assert cat.gpu("t4").measured["fp16"] == pytest.approx(0.6364 * 65 / 89.2, abs=1e-4)


def test_throughput_rows_against_another_gpu_are_bridged_by_its_figure(tool_rows):
    tool, rows = tool_rows
    table = {(r.gpu_id, r.precision): r for r in tool.reconcile(rows)}
    # RTX 5090 over RTX 4090 in one timm run, times the 4090's Lambda figure
    fp16 = table[("rtx-5090", "fp16")]
    assert (fp16.raw_value, fp16.factor, fp16.basis) == (1.3977, 1.976, "other-suite-bridged")
    assert fp16.value == round(1.3977 * 1.976, 4) == 2.7619
    assert not fp16.estimated
    # MLPerf's FP8 ratio taken for fp16 is marked estimated in the reference table
    mi = table[("mi300x", "fp16")]
    assert mi.estimated and mi.value == round(0.9880 * 5.355, 4) == 5.2907
    assert table[("mi300x", "fp32")].basis == tool.ANCHORED


def test_measured_source_is_the_tool_output(cat, tool_rows):
    tool, rows = tool_rows
    by_gpu: dict[str, list] = {}
    for rec in tool.reconcile(rows):
        by_gpu.setdefault(rec.gpu_id, []).append(rec)
    for gpu_id, records in by_gpu.items():
        assert cat.gpu(gpu_id).measured_source == tool.measured_source(records), gpu_id


@pytest.mark.parametrize(
    ("file", "key", "column", "value", "problem"),
    [
        ("instances.csv", "aws/p3.8xlarge", "tier", "bigcloud", "unknown tier 'bigcloud'"),
        ("instances.csv", "aws/p3.8xlarge", "as_of", "c.2024-25", "not an ISO date"),
        ("instances.csv", "aws/p3.8xlarge", "as_of", "2026-02-30", "not an ISO date"),
        ("price_history.csv", "aws/p5.48xlarge", "valid_to", "2025-06", "not an ISO date"),
    ],
)
def test_validators_reject_bad_tiers_and_dates(data_dir, file, key, column, value, problem):
    _edit(data_dir / file, key, column, value)
    with pytest.raises(CatalogError) as info:
        read_catalog(data_dir)
    assert (info.value.file, info.value.column) == (file, column)
    assert problem in str(info.value)
