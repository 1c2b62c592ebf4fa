"""The catalog's own charts: the buyer's guide's observations hold in the catalog's numbers,
``costmodel catalog chart`` writes valid PNG and SVG files, every GPU is named beside its point
without a label hiding another, and the guide lines span the data with their labels off it."""

from __future__ import annotations

import math
import statistics
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from matplotlib.text import Annotation, Text
from scipy.stats import pearsonr, spearmanr

from cli import main
from pricing import load_catalog
from pricing.charts import (
    CHARTS,
    SERIES,
    draw_chart,
    gpu_points,
    guide_ratios,
    rental_points,
    series,
    short_name,
    write_chart,
)
from pricing.labels import freeze, overlap

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


# --- labels and guide lines --------------------------------------------------------------

GPU_CHARTS = [
    ("gflops-per-dollar", "fp32"),
    ("gflops-per-dollar", "fp16"),
    ("gflops-per-watt", "fp32"),
    ("gflops-per-watt", "fp16"),
]


@pytest.mark.parametrize(
    ("name", "short"),
    [
        ("GeForce RTX 2080 Ti", "RTX 2080 Ti"),
        ("GeForce GTX 1060 6GB", "GTX 1060 6GB"),
        ("GeForce GTX Titan X (Maxwell)", "Titan X (Maxwell)"),
        ("NVIDIA Titan Xp", "Titan Xp"),
        ("NVIDIA Tesla V100 SXM2 16GB", "V100 SXM2 16GB"),
        ("NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada"),
        ("NVIDIA GH200 Grace Hopper 96GB", "GH200 96GB"),
        ("NVIDIA Quadro RTX 8000", "Quadro RTX 8000"),
        ("AMD Instinct MI300X", "MI300X"),
        ("AMD Radeon Pro V520", "Radeon Pro V520"),
        ("NVIDIA", "NVIDIA"),  # nothing left: the name as it is
    ],
)
def test_a_gpu_is_labelled_with_its_short_name(name, short):
    assert short_name(name) == short


@pytest.mark.parametrize(
    ("values", "ratios"),
    [
        ([1.5, 42.6], [1, 3, 10, 30, 100]),  # FP32 per dollar: B200 to RTX 3080
        ([10.1, 103.6], [10, 30, 100, 300]),  # dense FP16 per dollar: V100 32GB to RTX 4090
        ([3.0, 3.0], [3]),
        ([0.5, 0.9], [0.3, 1]),
    ],
)
def test_guide_ratios_bracket_the_data_in_1_3_10_steps(values, ratios):
    assert guide_ratios(values) == pytest.approx(ratios)


@pytest.fixture(scope="module", params=GPU_CHARTS, ids=lambda c: "-".join(c))
def drawn(request):
    """A GPU chart laid out for good: (chart, precision, axes, renderer)."""
    chart, precision = request.param
    fig = draw_chart(load_catalog(), chart, precision)
    return chart, precision, fig.axes[0], freeze(fig)


def _box(artist, renderer):
    """The box of a text alone (an annotation's leader line left out) [px]."""
    b = Text.get_window_extent(artist, renderer)
    return (b.x0, b.y0, b.x1, b.y1)


def _markers(ax):
    """Each marker's box [px]: its centre and the radius of its area (28 points²) and edge."""
    radius = math.sqrt(28) / 2 * ax.figure.dpi / 72 + 0.5
    centres = [ax.transData.transform(o) for c in ax.collections for o in c.get_offsets()]
    return [(x - radius, y - radius, x + radius, y + radius) for x, y in centres]


def _points_of(chart, precision):
    points = gpu_points(load_catalog(), precision)
    if chart == "gflops-per-dollar":
        return [p for p in points if p.price_usd], lambda p: (p.price_usd, p.gflops)
    return points, lambda p: (p.gflops, p.tdp_w)


def test_every_gpu_is_named_beside_its_point(drawn):
    chart, precision, ax, _ = drawn
    points, xy = _points_of(chart, precision)
    labels = [t for t in ax.texts if isinstance(t, Annotation)]
    named = {name: tuple(a.xy) for a in labels for name in a.get_text().split(" / ")}
    assert sorted(named) == sorted(p.label for p in points)
    for p in points:
        assert named[p.label] == pytest.approx(xy(p))  # GPUs at one place share a label


def test_no_label_hides_another_a_point_or_the_legend(drawn):
    _, _, ax, renderer = drawn
    texts = [_box(t, renderer) for t in ax.texts]
    legend = ax.get_legend().get_window_extent(renderer)
    frame = ax.get_window_extent(renderer)
    for i, box in enumerate(texts):
        assert [overlap(box, other) for other in texts[i + 1 :]] == [0.0] * (len(texts) - i - 1)
        assert max(overlap(box, m) for m in _markers(ax)) == 0.0
        assert overlap(box, (legend.x0, legend.y0, legend.x1, legend.y1)) == 0.0
        assert frame.x0 <= box[0] and box[2] <= frame.x1 and frame.y0 <= box[1]
        assert box[3] <= frame.y1


def test_the_guide_lines_span_the_data_and_their_labels_keep_off_it(drawn):
    chart, precision, ax, renderer = drawn
    points, xy = _points_of(chart, precision)
    per_dollar = chart == "gflops-per-dollar"
    data = [p.gflops_per_dollar if per_dollar else p.gflops_per_watt for p in points]
    unit = "GFLOPS/$" if per_dollar else "GFLOPS/W"
    guides = {t.get_text(): t for t in ax.texts if t.get_text().endswith(unit)}
    ratios = [float(text.split()[0]) for text in guides]
    assert ratios == guide_ratios(data)
    assert ratios[0] <= min(data) < ratios[1] and ratios[-2] < max(data) <= ratios[-1]
    lines = [line for line in ax.get_lines() if line.get_linestyle() == ":"]
    assert len(lines) == len(ratios)
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    for line, ratio in zip(lines, ratios, strict=True):
        xs, ys = line.get_data()
        assert (xs[0], xs[-1]) == pytest.approx((x0, x1))  # across the whole width
        slope = ys[0] / xs[0]
        assert slope == pytest.approx(ratio if per_dollar else 1 / ratio)
        assert slope * x1 > y0 and slope * x0 < y1  # it crosses the axes
    for text in guides.values():
        assert max(overlap(_box(text, renderer), m) for m in _markers(ax)) == 0.0
    if chart == "gflops-per-dollar" and precision == "fp32":
        assert "1 GFLOPS/$" in guides  # the line under the data centre cards
