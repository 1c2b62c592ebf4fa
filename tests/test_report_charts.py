"""The report charts' SVG writer: round ticks, ranges that hold the data, gaps, colours, text
widths, escaping, and each plan chart read back against the numbers it draws.

The scenario charts are read back in tests/test_reports.py; every chart is read here through
its own tick labels (tests/svgread.py), never as pixels.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import scenarios
from present import from_dict, reports, to_dict
from present.reports.capacity_chart import capacity_chart, capacity_series
from present.reports.chart import Chart
from present.reports.charts import render_charts, tornado_chart
from present.reports.colours import ramp
from present.reports.plan_charts import frontier_chart, work_split_chart
from present.reports.plot import Axes, Axis
from present.reports.svg import escape, text_width
from present.reports.ticks import nice_ticks, view
from tests import svgread

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "scenarios" / "examples"
SVG = svgread.SVG


@cache
def _lab() -> str:
    """The lab example's answer as JSON text (300 draws: it has a tornado)."""
    answer = scenarios.evaluate(EXAMPLES / "lab-4x-rtx2080ti-vs-p3-8xlarge.yaml", samples=300)
    return json.dumps(to_dict(answer))


@cache
def _plan(name: str) -> str:
    return json.dumps(to_dict(scenarios.evaluate(EXAMPLES / name, samples=200)))


# --- ticks and ranges ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lo", "hi", "bins", "integer", "ticks"),
    [
        (0, 100, 5, False, [0, 20, 40, 60, 80, 100]),  # 100 / 5 = 20: a step of 2 x 10
        (0, 100, 9, False, [0, 20, 40, 60, 80, 100]),  # 100 / 9 = 11.1 -> 20 (10 gives 11)
        (0.5, 36.5, 9, True, [5, 10, 15, 20, 25, 30, 35]),  # 36 / 9 = 4 -> 5
        (1.5, 2.5, 9, True, [2]),  # one server: one whole tick
        (-66_000, -60_000, 4, False, [-66_000, -64_000, -62_000, -60_000]),  # 6k / 4 -> 2k
        (0, 1, 4, False, [0, 0.25, 0.5, 0.75, 1]),  # 1 / 4 = 0.25: 2.5 x 0.1
    ],
)
def test_ticks_are_the_round_steps_matplotlib_chooses(lo, hi, bins, integer, ticks):
    assert list(nice_ticks(lo, hi, bins, integer)) == pytest.approx(ticks)


@settings(max_examples=200, deadline=None)
@given(
    lo=st.floats(-1e7, 1e7),
    span=st.floats(1e-3, 1e7),
    bins=st.integers(1, 9),
    integer=st.booleans(),
)
@example(lo=2.86023264731868e-11, span=0.015625, bins=1, integer=True)  # tick 0: 3e-11 below
def test_ticks_lie_within_the_range_on_one_round_step(lo, span, bins, integer):
    hi = lo + span
    ticks = nice_ticks(lo, hi, bins, integer)
    if ticks.size == 0:  # a range narrower than one whole number
        assert integer and math.floor(hi) < math.ceil(lo)
        return
    assert ticks.size <= bins + 1 or (integer and span / bins < 1)
    one = 1.0 if integer else 10 * span  # the largest step one tick can have
    step = one if ticks.size == 1 else ticks[1] - ticks[0]
    slack = 1e-9 * max(span, step)  # an end within 1e-9 of a step counts as on it
    assert ticks[0] >= lo - slack and ticks[-1] <= hi + slack
    if ticks.size > 1:
        steps = np.diff(ticks)
        scale = 1e-12 * np.abs(ticks).max()  # the rounding of values far from zero
        np.testing.assert_allclose(steps, steps[0], rtol=1e-9, atol=scale)
        mantissa = steps[0] / 10 ** math.floor(math.log10(steps[0]))
        assert min(abs(mantissa / m - 1) for m in (1, 2, 2.5, 5, 10)) < 1e-6 + scale / steps[0]
        assert not integer or steps[0] == round(steps[0])


def test_an_axis_shows_its_data_with_a_margin_at_each_free_end():
    data = np.array([10.0, np.nan, 30.0])
    assert view(data) == pytest.approx((9.0, 31.0))  # 5 % of 20 at each end
    assert view(data, low=0.0) == pytest.approx((0.0, 31.0))
    assert view(data, 0.0, 100.0) == (0.0, 100.0)
    assert view(np.array([5.0])) == pytest.approx((4.75, 5.25))  # one value: 5 % of it
    assert view(np.array([np.nan])) == pytest.approx((-0.05, 1.05))  # nothing drawn: 0..1


def test_every_point_drawn_lies_within_its_axes():
    for svg in render_charts(from_dict(json.loads(_lab()))).values():
        for ax in svgread.axes(svgread.parse(svg)):
            left, top, right, bottom = ax.box
            for el in ax.group.iter():
                if el.tag in (f"{SVG}polyline", f"{SVG}polygon"):
                    pts = np.array([p.split(",") for p in el.get("points").split()], float)
                    assert np.all((pts[:, 0] >= left - 0.01) & (pts[:, 0] <= right + 0.01))
                    assert np.all((pts[:, 1] >= top - 0.01) & (pts[:, 1] <= bottom + 0.01))


# --- drawing ---------------------------------------------------------------------------------


def test_a_value_missing_breaks_the_line_and_the_band():
    ax = Axes(Axis("x"), Axis("y"))
    x = np.arange(6.0)
    y = np.array([1.0, 2.0, np.nan, 4.0, 5.0, 6.0])
    ax.band(x, y - 1, y + 1, "#1f5fa8", label="band")
    ax.line(x, y, "#1f5fa8", label="line")
    (drawn,) = svgread.axes(svgread.parse(Chart("t", "T", "D", [ax]).svg()))
    lines = drawn.items("line")
    assert [len(el.get("points").split()) for el in lines] == [2, 3]  # 0-1, then 3-5
    areas = drawn.items("band")
    assert [len(el.get("points").split()) for el in areas] == [4, 6]
    assert drawn.data(_pts(lines[1]))[:, 1] == pytest.approx([4, 5, 6], abs=1e-3)


def _pts(el: ET.Element) -> np.ndarray:
    return np.array([p.split(",") for p in el.get("points").split()], float)


def test_the_ramp_is_matplotlibs_viridis():
    from matplotlib import colormaps

    for n in (1, 2, 3, 7):
        ours = np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in ramp(n)])
        theirs = colormaps["viridis"](np.linspace(0.0, 0.85, n))[:, :3] * 255
        assert np.abs(ours - theirs).max() <= 4  # of 255: viridis between its 11 stops
    assert len(set(ramp(9))) == 9


@pytest.mark.parametrize(
    "text",
    [
        "$62.5k",
        "-$1.025M",
        "100%",
        "Utilisation of the owned GPUs [% of wall-clock hours]",
        "Break-even vs the API P10–P90 (37.6 % – 80.8 %)",
        "buy.electricity_usd_per_kwh",
        "WWW MMM mmm iii",
    ],
)
def test_a_label_is_measured_at_least_as_wide_as_dejavu_sans_draws_it(text):
    # The layout makes room from these widths: too narrow and a label would overlap.
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    font = FontProperties(family="DejaVu Sans", size=10)
    width = TextToPath().get_text_width_height_descent(text, font, ismath=False)[0]
    assert width <= text_width(text, 10) <= 1.15 * width


# --- what the plan charts show ---------------------------------------------------------------


def test_the_frontier_chart_puts_each_candidate_at_its_mean_and_p90():
    plan = from_dict(json.loads(_plan("plan-h100-fleet-reserved-spot.yaml")))
    (ax,) = svgread.axes(svgread.parse(frontier_chart(plan)))
    tol = 1e-4 * max(c.cost.p90 for c in plan.candidates)
    front = sorted(plan.frontier, key=lambda c: (c.cost.mean, c.cost.p90))
    expected = [(c.cost.mean, c.cost.p90) for c in front]
    np.testing.assert_allclose(ax.line("frontier"), expected, atol=tol)
    dots = [(float(c.get("cx")), float(c.get("cy"))) for c in ax.items("candidate")]
    drawn = ax.data(np.array(dots))
    everyone = np.array([(c.cost.mean, c.cost.p90) for c in plan.candidates])
    np.testing.assert_allclose(drawn, everyone, atol=tol)


def test_the_work_split_stacks_owned_reserved_and_burst_by_month():
    plan = from_dict(json.loads(_plan("plan-h100-fleet-reserved-spot.yaml")))
    split = plan.work_split
    (ax,) = svgread.axes(svgread.parse(work_split_chart(plan)))
    top = np.zeros(len(split.owned))
    for values, label in (
        (split.owned, "owned servers"),
        (split.reserved, "reserved instances"),
        (split.burst, "burst instances"),
    ):
        if not np.any(np.asarray(values) > 0):
            continue
        top = top + np.asarray(values)
        upper = ax.polygon(label)[: 2 * len(top)]  # month m held from m - 1/2 to m + 1/2
        tol = 1e-4 * float(np.sum([split.owned, split.reserved, split.burst], axis=0).max())
        np.testing.assert_allclose(upper[:, 1], np.repeat(top, 2), atol=tol)
        np.testing.assert_allclose(upper[::2, 0], np.arange(len(top)) + 0.5, atol=1e-3)


def test_the_capacity_chart_draws_the_series_it_names():
    plan = from_dict(json.loads(_plan("plan-staged-growth.yaml")))
    s = capacity_series(plan)
    (ax,) = svgread.axes(svgread.parse(capacity_chart(plan)))
    tol = 1e-4 * float(max(s.work_p90.max(), s.capacity.max()))
    work = ax.line("work: mean")
    np.testing.assert_allclose(work, np.column_stack([s.months, s.work]), atol=tol)
    band = ax.polygon("work: P10–P90 of the draws")
    n = s.months.size
    np.testing.assert_allclose(band[:n, 1], s.work_p90, atol=tol)
    np.testing.assert_allclose(band[n:, 1][::-1], s.work_p10, atol=tol)
    capacity = ax.line("owned capacity: mean")
    np.testing.assert_allclose(capacity[::2, 1], s.capacity, atol=tol)
    (ymin, _, _), (ymax, _, _) = ax.yticks[0], ax.yticks[-1]
    assert ax.box[1] <= ymax and ymin <= ax.box[3]


# --- text -----------------------------------------------------------------------------------

HOSTILE = "</text><script>alert(1)</script> & \"x\" 'y' <!-- \x07"


def test_text_is_escaped_in_the_chart_and_the_report():
    data = json.loads(_lab())
    data["tornado"]["inputs"][0]["input"] = HOSTILE
    answer = from_dict(data)
    svg = tornado_chart(answer.result, "rent")
    root = svgread.parse(svg)  # well-formed XML: nothing closed early
    assert not [el for el in root.iter() if el.tag in (f"{SVG}script", "script")]
    shown = HOSTILE.replace("\x07", "")  # XML cannot hold it
    assert shown in [t.text for t in root.iter(f"{SVG}text")]
    assert shown in root.findtext(f"{SVG}desc")
    assert escape(HOSTILE) in svg
    html = reports.render(answer, "html").decode("utf-8")
    assert "<script>" not in html and html.count(escape(shown)) >= 2  # the chart, the table


def test_the_charts_of_one_report_have_ids_of_their_own():
    html = reports.render(from_dict(json.loads(_lab())), "html").decode("utf-8")
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids))
    assert html.count("<svg ") == 4


def test_an_html_report_does_not_import_matplotlib(tmp_path):
    result = tmp_path / "result.json"
    result.write_text(_lab(), encoding="utf-8")
    code = (
        "import json, sys\n"
        "from present import from_dict, reports\n"
        f"answer = from_dict(json.loads(open({str(result)!r}, encoding='utf-8').read()))\n"
        "for fmt in ('html', 'md', 'csv', 'json'):\n"
        "    reports.render(answer, fmt)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'PIL')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
