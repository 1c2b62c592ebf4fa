"""Every sentence of a scenario's result is written once (present.wording) and served: the CLI,
the reports and the JSON the page receives all carry the same text, and no other module of
the packages, nor the page's script, writes it again."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from markupsafe import escape
from rich.console import Console

import scenarios
from cli.tables import print_result
from present import from_dict, to_dict
from present.formatting import fmt_candidate
from present.reports import render
from present.reports.uncertainty import NOISE
from present.wording import PAYBACK_NOTE, wording, words_of
from pricing.text import counted
from tests.test_api import make_app

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "api" / "web" / "static" / "js" / "views" / "scenario.js"
#: An example with every sentence: both rivals, the payback note, inputs worth naming.
EXAMPLE = "inference-70b-fp8-h100"
#: An example of one GPU against a one-GPU instance.
ONE_GPU = "beginner-1x-rtx2080ti-vs-p3-2xlarge"


@pytest.fixture(scope="module")
def answer():
    return scenarios.evaluate(scenarios.example(EXAMPLE), samples=1000)


def _sentences(answer) -> list[str]:
    w = answer.wording
    return [*w.shares, w.cost, w.payback_note, *w.value_of_information]


def test_the_example_has_every_sentence(answer):
    w = answer.wording
    assert len(w.shares) == 2 and len(w.value_of_information) == 2
    assert w.payback_note == PAYBACK_NOTE and w.cost.startswith("Cost at 50 % utilisation (P50)")
    assert w.worth_naming and w.worth_naming[0] == max(
        (v for voi in (answer.value_of_information, answer.rival("api").value_of_information)
         for v in voi.by_input), key=lambda v: v.evppi,
    ).input  # fmt: skip
    be = answer.breakeven_vs_api  # the shares sentence reads the break-even's own figures
    always, never = (f"{round(100 * p)} %" for p in (be.prob_always, be.prob_never))
    assert w.shares[1] == (
        f"Buying is cheaper than the API even when idle in {always} of draws, and dearer even "
        f"at 100 % utilisation in {never}."
    )


def test_each_sentence_is_in_the_cli_the_reports_and_the_served_json(answer, tmp_path):
    out = io.StringIO()
    print_result(answer, Console(file=out, width=100_000, color_system=None))
    cli = out.getvalue()
    html = render(answer, "html").decode("utf-8")
    md = render(answer, "md").decode("utf-8").replace("\\", "")
    client = make_app(tmp_path).test_client()
    document = yaml.safe_load(scenarios.example(EXAMPLE).read_text("utf-8"))
    served = client.post("/v1/evaluate?samples=1000", json=document).get_json()["wording"]
    assert served == to_dict(answer)["wording"]
    for text in _sentences(answer):
        assert text in cli, text
        assert str(escape(text)) in html, text
        assert text in md, text
    assert [*served["shares"], served["cost"], served["payback_note"]] == _sentences(answer)[:4]


def test_a_result_stored_before_its_sentences_gets_them_written_and_writes_back_unchanged(
    answer,
):
    stored = {k: v for k, v in to_dict(answer).items() if k != "wording"}
    loaded = from_dict(stored)
    assert loaded.wording is None and to_dict(loaded) == stored
    assert words_of(loaded) == wording(answer.result) == answer.wording


@pytest.mark.parametrize(
    "pattern",
    [
        r"even at 100 % utilisation in",
        r"Payback counts no resale",
        r"Cost at .{0,40}utilisation \(P50\)",
    ],
)
def test_no_other_module_writes_a_sentence_of_the_wording(pattern):
    writers = [
        str(path.relative_to(ROOT))
        for package in ("present", "scenarios", "api", "cli")
        for path in (ROOT / package).rglob("*.py")
        if re.search(pattern, path.read_text("utf-8"))
    ]
    assert writers == ["present/wording.py"]
    assert not re.search(pattern, PAGE.read_text("utf-8"))


def test_the_page_prints_the_served_sentences_and_keeps_no_floor_of_its_own():
    script = PAGE.read_text("utf-8")
    for key in ("shares", "cost", "payback_note", "value_of_information", "worth_naming"):
        assert f"wording.{key}" in script, key
    assert NOISE == 0.01 and "0.01" not in script and "prob_always" not in script


def test_a_count_takes_its_noun_in_the_singular_or_the_plural():
    assert [counted(n, "server") for n in (0, 1, 2, 1200)] == [
        "0 servers",
        "1 server",
        "2 servers",
        "1,200 servers",
    ]
    assert counted(1, "quote", every=True) == "the only quote"
    assert counted(2, "region", every=True) == "both regions"  # not "all 2 regions"
    assert counted(3, "region", every=True) == "all 3 regions"


def test_one_server_and_one_gpu_read_in_the_singular():
    # the plan's chart and report label, and a one-GPU build's scaling assumption, read
    # "1 servers, 0 reserved" and "pcie scaling, 1 GPUs"
    one = SimpleNamespace(servers=1, instances=0, add=None)
    assert fmt_candidate(one) == "1 server, 0 reserved"
    later = SimpleNamespace(
        servers=3, instances=1, add=SimpleNamespace(servers=2, when_demand_above=0.9, at_month=None)
    )
    assert fmt_candidate(later) == "3 + 2 servers at 90 %, 1 reserved"
    text = json.dumps(to_dict(scenarios.evaluate(scenarios.example(ONE_GPU), samples=200)))
    assert "scaling, 1 GPU" in text
    assert not re.search(r"\b1 (servers|GPUs|instances|draws|options)\b", text)
