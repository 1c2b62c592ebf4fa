"""``costmodel catalog models`` and ``catalog api-offers``: the served models and the hosted API
offers, as tables, JSON equal to the HTTP API's answers, and CSV."""

from __future__ import annotations

import csv
import io
import json

import pytest

from cli import main
from pricing import load_catalog
from tests.test_api import make_app


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    return make_app(tmp_path_factory.mktemp("api")).test_client()


def _json(capsys, *args: str) -> dict:
    assert main(["catalog", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("table", "path"), [("models", "models"), ("api-offers", "api-offers")])
def test_json_is_the_http_apis_answer(capsys, api, table, path):
    doc = _json(capsys, table)
    answer = api.get(f"/v1/catalog/{path}").get_json()
    assert (doc["version"], doc["as_of"], doc["table"]) == (
        answer["version"],
        answer["as_of"],
        table,
    )
    assert doc["items"] == answer["items"]


def test_models_table_lists_every_model_with_its_shape(capsys):
    assert main(["catalog", "models"]) == 0
    out = capsys.readouterr().out
    cat = load_catalog()
    assert all(m in out for m in cat.models)
    assert f"{len(cat.models)} models" in out
    assert "576 (MLA)" in out  # DeepSeek's compressed attention
    assert "116.83" in out and "5.13" in out  # gpt-oss-120b, total and active


def test_api_offers_keep_a_provider_and_a_model(capsys):
    offers = _json(capsys, "api-offers", "--model", "Llama-4-Scout")["items"]
    assert offers and {o["model"] for o in offers} == {"llama-4-scout"}
    assert {o["id"] for o in offers} >= {"groq/llama-4-scout-17b-16e-instruct"}
    both = _json(capsys, "api-offers", "--provider", "Groq", "--model", "llama-4-scout")["items"]
    assert [o["id"] for o in both] == ["groq/llama-4-scout-17b-16e-instruct"]
    assert (both[0]["input_usd_per_mtok"], both[0]["output_usd_per_mtok"]) == (0.11, 0.34)
    assert main(["catalog", "api-offers", "--provider", "groq"]) == 0
    out = capsys.readouterr().out
    total = len(load_catalog().api_offers)
    assert "groq/gpt-oss-120b" in out and f"of {total} API offers" in out
    assert "together/" not in out


def test_csv_has_the_data_files_columns(capsys):
    assert main(["catalog", "models", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    llama = next(r for r in rows if r["id"] == "llama-3.3-70b")
    assert (llama["params_b"], llama["layers"], llama["precisions"]) == ("70.56", "80", "fp8;fp4")
    assert llama["kv_dim_per_layer"] == "" and "measured_on" not in llama
    assert main(["catalog", "api-offers", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == len(load_catalog().api_offers)
    fireworks = next(r for r in rows if r["id"] == "fireworks/llama-v3p1-8b-instruct")
    assert fireworks["estimated_fields"] == "as_of"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["models", "--provider", "groq"], "--provider and --model keep API offers"),
        (["models", "--model", "qwen3-8b"], "--provider and --model keep API offers"),
        (["api-offers", "--tier", "neocloud"], "--tier keeps instances"),
        (["api-offers", "--model", "llama-5"], "--model: unknown model id 'llama-5'; closest"),
        (["api-offers", "--model", "llama-5"], "; see 'costmodel catalog models'"),
        (["api-offers", "--provider", "grok"], "unknown provider 'grok'; valid: anthropic"),
        (["gpus", "--model", "qwen3-8b"], "--model keeps the offers of one model"),
    ],
)
def test_options_that_do_not_apply_are_refused(capsys, args, says):
    assert main(["catalog", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and says in captured.err
