"""The proof of the structure: a fourth kind of side and a third unit of work, defined in this
file alone, registered, and taken through the engine, the JSON form, the CLI table, the HTML
and XLSX reports and the OpenAPI document without a change to the packages.

The side is a dedicated server rented by the month: a fixed monthly fee and a setup fee,
whatever the utilisation. The unit is an image generated, a GPU's rate given in images per
GPU-hour. Both are registered for this module only (:func:`registered`).
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pytest
from openpyxl import load_workbook
from rich.console import Console

from costmodel import Fixed, simulate, summarise
from costmodel.cashflows import RentLine, Terms, Value
from costmodel.discounting import growth_sum
from costmodel.distributions import Discrete, Distribution
from costmodel.result import CatalogRef
from costmodel.sides import SIDES, Side, SideError, register
from costmodel.units import UNITS, Unit
from present import from_dict, to_dict
from present.answer import Answer
from present.reports import render
from pricing.vocabulary import Bound
from tests.helpers import buy, model, rent

# --- the new side, in this file alone -----------------------------------------------------


def _usd(text: str) -> Any:
    bound = Bound(0, 1e7, "[USD]")
    return field(metadata={"unit": "[USD]", "text": text, "bound": bound, "dist": True})


@dataclass(frozen=True, kw_only=True)
class DedicatedInputs:
    """A dedicated server rented by the month: ``monthly_fee_usd`` [USD/month] and a one-off
    ``setup_usd`` [USD], whatever the utilisation."""

    monthly_fee_usd: Distribution = _usd("fee a month")
    setup_usd: Distribution = _usd("one-off setup fee")


@dataclass(frozen=True)
class DedicatedDraws:
    """Its inputs for a set of draws [USD/month], [USD]."""

    monthly_fee_usd: Value
    setup_usd: Value


def _drawn(inputs: DedicatedInputs, values: dict, path: str) -> DedicatedDraws:
    return DedicatedDraws(
        *(values.get(f"{path}.{f.name}", getattr(inputs, f.name)) for f in fields(inputs))
    )


def _line(d: DedicatedDraws, own: Value, inst: Value, terms: Terms) -> RentLine:
    """TCO = (1 - tau) * (setup + fee * sum_m d_m), flat in utilisation."""
    flat = growth_sum(0.0, terms.discount_rate, terms.horizon)
    return RentLine((1 - terms.tax_rate) * (d.setup_usd + d.monthly_fee_usd * flat), 0.0, 0.0)


def _by_month(d: DedicatedDraws, own: Value, terms: Terms) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative cost to month m = 0..H: (1 - tau) * (setup + fee * sum_{j<=m} d_j), month by
    draw ``(H + 1, S)`` when either is drawn."""
    flat = growth_sum(0.0, terms.discount_rate, np.arange(terms.horizon + 1))
    fee, setup = np.asarray(d.monthly_fee_usd), np.asarray(d.setup_usd)
    if fee.ndim or setup.ndim:
        flat = flat[:, None]
    return (1 - terms.tax_rate) * (setup + fee * flat), np.zeros(terms.horizon + 1)


DEDICATED = Side(
    name="dedicated",
    label="Dedicated",
    option="dedicated server",
    doing="the dedicated server",
    inputs=DedicatedInputs,
    price="monthly_fee_usd",
    drawn=_drawn,
    capacity=lambda d: 1.0,
    line=_line,
    by_month=_by_month,
)

IMAGE = Unit(
    id="image",
    words="image",
    header="$/image",
    carbon_header="g/image",
    column="image",
    note="unit cost per image generated",
    rate="relative_throughput",
    rate_unit="[images/GPU-hour]",
    rate_text="images one GPU generates an hour",
    rate_bound=Bound(0.001, 1e6, "[images/GPU-hour]"),
    demand="images_per_month",
    demand_unit="[images/month]",
    demand_text="images in month 1",
    demand_bound=Bound(0, 1e12, "[images/month]"),
    fine=True,
)


@pytest.fixture(scope="module", autouse=True)
def registered() -> Iterator[None]:
    """The side and the unit registered for this module's tests, and removed after."""
    SIDES[DEDICATED.name] = DEDICATED
    UNITS[IMAGE.id] = IMAGE
    yield
    del SIDES[DEDICATED.name], UNITS[IMAGE.id]


# --- a question that uses them --------------------------------------------------------------

#: One GPU generating 120 images an hour, bought at 15,000 USD (nothing resold, no power);
#: on-demand instances at 2 USD/h doing the same 120 images an hour; a dedicated server at
#: 1,500 USD a month plus 500 USD setup; 12 months, no discounting, no tax.
LEVELS = (0.25, 0.5, 1.0)


def _inputs() -> Any:
    return model(
        buy(gpu_price_usd=15_000.0, relative_throughput=120.0),
        rent(price_usd_per_hour=2.0, relative_throughput=120.0),
        unit="image",
        utilisation=LEVELS,
        report_utilisation=0.5,
        further=(
            ("dedicated", DedicatedInputs(monthly_fee_usd=Fixed(1500), setup_usd=Fixed(500))),
        ),
    )


@pytest.fixture(scope="module")
def result() -> Any:
    """The engine's result in an answer, with the catalog the scenario layer names."""
    return Answer(summarise(simulate(_inputs())), catalog=CatalogRef("test", "2026-01-01"))


def test_the_engine_compares_the_new_side_in_the_new_unit(result) -> None:
    # TCO_dedicated = 500 + 12 * 1500 = 18,500 at every level; TCO_buy = 15,000;
    # TCO_rent(u) = u * 730 * 12 * 2 = 17,520 u.
    v = result.versus["dedicated"]
    assert v.tco.p50 == pytest.approx([18_500.0] * 3, rel=1e-12)
    assert result.rent_tco.p50 == pytest.approx([4380.0, 8760.0, 17_520.0], rel=1e-12)
    # Buying (15,000) is cheaper than the dedicated server at every level: "always".
    assert list(v.prob_buy_cheaper) == [1.0, 1.0, 1.0]
    assert v.breakeven.p50 == 0.0 and v.breakeven.prob_always == 1.0
    # Payback: 15,000 = 500 + 1,500 t -> t = 9 + (15,000 - 14,000) / 1,500 = 9.6667 months.
    assert v.payback.p50 == pytest.approx([9 + 1000 / 1500] * 3, rel=1e-12)
    # Per image at u = 0.5: 18,500 / (0.5 * 730 * 12 * 120) = 18,500 / 525,600.
    assert result.unit == "image" and result.sides == ("buy", "rent", "dedicated")
    assert result.cost_per_unit["dedicated"].p50[1] == pytest.approx(18_500 / 525_600, rel=1e-12)
    # Cheapest at u = 0.5: renting (8,760); at u = 1: buying (15,000 < 17,520 < 18,500).
    shares = result.cheapest_share
    assert [shares[s][1] for s in result.sides] == [0.0, 1.0, 0.0]
    assert [shares[s][2] for s in result.sides] == [1.0, 0.0, 0.0]
    # Cumulative cost at the report utilisation: 500 at month 0, 18,500 at month 12.
    cum = result.cumulative_cost["dedicated"]
    assert (cum.p50[0], cum.p50[-1]) == pytest.approx((500.0, 18_500.0), rel=1e-12)
    # No carbon figures for the new side: unknown, never zero.
    assert result.carbon is None


def _drawn_fee(name: str = "dedicated") -> Any:
    """The question above at u = 0.5 with the server's fee drawn: 1,000 USD a month (25 %) or
    1,500 (75 %), over a Latin hypercube of 400 draws (one replicate: exactly 100 at 1,000);
    the side given as ``name``."""
    fee = Discrete((1000.0, 1500.0), (0.25, 0.75))
    return dataclasses.replace(
        _inputs(),
        utilisation=(0.5,),
        samples=400,
        method="lhs",
        further=((name, DedicatedInputs(monthly_fee_usd=fee, setup_usd=Fixed(500))),),
    )


@pytest.fixture(scope="module")
def drawn_fee() -> Any:
    """:func:`_drawn_fee`'s result in an answer."""
    return Answer(summarise(simulate(_drawn_fee())), catalog=CatalogRef("test", "2026-01-01"))


def test_the_engine_weighs_the_inputs_against_the_new_side(drawn_fee) -> None:
    # The build at 15,000 USD; the dedicated server's fee 1,000 USD a month (25 %) or 1,500
    # (75 %), setup 500, 12 months, no discounting or tax: TCO_dedicated = 500 + 12 * 1,000
    # = 12,500 or 500 + 12 * 1,500 = 18,500, mean 0.25 * 12,500 + 0.75 * 18,500 = 17,000.
    # gap = TCO_buy - TCO_dedicated = +2,500 or -3,500, E gap = 625 - 2,625 = -2,000 < 0:
    # not knowing the fee one buys; knowing it one takes the server at 1,000 a month and
    # saves 2,500 there, so EVPI = 0.25 * 2,500 = 625 USD, all of it the fee's.
    got = drawn_fee
    assert got.versus["dedicated"].tco.mean == pytest.approx([17_000.0], rel=1e-12)
    assert list(got.versus["dedicated"].prob_buy_cheaper) == [0.75]
    rival = got.rival("dedicated")
    assert [r.versus for r in got.rivals] == ["dedicated"]
    voi = rival.value_of_information
    assert voi.evpi == pytest.approx(625.0, rel=1e-12)
    (only,) = voi.by_input
    assert only.input == "dedicated.monthly_fee_usd"
    assert only.evppi == pytest.approx(625.0, rel=1e-12)  # one bin per value: exact
    # The gap falls as the fee rises, the one input: a rank correlation of -1.
    assert rival.sensitivity.metric == "buy_tco - dedicated_tco"
    assert [(d.input, d.spearman) for d in rival.sensitivity.inputs] == [
        ("dedicated.monthly_fee_usd", pytest.approx(-1.0, rel=1e-12))
    ]
    # The tornado: the fee's P10 is 1,000 (gap +2,500; the server is cheaper at every u,
    # buying never breaks even), its P50 and P90 1,500 (gap -3,500; buying is cheaper even
    # idle, break-even 0).
    t = rival.tornado
    assert (t.breakeven_at_median, t.gap_at_median) == (0.0, pytest.approx(-3500.0))
    (bar,) = t.inputs
    assert (bar.low, bar.high) == (1000.0, 1500.0)
    assert (bar.gap_at_low, bar.gap_at_high) == (pytest.approx(2500.0), pytest.approx(-3500.0))
    assert math.isnan(bar.breakeven_at_low) and bar.breakeven_at_high == 0.0
    # Its precision: P(buy cheaper than the server) 0.75 over 400 draws.
    se = rival.convergence.prob_buy_cheaper_se
    assert se == pytest.approx([math.sqrt(0.75 * 0.25 / 400)], rel=1e-12)
    # Against renting (2 USD/h, 8,760 at u = 0.5, cheaper in every draw) nothing to learn.
    assert got.value_of_information.evpi == 0.0
    # By month, each draw its own fee: against the server at 1,500 buying pays back at
    # 15,000 = 500 + 1,500 t, t = 9.6667 months; against the one at 1,000 (12,500 in all)
    # never. The server's cumulative cost at month 12 is 12,500 in a quarter of the draws
    # (its P10) and 18,500 in the rest (its P50).
    payback = got.versus["dedicated"].payback
    assert payback.p50 == pytest.approx([9 + 1000 / 1500], rel=1e-12)
    assert list(payback.prob_never) == [0.25]
    cum = got.cumulative_cost["dedicated"]
    assert (cum.p10[-1], cum.p50[-1]) == pytest.approx((12_500.0, 18_500.0), rel=1e-12)


def _draw_major(d: DedicatedDraws, own: Value, terms: Terms) -> tuple[np.ndarray, np.ndarray]:
    fixed, per_u = _by_month(d, own, terms)
    return fixed.T, per_u  # (S, H + 1): draws first


def test_the_words_weigh_the_inputs_against_it(drawn_fee) -> None:
    """The sentences of the case above, written once (the wording) and printed by the CLI and
    the HTML and Markdown reports: the precision of the break-even against the server, its
    tornado and what knowing the fee would save (625 USD, all of it the fee's, named by its
    field's text)."""
    from cli.tables import print_result
    from present.reports.charts import chart_names
    from present.wording import wording

    voi = (
        "Between buying and the dedicated server at 50 % utilisation, knowing every uncertain "
        "input first would save $625 on average; the dedicated server's fee a month alone is "
        "worth up to $625."
    )
    # Every draw breaks even at 0 or never: the interval of the P50 (0) is 0 to 0.
    precision = "Break-even vs the dedicated server P50 0.0 % ± 0.0 % (95 % interval, 400 draws)."
    words = wording(drawn_fee.result)
    assert words.value_of_information[1] == voi
    assert words.worth_naming == ("dedicated.monthly_fee_usd",)
    assert words.shares[1] == (
        "Buying is cheaper than the dedicated server even when idle in 75 % of draws, and "
        "dearer even at 100 % utilisation in 25 %."
    )
    console = Console(file=io.StringIO(), width=200, color_system=None)
    print_result(drawn_fee, console)
    out = console.file.getvalue()
    assert precision in out and voi in out
    assert "Largest swings against the dedicated server" in out
    assert "Buy − dedicated server at 50 %" in out and "$2,500 → -$3,500" in out
    assert chart_names(drawn_fee.result)[-1] == "tornado_dedicated"
    html = render(drawn_fee, "html").decode()
    assert "<h3>Against the dedicated server</h3>" in html
    assert f'<p id="precision-dedicated">{precision}</p>' in html
    assert 'class="tornado-dedicated"' in html and 'id="value-of-information-dedicated"' in html
    assert 'id="chart-tornado-dedicated-title"' in html  # its tornado chart, inline
    md = render(drawn_fee, "md").decode().replace("\\", "")
    assert "### Against the dedicated server" in md and voi in md
    # The verdict weighs every side: at u = 0.5 renting (8,760) is cheaper than buying
    # (15,000) and the server (12,500 or 18,500) in every draw.
    from present.verdict import verdict

    assert verdict(drawn_fee.result) == (
        "At 50 % utilisation renting is the cheapest option in 100 % of draws (buying 0 %, the "
        "dedicated server 0 %); buying breaks even with renting at 85.6 % and is cheaper than "
        "the dedicated server even when idle in most draws."
    )
    # The key figures and the XLSX summary give the break-even against each side: against
    # renting 15,000 = 17,520 u at u = 0.856 in every draw; against the server 0 in 75 % of
    # the draws (P10 and P50) and never in 25 % (P90).
    from present.reports.tables import key_figures_table, summary_items

    figures = dict(key_figures_table(drawn_fee.result).rows)
    assert figures["Break-even utilisation vs renting P50"] == "85.6 %"
    assert figures["Break-even utilisation vs the dedicated server P50"] == "0 %"
    assert figures["Break-even utilisation vs the dedicated server P90"] == "never"
    # Payback against the server at 1,500 a month: 9.6667 months (P10, P50); never against
    # the one at 1,000 (P90).
    key = "Payback vs the dedicated server at 50 % utilisation P10 / P50 / P90 [months]"
    assert figures[key] == "9.7 / 9.7 / never"
    items = dict(summary_items(drawn_fee))
    assert items["breakeven_vs_dedicated_prob_never"] == 0.25
    assert items["breakeven_vs_dedicated_p90"] is None  # "never"
    # A target missed against the server is a warning that names it.
    from scenarios.advice import convergence_advice

    missed = dataclasses.replace(
        drawn_fee.rival("dedicated").convergence, met=False, target_halfwidth=0.001
    )
    (advice,) = convergence_advice(missed, "dedicated")
    assert advice.message.startswith(
        "the 95 % interval of the break-even P50 against the dedicated server "
    )


@pytest.mark.parametrize(
    ("by_month", "said"),
    [
        pytest.param(
            _draw_major, "fixed of shape (400, 13); it must be (13,) or (13, 400)", id="transposed"
        ),
        pytest.param(
            lambda d, own, terms: (np.zeros(13), np.zeros(12)),
            "per_u of shape (12,); it must be (13,) or (13, 400): months 0..12",
            id="no-month-0",
        ),
        pytest.param(
            lambda d, own, terms: np.zeros(13),
            "by_month gave a ndarray; it must give a pair (fixed, per_u)",
            id="one-array",
        ),
        pytest.param(None, "has no by_month", id="none"),
    ],
)
def test_a_by_month_cost_of_another_shape_is_the_sides_error(by_month, said) -> None:
    # A further side's by-month cost is (fixed, per_u), each (H + 1,) or (H + 1, S): months
    # 0..12 of a 12-month horizon, then one column per draw of the 400 (the fee is drawn).
    broken = dataclasses.replace(DEDICATED, name="broken", by_month=by_month)
    SIDES[broken.name] = broken
    try:
        with pytest.raises(SideError) as exc:
            simulate(_drawn_fee("broken"))
    finally:
        del SIDES[broken.name]
    assert str(exc.value).startswith("side 'broken'")
    assert said in str(exc.value)


@pytest.mark.parametrize("name", ["a_dedicated_server", "Dedicated", "2nd", "dedicated-server", ""])
def test_a_side_name_that_cannot_name_a_sheet_or_key_is_refused(name) -> None:
    # "a_dedicated_server" is 18 characters: "sensitivity_vs_a_dedicated_server" would be 33,
    # over Excel's 31-character sheet names; the others are not lower-case keys.
    with pytest.raises(SideError, match="1 to 16 lower-case letters"):
        register(dataclasses.replace(DEDICATED, name=name))
    assert name not in SIDES


def test_the_longest_side_name_names_every_sheet_within_31_characters() -> None:
    # 16 characters: "sensitivity_vs_" (15) + 16 = 31, the longest sheet name Excel opens;
    # the workbook of the drawn-fee question against it names both sheets in full.
    name = "dedicated_server"
    register(dataclasses.replace(DEDICATED, name=name))
    try:
        with pytest.raises(SideError, match="registered already"):
            register(dataclasses.replace(DEDICATED, name=name))
        answer = Answer(summarise(simulate(_drawn_fee(name))), catalog=CatalogRef("t", "2026"))
        sheets = load_workbook(io.BytesIO(render(answer, "xlsx"))).sheetnames
    finally:
        del SIDES[name]
    assert f"sensitivity_vs_{name}" in sheets and f"tornado_vs_{name}" in sheets
    assert max(len(s) for s in sheets) == 31


def _document(**dedicated: Any) -> dict:
    """A scenario of the lab build against the rented instance and a dedicated server."""
    return {
        "version": 1,
        "name": "with-a-dedicated-server",
        "horizon_months": 12,
        "discount_rate": 0.0,
        "utilisation": [0.5, 1.0],
        "simulation": {"samples": 200, "seed": 1},
        "buy": {"gpu": "rtx-2080-ti", "gpu_count": 4},
        "rent": {"instance": "aws/p3.8xlarge"},
        "dedicated": dedicated,
    }


def test_a_document_with_the_new_side_loads_and_resolves() -> None:
    import scenarios

    doc = scenarios.load_mapping(_document(monthly_fee_usd=1500, setup_usd=500))
    got = scenarios.evaluate(doc)
    # No discounting, no tax: 500 + 12 * 1,500 at every level.
    assert got.versus["dedicated"].tco.p50 == pytest.approx([18_500.0] * 2, rel=1e-12)
    assert got.document["dedicated"] == {"monthly_fee_usd": 1500.0, "setup_usd": 500.0}
    keys = {a.key: a.origin for a in got.assumptions}
    assert keys["dedicated.monthly_fee_usd"] == "given"
    with pytest.raises(scenarios.ScenarioError) as exc:
        scenarios.load_mapping(_document(monthly_fee_usd=1500))
    assert "dedicated.setup_usd" in str(exc.value)
    with pytest.raises(scenarios.ScenarioError) as exc:
        scenarios.load_mapping(_document(monthly_fee_usd=1500, setup_usd=500, colour=1))
    assert "dedicated.colour" in str(exc.value)


def test_its_json_round_trips(result) -> None:
    data = to_dict(result)
    assert data["cost_per_unit"]["unit"] == "image"
    assert list(data["cost_per_unit"]) == ["unit", "buy", "rent", "dedicated"]
    assert data["dedicated_tco"]["p50"] == pytest.approx([18_500.0] * 3)
    assert data["breakeven_vs_dedicated"]["prob_always"] == 1.0
    assert "payback_vs_dedicated_months" in data and "prob_buy_cheaper_than_dedicated" in data
    text = json.dumps(data)
    assert json.dumps(to_dict(from_dict(json.loads(text)))) == text


def test_the_cli_table_shows_it(result) -> None:
    from cli.tables import print_result

    console = Console(file=io.StringIO(), width=200, color_system=None)
    print_result(result, console)
    out = console.file.getvalue()
    assert "Dedicated TCO" in out and "Break-even vs the dedicated server" in out
    assert "dedicated server $0.0352 per image" in out  # 18,500 / 525,600 to 3 figures


def test_the_html_and_xlsx_reports_show_it(result) -> None:
    html = render(result, "html").decode()
    assert "Dedicated" in html and "$/image" in html
    book = load_workbook(io.BytesIO(render(result, "xlsx")))
    sheet = book["per_utilisation"]
    header = [c.value for c in sheet[1]]
    col = header.index("cost_per_image_dedicated_p50") + 1
    cell = sheet.cell(3, col)
    assert cell.value == pytest.approx(18_500 / 525_600) and cell.number_format == "$#,##0.000"
    assert "dedicated_tco_p50" in header and "payback_vs_dedicated_months_p50" in header


def test_the_report_charts_draw_it_in_the_colour_the_page_gives_it(result) -> None:
    """One palette: the reports' charts draw the dedicated server in the colour the page gives
    it (the first further colour, not the grey of an unregistered side, nor the API's purple
    that the second rival's line once took whatever side it was)."""
    from present.reports.charts import breakeven_chart, prob_chart
    from present.reports.colours import API, BUY, FURTHER_COLOURS, MARK, OTHER, side_colours
    from tests import svgread

    own = side_colours()["dedicated"]
    assert own == FURTHER_COLOURS[0] and own not in (OTHER, API)
    (ax,) = svgread.axes(svgread.parse(breakeven_chart(result)))
    assert ax.colour("Dedicated P50") == own
    # Buying is cheaper than the server at every level: its break-even is 0 %, marked in its
    # colour; against renting 15,000 = 17,520 u at u = 0.856, marked in the marks' grey.
    (ax,) = svgread.axes(svgread.parse(prob_chart(result)))
    assert ax.colour("P(buy cheaper than renting)") == BUY
    assert ax.colour("P(buy cheaper than the dedicated server)") == own
    assert ax.colour("Break-even vs the dedicated server P50 (0 %)") == own
    assert ax.colour("Break-even vs renting P50 (85.6 %)") == MARK


def test_the_openapi_document_names_it() -> None:
    from api import create_app

    spec = create_app({"TESTING": True}).test_client().get("/openapi.json").get_json()
    schemas = spec["components"]["schemas"]
    for name in ("UnitCost", "Cumulative", "Cheapest", "Carbon", "CarbonPerUnit"):
        assert "dedicated" in schemas[name]["properties"], name
    assert "image" in schemas["UnitCost"]["properties"]["unit"]["enum"]
    assert schemas["Rival"]["properties"]["versus"]["enum"] == ["api", "dedicated"]


def test_the_structure_page_names_the_files_this_test_stands_for() -> None:
    """docs/structure.md says a new side is a module of costmodel/sides registered in its
    __init__, and a new unit a record registered in costmodel/units.py: the registries this
    test fills are there."""
    from pathlib import Path

    import costmodel.sides
    import costmodel.units

    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "structure.md").read_text()
    where = page.split("## Where to add things", 1)[1]
    for name in ("costmodel/sides/", "costmodel/sides/__init__.py", "costmodel/units.py"):
        assert f"`{name}`" in where, name
    assert Path(costmodel.sides.__file__) == root / "costmodel" / "sides" / "__init__.py"
    assert Path(costmodel.units.__file__) == root / "costmodel" / "units.py"
    assert costmodel.sides.SIDES is SIDES and costmodel.units.UNITS is UNITS


def _rgb(hex_colour: str) -> str:
    """``#rrggbb`` as the browser computes it: ``rgb(r, g, b)``."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


#: What the page computes of a selector's first element: is it shown, its fill, its stroke
#: and its background colour.
_LOOK = (
    "const n = document.querySelector(arguments[0]); if (!n) return null;"
    "const s = getComputedStyle(n);"
    "return {shown: n.getClientRects().length > 0, fill: s.fill, stroke: s.stroke,"
    " background: s.backgroundColor, dash: s.strokeDasharray,"
    " gradient: s.backgroundImage, text: n.closest('li') && n.closest('li').textContent};"
)


def test_the_page_draws_it_in_a_colour_of_its_own(driver, tmp_path) -> None:
    """The web page, served with the side registered, draws a scenario with a dedicated server
    as a fourth side: its legend entries in the break-even and payback charts, its band and
    line and its dotted break-even line, each in a colour of its own (the first of the page's
    further colours, none of the other sides'), and the engine's tornado against it, coloured
    likewise."""
    import yaml

    from present.reports.colours import FURTHER_COLOURS, side_colours
    from tests.test_web_browser import Page, Server

    colours = side_colours()
    own = colours["dedicated"]
    assert own == FURTHER_COLOURS[0]
    assert own not in {colours[s] for s in ("buy", "rent", "api")}
    with Server(tmp_path) as server:
        page = Page(driver, server)
        before = page.sent("scenario")
        doc = _document(monthly_fee_usd=1500, setup_usd=500)
        # an uncertain GPU price: a higher one makes buying dearer (a bar of the rival's colour)
        doc["buy"]["gpu_price_usd"] = {"dist": "triangular", "low": 900, "mode": 1000, "high": 1300}
        page.js(
            "const t = arguments[0]; t.value = arguments[1];"
            "t.dispatchEvent(new Event('input', {bubbles: true}));",
            page.by_id("scenario-yaml"),
            yaml.safe_dump(doc, sort_keys=False),
        )
        page.wait(lambda: page.sent("scenario") > before, "the document to be sent")
        assert page.settled() == "idle"
        page.charts_drawn()
        look = lambda selector: page.js(_LOOK, selector)  # noqa: E731
        for chart, mark in (
            ("#scenario-chart", "Break-even with"),
            ("#scenario-payback", "Payback against"),
        ):
            legend = f"{chart} + ul.legend"
            swatch = look(f'{legend} li[data-side="dedicated"] .swatch.dedicated')
            assert swatch["shown"] and swatch["background"] == _rgb(own), chart
            assert swatch["text"] == "Dedicated: P50 line, P10–P90 band"
            dotted = look(f'{legend} li[data-side="dedicated"] .swatch.be-dedicated')
            assert dotted["shown"] and _rgb(own) in dotted["gradient"], chart
            assert dotted["text"] == f"{mark} the dedicated server P50 (dotted)"
            assert look(f'{legend} li[data-side="api"]')["shown"] is False  # no API here
            assert look(f"{chart} polygon.band.dedicated")["fill"] == _rgb(own)
            assert look(f"{chart} polyline.line.dedicated")["stroke"] == _rgb(own)
            assert look(f"{chart} polyline.line.buy")["stroke"] == _rgb(colours["buy"])
        # The payback against the dedicated server (break-even: 0, left of the levels drawn):
        # dotted, in its colour.
        line = look("#scenario-payback line.be-line.dedicated")
        assert line["stroke"] == _rgb(own) and line["dash"] == "2px, 3px"

        # The engine weighs the uncertain inputs against the dedicated server as against
        # renting: the page draws its tornado in the figure of that side, the bar of the GPU
        # price (a higher one makes buying dearer) in its colour.
        figure = '[data-role="tornado-dedicated"]'
        assert look(f"{figure} .swatch.dedicated")["background"] == _rgb(own)
        assert look(f"{figure} .tornado-bar.dearer.dedicated")["fill"] == _rgb(own)
        assert "against the dedicated server" in page.text("scenario-tornado-dedicated-title")
        assert page.errors() == []
