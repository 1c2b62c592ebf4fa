"""The buyer's-guide advice fires where the source documents say it should, and only there."""

import pytest

import scenarios


def _warnings(buy: dict, rent: dict | None = None, **top) -> tuple:
    doc = {
        "version": 1,
        "name": "advice",
        "buy": buy,
        "rent": rent or {"instance": "aws/p3.8xlarge"},
        **top,
    }
    return scenarios.load_mapping(doc).warnings


def _codes(buy: dict, rent: dict | None = None, **top) -> set[str]:
    return {w.code for w in _warnings(buy, rent, **top)}


def test_four_rtx4090_in_an_office():
    # peak = 4*450 + 300 (4-GPU tier) = 2100 W > 1920 W (20 A circuit); the default build takes
    # the 4-GPU workstation with 2 x 1600 W supplies, which holds it
    codes = _codes({"gpu": "rtx-4090", "gpu_count": 4})
    assert {"office_circuit", "cooling_open_air", "loud_hot"} <= codes
    assert not {"gpu_power_high", "psu_undersized"} & codes


def test_a_power_supply_sized_for_350_w_cards_holds_no_more():
    # 4 x 350 W RTX 3090 + 300 W = 1,700 W take the 2000 W workstation; drawing 450 W each,
    # 4 x 450 + 300 = 2,100 W exceed its supply
    codes = _codes({"gpu": "rtx-3090", "gpu_count": 4, "gpu_power_w": 450})
    assert {"gpu_power_high", "psu_undersized"} <= codes
    assert not {"gpu_power_high", "psu_undersized"} & _codes({"gpu": "rtx-3090", "gpu_count": 4})


def test_derated_cooling_and_colocation_silence_their_warnings():
    codes = _codes(
        {"gpu": "rtx-4090", "gpu_count": 4, "thermal_derate": 0.8, "hosting_usd_per_kw_month": 180}
    )
    assert not {"cooling_open_air", "office_circuit", "loud_hot"} & codes


def test_small_memory_cards():
    assert "gpu_memory_low" in _codes({"gpu": "gtx-1050", "gpu_count": 1})
    assert "gpu_memory_small" in _codes({"gpu": "rtx-2060", "gpu_count": 1})
    assert not {"gpu_memory_low", "gpu_memory_small"} & _codes({"gpu": "rtx-3090", "gpu_count": 1})


def test_consumer_cards_in_an_eight_gpu_chassis():
    assert "chassis_fit" in _codes({"gpu": "rtx-3090", "gpu_count": 8})
    assert "chassis_fit" not in _codes(
        {"gpu": "v100-sxm2-16gb", "gpu_count": 8}, {"instance": "aws/p3.16xlarge"}
    )


def test_modules_mount_only_on_their_baseboards():
    # the MI300X is an OAM module and the H100 SXM5 an SXM module: not in the 1- and 2-GPU
    # tiers (PCIe cards only), on the 4- and 8-GPU baseboards of SXM modules and the 8-module
    # OAM baseboard; a PCIe H100 fits anywhere
    for gpu, count, boards in (
        ("mi300x", 1, "8"),
        ("mi300x", 4, "8"),
        ("h100-sxm5-80gb", 2, "4 or 8"),
        ("v100-sxm2-16gb", 1, "4 or 8"),
    ):
        warnings = _warnings({"gpu": gpu, "gpu_count": count})
        (advice,) = [w for w in warnings if w.code == "form_factor"]
        assert advice.severity == "error" and advice.side == "buy"
        assert f"gpu_count {boards}," in advice.message and "PCIe cards only" in advice.message
    for gpu, count in (("mi300x", 8), ("h100-sxm5-80gb", 4), ("h100-pcie-80gb", 1)):
        assert "form_factor" not in _codes({"gpu": gpu, "gpu_count": count}), gpu
    # 3 modules take the 4-GPU tier, a baseboard
    assert "form_factor" not in _codes({"gpu": "a100-sxm4-80gb", "gpu_count": 3})


def test_pcie_lanes():
    assert "pcie_lanes" in _codes({"gpu": "rtx-3090", "gpu_count": 4, "interconnect": "pcie-x8"})
    assert "pcie_lanes" not in _codes({"gpu": "rtx-3090", "gpu_count": 4})


def test_precision_without_tensor_cores_or_measurements():
    # the GTX 1070's fp16 figure is the catalog's estimate (anchored on the GTX 1080 Ti)
    codes = _codes({"gpu": "gtx-1070", "gpu_count": 1}, workload={"precision": "fp16"})
    assert "no_tensor_cores" in codes and "throughput_estimated" in codes


def test_an_estimated_throughput_is_not_called_peaks_and_peaks_are():
    # the MI300X's figure comes from MLPerf Training (against the H100), not from peaks: the
    # warning was named throughput_from_peaks and said "from like-for-like peak figures"
    (mi300x,) = [
        w for w in _warnings({"gpu": "mi300x", "gpu_count": 8}) if w.code.startswith("throughput_")
    ]
    assert mi300x.code == "throughput_estimated" and "MLPerf" in mi300x.message
    assert "peak figures is used" not in mi300x.message
    inline = {"name": "card", "memory_gb": 24, "tdp_w": 300, "price_usd": 1000, "fp16_tflops": 250}
    codes = _codes({"gpu": inline, "gpu_count": 1}, workload={"precision": "fp16"})
    assert "throughput_from_peaks" in codes and "throughput_estimated" not in codes


def test_spot_short_horizon_and_estimated_price():
    codes = _codes(
        {"gpu": "h100-sxm5-80gb", "gpu_count": 8},
        {"instance": "aws/p3.16xlarge", "pricing": "spot"},
        horizon_months=6,
    )
    assert {"spot_overhead", "short_horizon", "price_estimated"} <= codes
    codes = _codes(
        {"gpu": "h100-sxm5-80gb", "gpu_count": 8, "gpu_price_usd": 35000},
        {"instance": "aws/p3.16xlarge", "pricing": "spot", "spot_interruption_overhead": 0.1},
    )
    assert not {"spot_overhead", "short_horizon", "price_estimated"} & codes


def test_warning_shape_and_order_are_stable():
    sc = scenarios.load_mapping(
        {
            "version": 1,
            "name": "a",
            "buy": {"gpu": "rtx-4090", "gpu_count": 4},
            "rent": {"instance": "aws/p3.8xlarge"},
        }
    )
    again = scenarios.load_mapping(sc.document)
    assert list(sc.warnings) == list(again.warnings)
    for w in sc.warnings:
        assert w.severity in ("info", "warning", "error") and w.message


def test_reservation_that_outlives_the_horizon():
    reserved = {"instance": "aws/p3.8xlarge", "pricing": "reserved_3y"}
    gpu = {"gpu": "rtx-3090", "gpu_count": 4}
    assert "reservation_outlives_horizon" in _codes(gpu, reserved, horizon_months=12)
    assert "reservation_outlives_horizon" not in _codes(gpu, reserved, horizon_months=36)
    assert "reservation_outlives_horizon" in _codes(
        gpu, {**reserved, "pricing": "reserved_1y"}, horizon_months=30
    )
    none = {**reserved, "committed_instances": 0}
    assert "reservation_outlives_horizon" not in _codes(gpu, none, horizon_months=12)


@pytest.mark.parametrize(("count", "article"), [(4, "a"), (8, "an")])
def test_a_loud_box_takes_its_article(count, article):
    # "a 8-GPU box is loud and hot"
    (loud,) = [
        w for w in _warnings({"gpu": "rtx-4090", "gpu_count": count}) if w.code == "loud_hot"
    ]
    assert loud.message.startswith(f"{article} {count}-GPU box")
