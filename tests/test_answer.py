"""The engine's results hold numbers only; the answer carries them with their words."""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle
from pathlib import Path

import pytest
import yaml

import scenarios
from costmodel.plan_result import PlanResult
from costmodel.result import Result
from costmodel.sides import SIDES
from present import Answer, from_dict, to_dict
from present.schema import ResultSchema, prebuilt

EXAMPLES = Path(scenarios.__file__).parent / "examples"
PLAN = yaml.safe_load((EXAMPLES / "plan-worked-example.yaml").read_text("utf-8"))
WORDS = ("verdict", "scenario", "document", "warning", "assumption", "catalog")


@pytest.mark.parametrize("kind", [Result, PlanResult])
def test_the_engines_results_hold_no_words(kind):
    """No verdict, document, catalog, warning or assumption among the engine's fields: the
    scenario layer puts them beside the result, in its answer."""
    names = [f.name for f in dataclasses.fields(kind)]
    assert not [n for n in names if any(word in n for word in WORDS)], names
    assert {"verdict", "document", "catalog", "warnings", "assumptions"} <= {
        f.name for f in dataclasses.fields(Answer)
    }


def test_an_answer_reads_its_results_figures_and_survives_a_pickle():
    answer = scenarios.evaluate(scenarios.example("worked-example"), samples=200)
    assert isinstance(answer, Answer) and isinstance(answer.result, Result)
    assert answer.breakeven_utilisation is answer.result.breakeven_utilisation
    assert answer.name == answer.document["name"] and not answer.is_plan
    assert "breakeven_utilisation" in dir(answer)
    with pytest.raises(AttributeError, match="no_such_figure"):
        answer.no_such_figure  # noqa: B018
    again = pickle.loads(pickle.dumps(answer))  # batch workers send answers back so
    assert to_dict(again) == to_dict(answer)


def test_answers_are_written_by_one_schema_per_set_of_sides(monkeypatch):
    """The JSON form is written by a schema built once (not some 40 schemas a result), the
    same JSON a fresh schema writes; a side registered later gets a schema with its key."""
    answer = scenarios.evaluate(scenarios.example("worked-example"), samples=200)
    first = prebuilt(ResultSchema)
    assert prebuilt(ResultSchema) is first
    assert to_dict(answer) == ResultSchema().dump(answer) == to_dict(answer)
    monkeypatch.setitem(SIDES, "dedicated", SIDES["rent"])
    again = prebuilt(ResultSchema)
    assert again is not first and prebuilt(ResultSchema) is again
    assert "dedicated" in again.fields["cost_per_unit"].schema.fields
    assert "dedicated" not in first.fields["cost_per_unit"].schema.fields


def test_a_plans_saving_is_a_figure_of_its_result_and_of_its_json():
    answer = scenarios.evaluate(PLAN)
    # the worked example's inputs are fixed, so every draw's saving is the same: by hand,
    # 1 - 49819.9289 / 308793.8920 = 1 - 0.161337 = 0.838663 (the table of the plan's guide)
    assert answer.result.saving == pytest.approx(1 - 49819.9289 / 308793.8920, rel=1e-6)
    assert to_dict(answer)["saving"] == answer.result.saving
    assert "P50 saving 84 % against all-cloud" in answer.verdict  # the sentence reads the field
    assert from_dict(to_dict(answer)).result.saving == answer.result.saving


def test_a_plan_stored_before_its_saving_loads_and_writes_back_without_it():
    data = to_dict(scenarios.evaluate(PLAN))
    old = {k: v for k, v in data.items() if k != "saving"}
    loaded = from_dict(old)
    assert loaded.result.saving is None and to_dict(loaded) == old
    assert loaded.verdict == data["verdict"]  # the stored sentence, not written again


def test_a_plan_without_work_in_some_draw_has_no_saving_and_writes_null():
    doc = copy.deepcopy(PLAN)
    doc["demand"]["reference_gpu_hours_per_month"] = 0
    doc["demand"]["annual_growth"] = 0
    answer = scenarios.evaluate(doc)
    assert math.isnan(answer.result.saving)
    assert to_dict(answer)["saving"] is None
    assert math.isnan(from_dict(to_dict(answer)).result.saving)


def test_an_engine_result_alone_is_shown_as_an_answer_without_words():
    answer = scenarios.evaluate(scenarios.example("worked-example"), samples=200)
    alone = to_dict(answer.result)
    assert alone["verdict"] == "" and alone["scenario"] == {} and alone["catalog"] is None
    assert alone["warnings"] == alone["assumptions"] == []
    words = {"verdict", "warnings", "assumptions", "scenario", "catalog"}
    full = to_dict(answer)
    assert set(full) - set(alone) == {"wording"}  # the sentences beside the verdict
    assert all(alone[k] == full[k] for k in set(alone) - words)


@pytest.mark.parametrize("name", ["inference-70b-fp8-h100", "plan-staged-growth"])
def test_an_answer_at_the_prompt_shows_its_headline_numbers_in_a_few_hundred_characters(name):
    # the dataclass repr printed every band of every level: 29,347 characters for a scenario
    answer = scenarios.evaluate(scenarios.example(name), samples=200)
    shown, engine = repr(answer), repr(answer.result)
    assert len(shown) < 700 and len(engine) < 400, (len(shown), len(engine))
    assert answer.verdict in shown and engine in shown
    r = answer.result
    if isinstance(r, Result):
        assert f"P50 {r.breakeven_utilisation.p50:.3g}" in engine and "200 draws" in engine
    else:
        assert (
            f"mean {r.best.cost.mean:,.0f} USD" in engine and f"servers {r.best.servers}" in engine
        )
