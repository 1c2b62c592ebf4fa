"""The catalog's own charts: the buyer's guide's observations hold in the catalog's numbers, and
``costmodel catalog chart`` writes valid PNG and SVG files."""

from __future__ import annotations

import math
import statistics
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from cli import main
from pricing import load_catalog
from pricing.charts import CHARTS, SERIES, gpu_points, rental_points, series, write_chart

CONSUMER = ("GTX 900", "GTX 1000", "RTX 20", "RTX 30", "RTX 40", "RTX 50")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def points():
    return gpu_points(load_catalog(), "fp32")


def _of(points, name):
    return [p for p in points if p.series == name and p.price_usd]


@pytest.mark.parametrize(
    ("gpu_id", "expected"),
    [
        ("gtx-960", "GTX 900"),
        ("gtx-980-ti", "GTX 900"),
        ("gtx-titan-x-maxwell", "Titan"),
        ("gtx-1080-ti", "GTX 1000"),
        ("titan-xp", "Titan"),
        ("rtx-2080-ti", "RTX 20"),
        ("titan-rtx", "Titan"),
        ("rtx-3090", "RTX 30"),
        ("rtx-4090", "RTX 40"),
        ("rtx-5090", "RTX 50"),
        ("quadro-rtx-8000", "Workstation"),
        ("rtx-6000-ada", "Workstation"),
        ("v100-sxm2-16gb", "Data centre"),
        ("h100-sxm5-80gb", "Data centre"),
        ("mi300x", "Data centre"),
    ],
)
def test_the_series_comes_from_the_gpu_rows(gpu_id, expected):
    assert series(load_catalog().gpu(gpu_id)) == expected


def test_every_gpu_belongs_to_a_series():
    assert {series(g) for g in load_catalog().gpus.values()} <= set(SERIES)


def test_gtx_1000_gives_about_twice_the_gflops_per_dollar_of_gtx_900(points):
    # The guide: the GTX 1000 series gave about twice the price-performance of the GTX 900.
    # With the catalog's launch prices the medians are 17.1 and 10.6 GFLOPS/USD: 1.6 times.
    old = statistics.median(p.gflops_per_dollar for p in _of(points, "GTX 900"))
    new = statistics.median(p.gflops_per_dollar for p in _of(points, "GTX 1000"))
    assert 1.5 <= new / old <= 2.5
    # and every GTX 1000 card beats the best GTX 900 card on it
    best_old = max(p.gflops_per_dollar for p in _of(points, "GTX 900"))
    assert min(p.gflops_per_dollar for p in _of(points, "GTX 1000")) > best_old


@pytest.mark.parametrize("name", ["GTX 900", "GTX 1000", "RTX 20", "RTX 30"])
def test_within_a_series_price_and_performance_are_roughly_proportional(points, name):
    mine = _of(points, name)
    assert len(mine) >= 3
    prices = [p.price_usd for p in mine]
    flops = [p.gflops for p in mine]
    assert spearmanr(prices, flops).statistic >= 0.9  # a dearer card of a series is faster
    assert pearsonr(np.log(prices), np.log(flops)).statistic >= 0.85  # log-log correlation


def test_newer_generations_give_more_gflops_per_watt(points):
    medians = [
        statistics.median(p.gflops_per_watt for p in points if p.series == name)
        for name in CONSUMER
    ]
    # GTX 900 26, GTX 1000 43, RTX 20 45, RTX 30 93, RTX 40 184, RTX 50 182 GFLOPS/W: each
    # generation at least as efficient as the best before it (within 5 %), 7x in ten years.
    for k in range(1, len(medians)):
        assert medians[k] >= 0.95 * max(medians[:k]), (CONSUMER[k], medians)
    assert medians[-1] > 5 * medians[0]
    dated = [p for p in points if p.year is not None]
    assert spearmanr([p.year for p in dated], [p.gflops_per_watt for p in dated]).statistic > 0.7


def test_tensor_charts_keep_the_gpus_with_tensor_cores():
    tensor = gpu_points(load_catalog(), "fp16")
    assert "gtx-1080-ti" not in {p.id for p in tensor} and "rtx-2080-ti" in {p.id for p in tensor}
    assert all(p.gflops > 0 for p in tensor)


def test_rented_cost_per_reference_gpu_hour_by_tier():
    cat = load_catalog()
    rented = rental_points(cat)
    priced = sum(
        getattr(i, f"{p}_usd_per_hour") is not None
        for i in cat.instances.values()
        for p in ("on_demand", "spot", "reserved_1y", "reserved_3y")
    )
    assert len(rented) == priced
    assert {p.tier for p in rented} == {"hyperscaler", "neocloud", "marketplace"}
    p3 = next(p for p in rented if p.instance == "aws/p3.2xlarge" and p.pricing == "on_demand")
    assert p3.usd_per_reference_gpu_hour == pytest.approx(3.06)  # the reference GPU itself
    assert all(math.isfinite(p.usd_per_reference_gpu_hour) for p in rented)


def _valid_png(path: Path) -> None:
    import matplotlib.image

    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    height, width, _ = matplotlib.image.imread(path).shape
    assert width > 600 and height > 400


def _valid_svg(path: Path) -> None:
    root = ET.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert len(list(root.iter())) > 100


@pytest.mark.parametrize("chart", CHARTS)
def test_the_command_writes_valid_png_and_svg(tmp_path, capsys, chart):
    for suffix, check in ((".png", _valid_png), (".svg", _valid_svg)):
        out = tmp_path / "charts" / f"{chart}{suffix}"
        assert main(["catalog", "chart", chart, "-o", str(out)]) == 0
        assert capsys.readouterr().out.strip() == str(out)
        check(out)


def test_svg_charts_are_reproducible(tmp_path):
    a = write_chart(load_catalog(), "gflops-per-dollar", tmp_path / "a.svg", "fp16")
    b = write_chart(load_catalog(), "gflops-per-dollar", tmp_path / "b.svg", "fp16")
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["chart", "gflops-per-dolar", "-o", "x.png"], "did you mean 'gflops-per-dollar'?"),
        (["chart", "cost-per-hour", "-o", "x.pdf"], "a chart is written as .png or .svg"),
        (["chart"], "catalog chart needs a chart"),
        (["gpus", "-o", "x.png"], "apply to 'costmodel catalog chart' only"),
    ],
)
def test_chart_errors_are_usage_errors(capsys, args, says):
    assert main(["catalog", *args]) == 2
    assert says in capsys.readouterr().err
