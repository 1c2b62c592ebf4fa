"""Results in a notebook: IPython shows a scenario's and a plan's result as HTML (verdict, key
figures, a small table), every text escaped, registered when ``present`` is imported
inside IPython; and a plan's candidates as a DataFrame."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from functools import cache
from html.parser import HTMLParser

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

import scenarios
from costmodel.plan_result import PlanResult
from costmodel.result import Advice, Result
from present import notebook
from present.formatting import fmt_share, fmt_usd, fmt_utilisation

HOSTILE = "<script>alert(1)</script> & <b>bold</b> 'quoted' \"double\""


@cache
def _scenario() -> Result:
    return scenarios.evaluate(scenarios.example("lab-4x-rtx2080ti-vs-p3-8xlarge"), samples=500)


@cache
def _plan() -> PlanResult:
    return scenarios.evaluate(scenarios.example("plan-lab-rtx4090-growth"), samples=200)


@pytest.fixture
def shell(tmp_path, monkeypatch):
    """A real IPython shell, without history, its profile in a temporary folder."""
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    config = Config()
    config.HistoryManager.enabled = False
    ip = InteractiveShell.instance(config=config)
    yield ip
    InteractiveShell.clear_instance()


class _Page(HTMLParser):
    """The tables (rows of cell texts), the tags, the text and the tinted rows of a page."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self.tags: list[str] = []
        self.text: list[str] = []
        self.tinted: list[list[str]] = []
        self._cell: list[str] | None = None
        self._tint = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
            self._tint = "background" in (dict(attrs).get("style") or "")
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append("".join(self._cell or []))
            self._cell = None
        elif tag == "tr" and self._tint:
            self.tinted.append(self.tables[-1][-1])

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _shown(shell: InteractiveShell, result: object) -> _Page:
    """What IPython displays for ``result`` as HTML, parsed."""
    data, _ = shell.display_formatter.format(result)
    return _Page(data["text/html"])


def test_a_scenario_result_shows_its_verdict_key_figures_and_levels(shell):
    assert notebook.register(shell) is True
    result = _scenario()
    page = _shown(shell, result)
    text = "".join(page.text)
    assert f"Rent or buy: {result.name}" in text
    assert result.verdict in text
    figures, levels = page.tables
    be = result.breakeven_utilisation
    assert dict(figures[1:])["Break-even utilisation P50"] == fmt_utilisation(be.p50)
    assert levels[0] == [
        "Utilisation",
        "Buy TCO P50",
        "Rent TCO P50",
        "P(buy cheaper)",
        "Payback P50 [months]",
    ]
    # 20 levels, thinned to 7: the first and the last, the report utilisation (50 %) and 4
    # evenly spaced between (indices round(19 k / 5): 4, 8, 11, 15)
    shown = [0, 4, 8, 9, 11, 15, 19]
    assert len(result.utilisation) == 20 and result.utilisation[9] == 0.5
    assert [row[0] for row in levels[1:]] == [fmt_utilisation(result.utilisation[i]) for i in shown]
    assert [row[1] for row in levels[1:]] == [fmt_usd(result.buy_tco.p50[i]) for i in shown]
    assert [row[3] for row in levels[1:]] == [fmt_share(result.prob_buy_cheaper[i]) for i in shown]
    # the levels where buying is cheaper in at least half of the draws are tinted
    wins = [
        row for row, i in zip(levels[1:], shown, strict=True) if result.prob_buy_cheaper[i] >= 0.5
    ]
    assert page.tinted == wins and wins
    assert "7 of 20 utilisation levels" in text
    assert f"seed {result.seed}, 500 samples" in text


@cache
def _inference() -> Result:
    return scenarios.evaluate(scenarios.example("inference-70b-fp8-h100"), samples=500)


def test_an_inference_result_shows_the_api_beside_buying_and_renting(shell):
    notebook.register(shell)
    result = _inference()
    page = _shown(shell, result)
    assert f"Buy, rent or API: {result.name}" in "".join(page.text)
    figures, levels = page.tables
    assert dict(figures[1:])["Break-even utilisation vs the API P50"] == fmt_utilisation(
        result.breakeven_vs_api.p50
    )
    assert levels[0] == [
        "Utilisation",
        "Buy TCO P50",
        "Rent TCO P50",
        "API TCO P50",
        "P(buy cheaper than rent)",
        "P(buy cheaper than API)",
        "Cheapest (share of draws)",
    ]
    shown = [0, 4, 8, 9, 11, 15, 19]  # as for any 20 levels reported at 50 %
    assert [row[3] for row in levels[1:]] == [fmt_usd(result.api_tco.p50[i]) for i in shown]
    api = result.prob_buy_cheaper_than_api
    assert [row[5] for row in levels[1:]] == [fmt_share(api[i]) for i in shown]
    # tinted: the levels where buying is the cheapest of the three in at least half the draws
    wins = [
        r for r, i in zip(levels[1:], shown, strict=True) if result.cheapest_share["buy"][i] >= 0.5
    ]
    assert page.tinted == wins and wins
    assert all(row[6].startswith("buy ") for row in wins)


def test_a_plan_result_shows_the_best_plan_and_the_frontier(shell):
    notebook.register(shell)
    plan = _plan()
    page = _shown(shell, plan)
    text = "".join(page.text)
    assert f"GPU fleet plan: {plan.name}" in text and plan.verdict in text
    best, marked = page.tables
    figures = dict(best[1:])
    assert figures["Servers owned"] == str(plan.best.servers)
    assert figures["Cost mean"] == fmt_usd(plan.best.cost.mean)
    # the small table: all-cloud, the frontier and the best, not every candidate
    assert marked[0][:3] == ["Servers", "Reserved", "Cost mean"]
    rows = {(int(r[0]), int(r[1])): r for r in marked[1:]}
    expected = {(c.servers, c.instances) for c in plan.frontier} | {(0, 0)}
    assert set(rows) == expected and len(plan.candidates) > len(rows)
    key = (plan.best.servers, plan.best.instances)
    assert rows[key][-1].startswith("best") and page.tinted == [rows[key]]
    assert rows[key][3] == fmt_usd(plan.best.cost.p90)
    warnings = [w.message for w in plan.warnings]
    assert warnings and all(m in text for m in warnings)


def test_every_text_is_escaped(shell):
    notebook.register(shell)
    hostile = {**_scenario().document, "name": HOSTILE}
    advice = (Advice(code=HOSTILE, severity=HOSTILE, message=HOSTILE),)
    result = dataclasses.replace(_scenario(), document=hostile, verdict=HOSTILE, warnings=advice)
    plan = dataclasses.replace(_plan(), document=hostile, verdict=HOSTILE, warnings=advice)
    for shown in (result, plan):
        page = _shown(shell, shown)
        assert not {"script", "b"} & set(page.tags)
        # name, verdict, the warning's severity and message: shown as written
        assert "".join(page.text).count(HOSTILE) == 4


def test_a_few_levels_are_all_shown():
    result = scenarios.evaluate(scenarios.example("worked-example"))
    levels = _Page(notebook.html(result)).tables[1]
    assert [row[0] for row in levels[1:]] == ["0 %", "25 %", "50 %", "100 %"]


def test_a_result_without_a_verdict_gets_one():
    # the engine alone (costmodel.summarise) leaves the sentence to the presentation
    result = dataclasses.replace(_scenario(), verdict="")
    assert _scenario().verdict in "".join(_Page(notebook.html(result)).text)


def test_register_needs_a_running_ipython(monkeypatch):
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert notebook.register() is False


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    return done.stdout


def test_importing_scenarios_inside_ipython_registers_the_display(tmp_path):
    # as in a notebook: the kernel's IPython runs first, then the user imports scenarios
    out = _run(
        f"""
import os
os.environ["IPYTHONDIR"] = {str(tmp_path)!r}
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.history_manager.enabled = False
import scenarios
result = scenarios.evaluate(scenarios.example("worked-example"))
data, _ = shell.display_formatter.format(result)
print(result.verdict in data.get("text/html", ""))
"""
    )
    assert out.split() == ["True"]


def test_outside_ipython_neither_ipython_nor_the_notebook_module_is_imported():
    out = _run(
        "import sys, scenarios\nprint(*(m in sys.modules for m in ('IPython', 'present.notebook')))"
    )
    assert out.split() == ["False", "False"]


def test_the_extension_registers_the_display(shell):
    shell.display_formatter.formatters["text/html"].pop(Result, None)
    shell.extension_manager.load_extension("present.notebook")
    data, _ = shell.display_formatter.format(_scenario())
    assert _scenario().verdict in data["text/html"]


# --- PlanResult.to_frame -------------------------------------------------------------------


def test_a_plan_to_frame_has_one_row_per_candidate():
    plan = _plan()
    frame = plan.to_frame()
    assert list(frame.columns) == [
        "servers",
        "instances",
        "cost_mean",
        "cost_p10",
        "cost_p50",
        "cost_p90",
        "cost_cvar95",
        "share_owned",
        "owned_utilisation",
        "prob_cheaper_than_cloud",
    ]
    assert len(frame) == len(plan.candidates)
    for row, c in zip(frame.itertuples(index=False), plan.candidates, strict=True):
        assert (row.servers, row.instances) == (c.servers, c.instances)
        assert (row.cost_mean, row.cost_p90, row.cost_cvar95) == (
            c.cost.mean,
            c.cost.p90,
            c.cost.cvar95,
        )
        assert (row.share_owned, row.prob_cheaper_than_cloud) == (
            c.share_owned,
            c.prob_cheaper_than_cloud,
        )
    assert str(frame["servers"].dtype) == "int64" and str(frame["cost_p50"].dtype) == "float64"
    best = frame.loc[frame["cost_mean"].idxmin()]  # the plan chose by mean cost
    assert plan.objective == "mean"
    assert (best["servers"], best["instances"]) == (plan.best.servers, plan.best.instances)


def test_to_frame_imports_pandas_only_when_called():
    out = _run(
        "import sys, scenarios\n"
        "plan = scenarios.evaluate(scenarios.example('plan-worked-example'))\n"
        "print('pandas' in sys.modules)\n"
        "plan.to_frame()\n"
        "print('pandas' in sys.modules)"
    )
    assert out.split() == ["False", "True"]
