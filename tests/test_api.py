"""The HTTP API through Flask's test client: every endpoint, every error status, the worked
example of docs/model.md, limits, API keys, the result cache and concurrent writers."""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient

import api.service
from api import create_app
from pricing import load_catalog
from tests import backends
from tests.helpers import KEY_PATH_CASES

EXAMPLES = Path(__file__).resolve().parents[1] / "scenarios" / "examples"
WORKED = yaml.safe_load((EXAMPLES / "worked-example.yaml").read_text(encoding="utf-8"))
ERROR_KEYS = {"code", "status", "message", "errors"}

# The worked example (docs/model.md), USD at present value, u = 0, 0.25, 0.5, 1.
TCO_BUY = [7996.3813, 8757.2999, 9518.2185, 11040.0558]
TCO_RENT = [640.8666, 27151.5548, 53662.2429, 106683.6192]
BREAKEVEN = 0.0714134
PAYBACK = {1: 7.14496, 2: 3.28996}  # [month] at u = 0.25 and 0.5
REL = 1e-6


def make_app(tmp_path: Path, **config: Any) -> Flask:
    settings = {
        "TESTING": True,
        "DB": str(tmp_path / "runs.sqlite3"),
        "API_KEYS": "",
    }
    settings.update(config)
    return create_app(settings)


@pytest.fixture
def app(tmp_path: Path) -> Flask:
    return make_app(tmp_path)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def close_store(app: Flask) -> None:
    """Stop the app's job runner, and close its run store if a request opened it (PostgreSQL:
    its pool)."""
    app.extensions["costmodel"]["jobs"].close()
    store = app.extensions["costmodel"]["store"]
    if store is not None:
        store.close()


def scenario(**changes: Any) -> dict[str, Any]:
    """A deep copy of the worked example with top-level changes."""
    data = copy.deepcopy(WORKED)
    data.update(changes)
    return data


def assert_error(response: Any, code: int) -> dict[str, Any]:
    """The response is ``code`` in the one error shape, without a traceback."""
    assert response.status_code == code, response.get_data(as_text=True)
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert ERROR_KEYS <= set(body) <= ERROR_KEYS | {"error_id"}
    assert body["code"] == code
    assert isinstance(body["status"], str) and body["status"]
    assert isinstance(body["message"], str) and body["message"]
    assert all(set(e) == {"path", "message"} for e in body["errors"])
    assert "Traceback" not in response.get_data(as_text=True)
    return body


def paths(body: dict[str, Any]) -> set[str]:
    return {e["path"] for e in body["errors"]}


# --------------------------------------------------------------------------- worked example


def check_worked_example(result: dict[str, Any]) -> None:
    assert result["utilisation"] == [0.0, 0.25, 0.5, 1.0]
    for stat in ("mean", "p10", "p50", "p90"):
        assert result["buy_tco"][stat] == pytest.approx(TCO_BUY, rel=REL)
        assert result["rent_tco"][stat] == pytest.approx(TCO_RENT, rel=REL)
    be = result["breakeven_utilisation"]
    assert [be[k] for k in ("mean", "p10", "p50", "p90")] == pytest.approx([BREAKEVEN] * 4, rel=REL)
    assert be["prob_always"] == 0.0 and be["prob_never"] == 0.0
    for j, months in PAYBACK.items():
        assert result["payback_months"]["p50"][j] == pytest.approx(months, rel=REL)
    assert result["payback_months"]["p50"][0] is None  # idle: never pays back
    assert result["prob_buy_cheaper"] == [0.0, 1.0, 1.0, 1.0]


def test_evaluate_reproduces_the_worked_example(client: FlaskClient) -> None:
    response = client.post("/v1/evaluate", json=WORKED)
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    result = response.get_json()
    check_worked_example(result)
    assert result["schema_version"] == 1
    assert result["seed"] == 1 and result["samples"] == 1 and result["method"] == "random"
    assert result["scenario"]["name"] == WORKED["name"]
    assert set(result["catalog"]) == {"version", "as_of"}


def test_evaluate_query_overrides_samples_and_seed(client: FlaskClient) -> None:
    result = client.post("/v1/evaluate?samples=3&seed=7", json=WORKED).get_json()
    assert result["samples"] == 3 and result["seed"] == 7
    assert result["scenario"]["simulation"]["samples"] == 3
    check_worked_example(result)  # every input fixed: any draw count gives the same numbers


def test_evaluate_body_only_uses_the_simulation_block(client: FlaskClient) -> None:
    body = scenario(simulation={"samples": 5, "seed": 11, "method": "lhs"})
    result = client.post("/v1/evaluate", json=body).get_json()
    assert (result["samples"], result["seed"], result["method"]) == (5, 11, "lhs")


def test_evaluate_accepts_a_json_content_type_with_charset(client: FlaskClient) -> None:
    response = client.post(
        "/v1/evaluate",
        data=json.dumps(WORKED),
        content_type="application/json; charset=utf-8",
    )
    assert response.status_code == 200


# --------------------------------------------------------------------------- runs


def test_create_run_stores_and_returns_it(store_client: FlaskClient, store_location: str) -> None:
    client = store_client
    response = client.post("/v1/runs?seed=9", json=WORKED)
    assert response.status_code == 201
    run = response.get_json()
    assert response.headers["Location"] == f"/v1/runs/{run['id']}"
    assert len(run["id"]) >= 22  # 128 random bits, URL-safe
    check_worked_example(run["result"])
    assert run["seed"] == 9 and run["samples"] == 1
    assert run["scenario"]["simulation"]["seed"] == 9
    assert run["scenario"]["buy"]["gpu_count"] == 2  # the resolved scenario
    assert run["catalog_version"] == run["result"]["catalog"]["version"]
    assert run["created_at"] and run["updated_at"]
    assert run["links"] == {
        "self": f"/v1/runs/{run['id']}",
        "report": f"/v1/runs/{run['id']}/report",
    }

    fetched = client.get(response.headers["Location"])
    assert fetched.status_code == 200
    assert fetched.get_json() == run
    assert backends.query(store_location, "SELECT COUNT(*) FROM runs") == [(1,)]


def test_every_post_stores_a_new_run(store_client: FlaskClient) -> None:
    client = store_client
    ids = {client.post("/v1/runs", json=WORKED).get_json()["id"] for _ in range(3)}
    assert len(ids) == 3
    assert client.get("/v1/runs").get_json()["total"] == 3


def test_list_runs_is_paged_newest_first(store_client: FlaskClient) -> None:
    client = store_client
    created = [
        client.post("/v1/runs", json=scenario(name=f"run-{i}")).get_json()["id"] for i in range(5)
    ]
    page1 = client.get("/v1/runs?page=1&page_size=2").get_json()
    assert page1["total"] == 5 and page1["pages"] == 3
    assert page1["page"] == 1 and page1["page_size"] == 2
    assert [r["id"] for r in page1["items"]] == created[::-1][:2]
    page3 = client.get("/v1/runs?page=3&page_size=2").get_json()
    assert [r["id"] for r in page3["items"]] == [created[0]]
    assert client.get("/v1/runs?page=9&page_size=2").get_json()["items"] == []
    item = page1["items"][0]
    assert item["name"] == "run-4"
    assert item["breakeven_p50"] == pytest.approx(BREAKEVEN, rel=REL)
    assert item["links"]["self"] == f"/v1/runs/{item['id']}"
    assert "result" not in item
    default = client.get("/v1/runs").get_json()
    assert default["page"] == 1 and default["page_size"] == 20 and len(default["items"]) == 5


def test_list_runs_bad_paging_is_400(client: FlaskClient) -> None:
    body = assert_error(client.get("/v1/runs?page=0"), 400)
    assert paths(body) == {"query.page"}
    body = assert_error(client.get("/v1/runs?page_size=101"), 400)
    assert "COSTMODEL_MAX_PAGE_SIZE" in body["message"] and paths(body) == {"query.page_size"}
    assert_error(client.get("/v1/runs?page_size=ten"), 400)


@pytest.mark.parametrize(
    ("fmt", "content_type"),
    [
        ("json", "application/json"),
        ("csv", "text/csv; charset=utf-8"),
        ("md", "text/markdown; charset=utf-8"),
        ("html", "text/html; charset=utf-8"),
        ("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ],
)
def test_report_formats(
    store_client: FlaskClient, fmt: str, content_type: str, no_charts: None
) -> None:
    client = store_client
    run = client.post("/v1/runs", json=WORKED).get_json()
    response = client.get(f"/v1/runs/{run['id']}/report?format={fmt}")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == content_type
    assert response.headers["Content-Disposition"].endswith(f'.{fmt}"')
    data = response.get_data()
    assert data
    if fmt == "json":
        assert json.loads(data) == run["result"]
    elif fmt == "xlsx":
        assert data[:2] == b"PK"  # a zip container
    elif fmt == "csv":
        assert b"7996" in data  # TCO_buy at u = 0


def test_report_default_format_is_html(store_client: FlaskClient, no_charts: None) -> None:
    client = store_client
    run = client.post("/v1/runs", json=WORKED).get_json()
    response = client.get(run["links"]["report"])
    assert response.status_code == 200 and response.mimetype == "text/html"


def test_report_unknown_format_is_400_listing_the_valid_ones(store_client: FlaskClient) -> None:
    client = store_client
    run = client.post("/v1/runs", json=WORKED).get_json()
    body = assert_error(client.get(f"/v1/runs/{run['id']}/report?format=pdf"), 400)
    assert paths(body) == {"query.format"}
    for fmt in ("json", "csv", "md", "html", "xlsx"):
        assert fmt in body["message"]


def test_an_html_report_is_a_download_unless_asked_inline(
    store_client: FlaskClient, no_charts: None
) -> None:
    # it was served inline as text/html with no Content-Security-Policy
    run = store_client.post("/v1/runs", json=WORKED).get_json()
    url = f"/v1/runs/{run['id']}/report?format=html"
    download = store_client.get(url)
    assert download.headers["Content-Disposition"].startswith("attachment; filename=")
    shown = store_client.get(url + "&disposition=inline")
    assert shown.headers["Content-Disposition"].startswith("inline; filename=")
    for response in (download, shown):
        csp = response.headers["Content-Security-Policy"]
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
        assert "script-src" not in csp  # no script may run, inline or not
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["X-Frame-Options"] == "DENY"
    body = assert_error(store_client.get(url + "&disposition=open"), 400)
    assert paths(body) == {"query.disposition"}


def test_every_answer_carries_the_security_headers(store_client: FlaskClient) -> None:
    run = store_client.post("/v1/runs", json=WORKED)
    answers = [
        run,
        store_client.get(f"/v1/runs/{run.get_json()['id']}/report?format=csv"),
        store_client.post("/v1/evaluate", json={}),
        store_client.get("/v1/no-such-route"),
        store_client.get("/openapi.json"),
        store_client.get("/health"),
    ]
    for response in answers:
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["X-Frame-Options"] == "DENY"
        assert response.headers["Content-Security-Policy"].startswith("default-src 'none'")
    page = store_client.get("/")
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]  # the page's own


def test_unknown_run_is_404(store_client: FlaskClient) -> None:
    client = store_client
    assert paths(assert_error(client.get("/v1/runs/no-such-run"), 404)) == {"run_id"}
    assert_error(client.get("/v1/runs/no-such-run/report?format=csv"), 404)


# --------------------------------------------------------------------------- catalog, health, spec


def test_catalog_gpus(client: FlaskClient) -> None:
    body = client.get("/v1/catalog/gpus").get_json()
    ids = {g["id"] for g in body["items"]}
    assert {"rtx-2080-ti", "v100-sxm2-16gb"} <= ids
    assert body["version"] and body["as_of"]
    gpu = client.get("/v1/catalog/gpus/rtx-2080-ti").get_json()
    assert gpu["id"] == "rtx-2080-ti" and gpu["memory_gb"] > 0 and gpu["tdp_w"] > 0
    assert gpu["source"]


def test_catalog_unknown_gpu_is_404_with_close_matches(client: FlaskClient) -> None:
    body = assert_error(client.get("/v1/catalog/gpus/rtx-2080-tii"), 404)
    assert "rtx-2080-ti" in body["message"] and paths(body) == {"gpu_id"}


def test_catalog_instances(client: FlaskClient) -> None:
    body = client.get("/v1/catalog/instances").get_json()
    assert "aws/p3.8xlarge" in {i["id"] for i in body["items"]}
    inst = client.get("/v1/catalog/instances/aws/p3.8xlarge").get_json()
    assert inst["gpu"] == "v100-sxm2-16gb" and inst["gpu_count"] == 4
    assert inst["on_demand_usd_per_hour"] > 0
    assert_error(client.get("/v1/catalog/instances/aws/p9.huge"), 404)


def test_catalog_models(client: FlaskClient) -> None:
    """Every served model with its architecture and the GPUs measured serving it at each
    precision that has rows: the GPUs of the serving rows (serving.csv holds Llama 3.3 70B at
    FP4 on a B200 only; Qwen3 8B has no rows)."""
    body = client.get("/v1/catalog/models").get_json()
    assert body["version"] and body["as_of"]
    models = {m["id"]: m for m in body["items"]}
    assert {"llama-3.3-70b", "llama-3.1-8b", "deepseek-r1"} <= set(models)
    llama = models["llama-3.3-70b"]
    assert llama["params_b"] == 70.56 and llama["active_params_b"] is None and llama["source"]
    assert (llama["layers"], llama["kv_heads"], llama["head_dim"]) == (80, 8, 128)
    assert llama["kv_dim_per_layer"] is None and "https://" in llama["arch_source"]
    assert llama["precisions"] == ["fp8", "fp4"] == list(llama["measured_on"])
    assert llama["measured_on"]["fp4"] == ["b200"]
    assert "h100-sxm5-80gb" in llama["measured_on"]["fp8"]
    assert models["deepseek-r1"]["active_params_b"] == 37
    assert models["deepseek-r1"]["kv_dim_per_layer"] == 576
    assert models["qwen3-8b"]["precisions"] == ["fp16", "fp8"]
    assert models["qwen3-8b"]["measured_on"] == {}
    serving = load_catalog().serving
    for model in body["items"]:
        for precision, gpus in model["measured_on"].items():
            rows = {r.gpu for r in serving if (r.model, r.precision) == (model["id"], precision)}
            assert gpus == sorted(rows) != [], (model["id"], precision)
        measured = {r.precision for r in serving if r.model == model["id"]}
        assert set(model["measured_on"]) == measured, model["id"]
    assert client.get("/v1/catalog/models/Llama-3.3-70B").get_json() == llama


def test_catalog_unknown_model_is_404_with_close_matches(client: FlaskClient) -> None:
    body = assert_error(client.get("/v1/catalog/models/llama-3.3-70"), 404)
    assert "llama-3.3-70b" in body["message"] and paths(body) == {"model_id"}


def test_catalog_api_offers(client: FlaskClient) -> None:
    body = client.get("/v1/catalog/api-offers").get_json()
    assert body["version"] and body["as_of"]
    offers = {o["id"]: o for o in body["items"]}
    assert len(offers) == len(load_catalog().api_offers) > 10
    offer = client.get("/v1/catalog/api-offers/together/llama-3.3-70b-instruct-turbo").get_json()
    assert offer == offers["together/llama-3.3-70b-instruct-turbo"]
    assert offer["provider"] == "together" and offer["model"] == "llama-3.3-70b"
    assert offer["input_usd_per_mtok"] > 0 and offer["output_usd_per_mtok"] > 0
    assert offer["as_of"] and offer["source"]
    assert any(not o["model"] for o in offers.values())  # a provider's own model: no rows
    body = assert_error(client.get("/v1/catalog/api-offers/together/llama"), 404)
    assert "together/llama-3.3-70b-instruct-turbo" in body["message"]
    assert paths(body) == {"offer_id"}


def test_catalog_grids(client: FlaskClient) -> None:
    """Every grid of grid_carbon.csv with its intensity, basis, flag and citation; one grid by
    its id in any case (a cloud region's holds a slash)."""
    body = client.get("/v1/catalog/grids").get_json()
    assert body["version"] and body["as_of"]
    grids = {g["id"]: g for g in body["items"]}
    cat = load_catalog()
    assert len(grids) == len(cat.grids) > 100
    assert {g["kind"] for g in grids.values()} == {"country", "us_subregion", "cloud_region"}
    us = grids["US"]
    assert us == {
        "id": "US",
        "kind": "country",
        "name": "United States",
        "g_co2e_per_kwh": 383.6,  # the row of pricing/data/grid_carbon.csv
        "year": 2024,
        "basis": "lifecycle",
        "estimated": False,
        "source": cat.grid("US").source,
        "note": "ISO3 USA",
    }
    assert all(g["source"] for g in grids.values())
    assert {g["id"] for g in grids.values() if g["estimated"]} == {
        g.id for g in cat.grids.values() if g.estimated_fields
    }
    assert client.get("/v1/catalog/grids/camx").get_json() == grids["CAMX"]
    region = client.get("/v1/catalog/grids/AWS/us-east-1").get_json()
    assert region == grids["aws/us-east-1"] and region["kind"] == "cloud_region"


def test_catalog_unknown_grid_is_404_with_close_matches(client: FlaskClient) -> None:
    body = assert_error(client.get("/v1/catalog/grids/aws/us-east-9"), 404)
    assert "aws/us-east-1" in body["message"] and paths(body) == {"grid_id"}


def test_openapi_documents_the_catalog_of_models_api_offers_and_grids(client: FlaskClient) -> None:
    spec = client.get("/openapi.json").get_json()
    for path, schema in (
        ("/v1/catalog/models", "ModelList"),
        ("/v1/catalog/models/{model_id}", "Model"),
        ("/v1/catalog/api-offers", "ApiOfferList"),
        ("/v1/catalog/api-offers/{offer_id}", "ApiOffer"),
        ("/v1/catalog/grids", "GridList"),
        ("/v1/catalog/grids/{grid_id}", "Grid"),
    ):
        get = spec["paths"][path]["get"]
        ok = get["responses"]["200"]["content"]["application/json"]["schema"]
        assert ok == {"$ref": f"#/components/schemas/{schema}"}, path
        assert get["operationId"] and get["summary"]
        assert "{" not in path or "404" in get["responses"]
    measured = spec["components"]["schemas"]["Model"]["properties"]["measured_on"]
    assert measured["additionalProperties"] == {"type": "array", "items": {"type": "string"}}


def test_health(store_client: FlaskClient) -> None:
    client = store_client
    response = client.get("/health")
    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "ok" and body["store"] == "ok" and body["catalog"]["version"]


def test_openapi_documents_the_custom_scenario_fields(client: FlaskClient) -> None:
    spec = client.get("/openapi.json").get_json()
    schemas = spec["components"]["schemas"]
    pue = schemas["Buy"]["properties"]["pue"]
    assert pue["oneOf"][0] == {"type": "number", "minimum": 1, "maximum": 5}
    distribution, values, truncated = pue["oneOf"][1]["allOf"]
    assert distribution == {"$ref": "#/components/schemas/Distribution"}
    # a normal or lognormal pue must be truncated to [1, 5]: unbounded, it is a 422
    assert {"properties": {"dist": {"enum": ["lognormal"]}}, "required": ["low", "high"]} in (
        truncated["anyOf"]
    )
    bounded = {"type": "number", "minimum": 1, "maximum": 5}  # a discrete pue of [0, 0.1]: 422
    assert values["properties"]["values"]["items"] == bounded
    assert values["properties"]["low"] == values["properties"]["high"] == bounded
    assert pue["x-unit"] == "[-]" and "[-]" not in pue["description"]  # its own key
    assert schemas["Buy"]["properties"]["electricity_usd_per_kwh"]["x-unit"] == "[USD/kWh]"
    gpu = schemas["Buy"]["properties"]["gpu"]["oneOf"]
    assert gpu[0]["type"] == "string" and gpu[1] == {"$ref": "#/components/schemas/InlineGPU"}
    util = schemas["Scenario"]["properties"]["utilisation"]["oneOf"]
    assert util[0]["type"] == "array" and util[0]["maxItems"] == 101
    assert util[1] == {"$ref": "#/components/schemas/UtilisationRange"}
    corr = schemas["Scenario"]["properties"]["correlations"]["items"]
    assert corr["type"] == "array" and corr["minItems"] == corr["maxItems"] == 3
    assert len(schemas["Distribution"]["oneOf"]) == 7
    assert schemas["Scenario"]["additionalProperties"] is False
    assert schemas["Scenario"]["properties"]["horizon_months"]["maximum"] == 240
    body = spec["paths"]["/v1/evaluate"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"] == {"$ref": "#/components/schemas/Scenario"}
    assert next(iter(body["examples"].values()))["value"] == WORKED
    # an open service (no API keys) draws no lock in /docs: no operation asks for a key
    assert "securitySchemes" not in spec["components"]
    assert not [o for ops in spec["paths"].values() for o in ops.values() if "security" in o]


def test_every_openapi_schema_has_a_name_of_its_own(tmp_path: Path) -> None:
    # the scenario's and the comparison's wording schemas both resolved to "Wording"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = make_app(tmp_path).test_client().get("/openapi.json").get_json()
    assert not [w for w in caught if "Multiple schemas resolved" in str(w.message)]
    assert {"Wording", "CompareWording"} <= set(spec["components"]["schemas"])


def test_openapi_asks_for_a_bearer_key_only_where_the_service_takes_keys(tmp_path: Path) -> None:
    spec = make_app(tmp_path, API_KEYS="k1").test_client().get("/openapi.json").get_json()
    assert "bearerAuth" in spec["components"]["securitySchemes"]
    secured = {p for p, ops in spec["paths"].items() for o in ops.values() if "security" in o}
    assert {"/v1/evaluate", "/v1/plans", "/v1/compare", "/v1/runs"} <= secured
    assert spec["paths"]["/v1/evaluate"]["post"]["security"] == [{}, {"bearerAuth": []}]


def test_openapi_states_the_configured_limits(tmp_path: Path) -> None:
    app = make_app(tmp_path, MAX_PAGE_SIZE=7, MAX_SAMPLES=500)
    spec = app.test_client().get("/openapi.json").get_json()
    page_size = next(
        p for p in spec["paths"]["/v1/runs"]["get"]["parameters"] if p["name"] == "page_size"
    )
    assert page_size["schema"]["maximum"] == 7
    for path in ("/v1/evaluate", "/v1/runs"):
        params = spec["paths"][path]["post"]["parameters"]
        assert next(p for p in params if p["name"] == "samples")["schema"]["maximum"] == 500
    assert_error(app.test_client().get("/v1/runs?page_size=8"), 400)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "text",
    [
        '{"version": 1,',  # truncated
        "{'version': 1}",  # not JSON
        '{"version": NaN}',
        '{"version": Infinity}',
        '{"discount_rate": -Infinity}',
        '{"discount_rate": 1e999}',
        '{"version": 1, "version": 1}',  # duplicate key
        "   ",
    ],
)
def test_malformed_json_is_400(client: FlaskClient, text: str) -> None:
    response = client.post("/v1/evaluate", data=text, content_type="application/json")
    body = assert_error(response, 400)
    assert paths(body) == {""}


def test_nan_inside_a_valid_scenario_is_400(store_client: FlaskClient) -> None:
    client = store_client
    text = json.dumps(WORKED).replace('"pue": 1.3', '"pue": NaN')
    assert "NaN" in text
    body = assert_error(client.post("/v1/runs", data=text, content_type="application/json"), 400)
    assert "NaN" in body["message"]
    assert client.get("/v1/runs").get_json()["total"] == 0


def test_invalid_utf8_is_400(client: FlaskClient) -> None:
    response = client.post(
        "/v1/evaluate", data=b'{"name": "\xff"}', content_type="application/json"
    )
    assert_error(response, 400)


def test_bad_query_parameter_is_400(client: FlaskClient) -> None:
    body = assert_error(client.post("/v1/evaluate?samples=many", json=WORKED), 400)
    assert paths(body) == {"query.samples"}
    assert_error(client.post("/v1/evaluate?seed=-1", json=WORKED), 400)


@pytest.mark.parametrize(
    ("method", "url", "says"),
    [
        # each ran as if the parameter were not there: the document's samples, the whole list
        ("post", "/v1/evaluate?sample=100", "unknown query parameter (did you mean 'samples'?); "
         "valid: samples, seed"),
        ("post", "/v1/runs?seeds=3", "unknown query parameter (did you mean 'seed'?); valid: "
         "samples, seed"),
        ("post", "/v1/compare?samples=100", "takes no query parameters (its options go in the "
         "body)"),
        ("get", "/v1/catalog/instances?provider=aws", "takes no query parameters"),
        ("get", "/v1/runs?pagesize=5", "did you mean 'page_size'?"),
        ("get", "/v1/runs/x/report?fromat=csv", "did you mean 'format'?"),
    ],
)  # fmt: skip
def test_an_unknown_query_parameter_is_400(client: FlaskClient, method, url, says) -> None:
    name = url.split("?")[1].split("=")[0]
    body = WORKED if method == "post" and "compare" not in url else {"utilisation": 0.5}
    kwargs = {"json": body} if method == "post" else {}
    errors = assert_error(getattr(client, method)(url, **kwargs), 400)["errors"]
    assert errors == [{"path": f"query.{name}", "message": errors[0]["message"]}]
    assert says in errors[0]["message"]


def test_known_query_parameters_and_none_are_still_fine(client: FlaskClient) -> None:
    assert client.post("/v1/evaluate?samples=3&seed=2", json=WORKED).status_code == 200
    assert client.get("/v1/catalog/gpus").status_code == 200
    assert client.get("/v1/runs?page=1&page_size=5").status_code == 200
    assert client.get("/?theme=dark").status_code == 200  # the web page is not the API


def test_unknown_route_is_404(client: FlaskClient) -> None:
    assert "/v2/nothing" in assert_error(client.get("/v2/nothing"), 404)["message"]


@pytest.mark.parametrize(
    ("method", "url", "allowed"),
    [
        ("delete", "/v1/runs", {"GET", "POST"}),
        ("get", "/v1/evaluate", {"POST"}),
        ("put", "/health", {"GET"}),
    ],
)
def test_wrong_method_is_405(client: FlaskClient, method: str, url: str, allowed: set) -> None:
    response = getattr(client, method)(url)
    body = assert_error(response, 405)
    assert allowed <= {m.strip() for m in response.headers["Allow"].split(",")}
    assert method.upper() in body["message"]


def test_body_over_the_limit_is_413(tmp_path: Path) -> None:
    client = make_app(tmp_path, MAX_CONTENT_LENGTH=2048).test_client()
    big = scenario(description="x" * 4000)
    body = assert_error(client.post("/v1/evaluate", json=big), 413)
    assert "MAX_CONTENT_LENGTH" in body["message"] and "2048" in body["message"]
    assert client.post("/v1/evaluate", json=WORKED).status_code == 200


@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        (json.dumps(WORKED), "text/plain"),
        (json.dumps(WORKED), None),
        ("name=x", "application/x-www-form-urlencoded"),
        (json.dumps(WORKED), "application/json; charset=latin-1"),
    ],
)
def test_wrong_content_type_is_415(
    client: FlaskClient, data: str, content_type: str | None
) -> None:
    response = client.post("/v1/runs", data=data, content_type=content_type)
    assert "JSON" in assert_error(response, 415)["message"]
    assert client.get("/v1/runs").get_json()["total"] == 0


def test_schema_errors_are_422_with_every_key_path(client: FlaskClient) -> None:
    body = scenario(horizon_months=0, colour="red")
    body["buy"] = {**body["buy"], "pue": 0.5, "gpu_count": "two", "pue_factor": 1.2}
    del body["rent"]
    response = client.post("/v1/evaluate", json=body)
    err = assert_error(response, 422)
    assert paths(err) == {
        "horizon_months",
        "colour",
        "buy.pue",
        "buy.gpu_count",
        "buy.pue_factor",
        "rent",
    }
    messages = {e["path"]: e["message"] for e in err["errors"]}
    assert "unknown key" in messages["colour"] and "valid keys" in messages["colour"]
    assert "[1, 5]" in messages["buy.pue"]
    assert "missing" in messages["rent"]


def test_inconsistent_distribution_is_422(client: FlaskClient) -> None:
    body = scenario()
    body["buy"] = {
        **body["buy"],
        "electricity_usd_per_kwh": {"dist": "uniform", "low": 2, "high": 1},
    }
    err = assert_error(client.post("/v1/evaluate", json=body), 422)
    assert paths(err) == {"buy.electricity_usd_per_kwh"}


def test_unknown_catalog_id_is_422(client: FlaskClient) -> None:
    body = scenario()
    body["rent"] = {**body["rent"], "instance": "aws/p3.9xlarge"}
    err = assert_error(client.post("/v1/evaluate", json=body), 422)
    assert "rent.instance" in paths(err)


def test_scenario_that_is_not_a_mapping_is_422(client: FlaskClient) -> None:
    assert paths(assert_error(client.post("/v1/evaluate", json=[1, 2]), 422)) == {""}


def test_samples_over_the_limit_is_refused_naming_the_limit(client: FlaskClient) -> None:
    # a query parameter out of its stated range is 400, like samples=0 or page_size above its
    # limit; the same number in the document is 422, like any invalid document
    for route in ("/v1/evaluate", "/v1/plans", "/v1/runs"):
        err = assert_error(client.post(f"{route}?samples=200001", json=WORKED), 400)
        assert err["errors"][0]["message"] == (
            "must be at most 200,000 (COSTMODEL_MAX_SAMPLES), got 200,001"
        )
        assert paths(err) == {"query.samples"}
    assert_error(client.post("/v1/evaluate?samples=0", json=WORKED), 400)
    body = scenario(simulation={"samples": 250_000, "seed": 1})
    err = assert_error(client.post("/v1/runs", json=body), 422)
    assert paths(err) == {"simulation.samples"}
    assert client.get("/v1/runs").get_json()["total"] == 0


def test_configured_limits_name_themselves(tmp_path: Path) -> None:
    client = make_app(tmp_path, MAX_SAMPLES=10, MAX_HORIZON=24, MAX_LEVELS=3).test_client()
    err = assert_error(client.post("/v1/evaluate?samples=11", json=WORKED), 400)
    assert "must be at most 10 (COSTMODEL_MAX_SAMPLES)" in err["message"]
    err = assert_error(client.post("/v1/evaluate", json=scenario(simulation={"samples": 11})), 422)
    assert "limit of 10 samples" in err["message"]
    err = assert_error(client.post("/v1/evaluate", json=WORKED), 422)  # 36 months, 4 levels
    assert paths(err) == {"horizon_months", "utilisation"}
    assert "COSTMODEL_MAX_HORIZON" in err["message"] and "COSTMODEL_MAX_LEVELS" in err["message"]
    ok = scenario(horizon_months=24, utilisation=[0.25, 0.5])
    assert client.post("/v1/evaluate", json=ok).status_code == 200


def test_total_work_limit_names_itself(tmp_path: Path) -> None:
    # the worked example: 1000 samples x (36 months x 3 for the monthly cash flows + 4 levels
    # x 13 for their statistics + 250 for sampling and summary) = 1000 x 410 = 410,000
    client = make_app(tmp_path, MAX_WORK=300_000).test_client()
    err = assert_error(client.post("/v1/evaluate?samples=1000", json=WORKED), 422)
    assert "410,000 exceeds" in err["message"] and "COSTMODEL_MAX_WORK" in err["message"]
    assert client.post("/v1/evaluate?samples=500", json=WORKED).status_code == 200  # 205,000


def test_a_scenario_of_many_levels_counts_their_statistics(tmp_path: Path) -> None:
    # 200,000 draws x 101 levels x 12 months took 4 s of CPU, counted 200,000 x 12 x (101 + 8)
    # = 261,600,000; it takes some 0.8 s now and is counted 200,000 x (12 x 3 + 101 x 13
    # + 250) = 200,000 x 1,599 = 319,800,000, the levels' statistics most of it
    client = make_app(tmp_path, MAX_WORK=319_799_999).test_client()
    doc = scenario(horizon_months=12, utilisation={"start": 0.0, "stop": 1.0, "step": 0.01})
    err = assert_error(client.post("/v1/evaluate?samples=200000", json=doc), 422)
    assert "319,800,000 exceeds the limit of 319,799,999" in err["message"]


def test_schema_bounds_on_horizon_and_grid(client: FlaskClient) -> None:
    err = assert_error(client.post("/v1/evaluate", json=scenario(horizon_months=241)), 422)
    assert paths(err) == {"horizon_months"}
    grid = {"start": 0.0, "stop": 1.0, "step": 0.001}
    err = assert_error(client.post("/v1/evaluate", json=scenario(utilisation=grid)), 422)
    assert paths(err) == {"utilisation"} and "101" in err["message"]


@pytest.mark.parametrize(
    ("key", "bad", "good"), [("MAX_SAMPLES", "lots", 5), ("DB_POOL_SIZE", "0", 8)]
)
def test_invalid_integer_setting_fails_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, bad: str, good: int
) -> None:
    monkeypatch.setenv(f"COSTMODEL_{key}", bad)
    with pytest.raises(ValueError, match=f"COSTMODEL_{key}"):
        make_app(tmp_path)
    monkeypatch.setenv(f"COSTMODEL_{key}", str(good))
    assert make_app(tmp_path).config[key] == good


def test_unexpected_error_is_500_with_a_logged_id(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(api.service, "evaluate", explode)
    with caplog.at_level(logging.ERROR, logger="api"):
        response = client.post("/v1/evaluate", json=WORKED)
    body = assert_error(response, 500)
    assert body["error_id"] in body["message"]
    assert "secret internal detail" not in response.get_data(as_text=True)
    logged = [r for r in caplog.records if body["error_id"] in r.getMessage()]
    assert logged and logged[0].exc_info is not None


# --------------------------------------------------------------------------- result cache


def test_identical_requests_are_answered_from_the_cache(client: FlaskClient) -> None:
    first = client.post("/v1/evaluate", json=WORKED)
    second = client.post("/v1/evaluate", json=WORKED)
    assert first.headers["X-Cache"] == "miss" and second.headers["X-Cache"] == "hit"
    assert first.get_data() == second.get_data()
    reformatted = client.post(
        "/v1/evaluate", data=json.dumps(WORKED, indent=4), content_type="application/json"
    )
    assert reformatted.headers["X-Cache"] == "hit"  # same resolved scenario, other bytes
    other_seed = client.post("/v1/evaluate?seed=2", json=WORKED)
    assert other_seed.headers["X-Cache"] == "miss" and other_seed.get_json()["seed"] == 2


def test_an_answer_is_the_libraries_answer_byte_for_byte(app: Flask, client: FlaskClient) -> None:
    """Whatever the API keeps between requests (the parsed document, the prebuilt schemas, the
    result cache) and whatever it answered before, its JSON for a seed is what the scenario
    layer computes for that seed from a fresh load, written compactly, byte for byte."""
    import scenarios
    from present import to_dict

    lab = yaml.safe_load((EXAMPLES / "lab-4x-rtx2080ti-vs-p3-8xlarge.yaml").read_text())
    answers = {}
    for body, seed in ((lab, 5), (WORKED, 5), (lab, 6), (scenario(name="other"), 6), (lab, 5)):
        response = client.post(f"/v1/evaluate?samples=600&seed={seed}", json=body)
        assert response.status_code == 200
        answers.setdefault((body["name"], seed), set()).add(response.get_data())
    with app.app_context():
        for (name, seed), written in answers.items():
            body = lab if name == lab["name"] else WORKED if name == WORKED["name"] else None
            if body is None:
                continue
            fresh = scenarios.evaluate(copy.deepcopy(body), samples=600, seed=seed)
            text = app.json.dumps(to_dict(fresh), separators=(",", ":")) + "\n"
            assert written == {text.encode()}, (name, seed)


def test_a_body_is_parsed_once_whatever_its_query(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = []

    def load_mapping(data: Any, **kwargs: Any) -> Any:
        parsed.append(data["name"])
        return real(data, **kwargs)

    real = api.service.load_mapping
    monkeypatch.setattr(api.service, "load_mapping", load_mapping)
    for seed in (1, 2, 3):
        response = client.post(f"/v1/evaluate?seed={seed}&samples=50", json=WORKED)
        assert response.headers["X-Cache"] == "miss" and response.get_json()["seed"] == seed
    assert parsed == [WORKED["name"]]
    client.post("/v1/evaluate", json=scenario(name="other"))
    assert parsed == [WORKED["name"], "other"]
    for _ in range(2):  # an invalid body is not kept: answered 422 each time
        assert_error(client.post("/v1/evaluate", json=scenario(horizon_months=0)), 422)
    assert parsed[2:] == [WORKED["name"]] * 2


def test_cache_can_be_switched_off(tmp_path: Path) -> None:
    client = make_app(tmp_path, RESULT_CACHE=0).test_client()
    for _ in range(2):
        assert client.post("/v1/evaluate", json=WORKED).headers["X-Cache"] == "miss"


_FAULTS = """
import json, resource, sys
from api import create_app
from costmodel.allocator import keep_freed_memory
client = create_app({"DB": sys.argv[1], "API_KEYS": "", "RESULT_CACHE": 0}).test_client()
body = json.dumps(json.load(open(sys.argv[2])))
faults = []
for seed in range(4):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    response = client.post(f"/v1/evaluate?seed={seed}", data=body, content_type="application/json")
    assert response.status_code == 200
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(keep_freed_memory(), *faults)
"""


def test_a_worker_keeps_the_memory_a_request_frees(tmp_path: Path) -> None:
    # The lab example at 10,000 draws touches some 30 MB of arrays a request; handed back to
    # the kernel each time, they cost ~7,600 page faults of 4 KiB per request.
    body = tmp_path / "lab.json"
    lab = EXAMPLES / "lab-4x-rtx2080ti-vs-p3-8xlarge.yaml"
    body.write_text(json.dumps(yaml.safe_load(lab.read_text(encoding="utf-8"))))
    out = subprocess.run(
        [sys.executable, "-c", _FAULTS, str(tmp_path / "runs.sqlite3"), str(body)],
        capture_output=True,
        text=True,
        check=True,
    )
    kept, *counts = out.stdout.split()
    if kept != "True":
        pytest.skip("glibc's allocator only")
    faults = [int(x) for x in counts]
    assert max(faults[2:]) < 1_000, faults  # the first requests grow the heap


# --------------------------------------------------------------------------- idempotency


def idempotent(key: str) -> dict[str, str]:
    return {"Idempotency-Key": key}


def test_a_retried_post_stores_one_run(store_client: FlaskClient) -> None:
    first = store_client.post("/v1/runs?seed=3", json=WORKED, headers=idempotent("retry-1"))
    again = store_client.post("/v1/runs?seed=3", json=WORKED, headers=idempotent("retry-1"))
    assert first.status_code == again.status_code == 201
    assert again.get_json() == first.get_json()
    assert again.headers["Location"] == first.headers["Location"]
    assert store_client.get("/v1/runs").get_json()["total"] == 1
    other = store_client.post("/v1/runs?seed=3", json=WORKED, headers=idempotent("retry-2"))
    assert other.status_code == 201 and other.get_json()["id"] != first.get_json()["id"]
    assert store_client.post("/v1/runs?seed=3", json=WORKED).status_code == 201  # no key: new
    assert store_client.get("/v1/runs").get_json()["total"] == 3


def test_a_key_sent_with_another_request_is_409(store_client: FlaskClient) -> None:
    run = store_client.post("/v1/runs", json=WORKED, headers=idempotent("k")).get_json()
    for changed in ("/v1/runs?seed=9", "/v1/runs"):
        body = {**WORKED, "name": "other"} if changed == "/v1/runs" else WORKED
        error = assert_error(store_client.post(changed, json=body, headers=idempotent("k")), 409)
        assert paths(error) == {"headers.Idempotency-Key"} and run["id"] in error["message"]
    assert store_client.get("/v1/runs").get_json()["total"] == 1


@pytest.mark.parametrize("key", ["", "a b", "é", "x" * 256])
def test_a_malformed_idempotency_key_is_400(client: FlaskClient, key: str) -> None:
    error = assert_error(client.post("/v1/runs", json=WORKED, headers=idempotent(key)), 400)
    assert paths(error) == {"headers.Idempotency-Key"}


def test_concurrent_posts_with_one_key_store_one_run(store_app: Flask) -> None:
    ids: list[str] = []

    def post() -> None:
        response = store_app.test_client().post(
            "/v1/runs", json=WORKED, headers=idempotent("racing")
        )
        assert response.status_code == 201, response.get_data(as_text=True)
        ids.append(response.get_json()["id"])

    threads = [threading.Thread(target=post) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ids) == 8 and len(set(ids)) == 1
    assert store_app.test_client().get("/v1/runs").get_json()["total"] == 1


def test_keys_belong_to_their_api_key(tmp_path: Path, store_location: str) -> None:
    app = make_app(tmp_path, DB=store_location, API_KEYS="alice,bob")
    client = app.test_client()
    try:
        runs = {
            who: client.post(
                "/v1/runs", json=WORKED, headers={**bearer(who), **idempotent("same")}
            ).get_json()["id"]
            for who in ("alice", "bob")
        }
        assert runs["alice"] != runs["bob"]
    finally:
        close_store(app)


# --------------------------------------------------------------------------- API keys


@pytest.fixture
def keyed(tmp_path: Path, store_location: str) -> Iterator[FlaskClient]:
    app = make_app(tmp_path, DB=store_location, API_KEYS="alpha-key, beta-key")
    yield app.test_client()
    close_store(app)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.mark.parametrize(
    "headers",
    [{}, bearer("wrong-key"), {"Authorization": "Basic YWxwaGEta2V5Og=="}, bearer("")],
)
def test_missing_or_wrong_key_is_401(keyed: FlaskClient, headers: dict[str, str]) -> None:
    for url in ("/v1/evaluate", "/v1/runs"):
        response = keyed.post(url, json=WORKED, headers=headers)
        assert_error(response, 401)
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert_error(keyed.get("/v1/runs", headers=headers), 401)


def test_right_key_is_accepted(keyed: FlaskClient) -> None:
    assert keyed.post("/v1/evaluate", json=WORKED, headers=bearer("alpha-key")).status_code == 200
    assert keyed.post("/v1/runs", json=WORKED, headers=bearer("beta-key")).status_code == 201
    # Reads of the catalog, the health probe and the spec stay open.
    for url in ("/health", "/v1/catalog/gpus", "/openapi.json"):
        assert keyed.get(url).status_code == 200


def test_a_key_sees_only_its_own_runs(keyed: FlaskClient, store_location: str) -> None:
    alpha = keyed.post("/v1/runs", json=scenario(name="a"), headers=bearer("alpha-key"))
    beta = keyed.post("/v1/runs", json=scenario(name="b"), headers=bearer("beta-key"))
    a_id, b_id = alpha.get_json()["id"], beta.get_json()["id"]

    assert keyed.get(f"/v1/runs/{a_id}", headers=bearer("alpha-key")).status_code == 200
    assert_error(keyed.get(f"/v1/runs/{a_id}", headers=bearer("beta-key")), 404)
    assert_error(keyed.get(f"/v1/runs/{a_id}/report?format=csv", headers=bearer("beta-key")), 404)
    assert_error(keyed.get(f"/v1/runs/{a_id}"), 401)
    listing = keyed.get("/v1/runs", headers=bearer("beta-key")).get_json()
    assert [r["id"] for r in listing["items"]] == [b_id] and listing["total"] == 1

    owners = {row[0] for row in backends.query(store_location, "SELECT owner FROM runs")}
    dump = repr(backends.query(store_location, "SELECT * FROM runs"))
    expected = {
        "sha256:" + hashlib.sha256(k.encode()).hexdigest() for k in ("alpha-key", "beta-key")
    }
    assert owners == expected
    assert "alpha-key" not in dump and "beta-key" not in dump


# --------------------------------------------------------------------------- concurrency


def test_sixteen_threads_posting_runs_lose_nothing(store_app: Flask) -> None:
    app = store_app
    n = 16
    barrier = threading.Barrier(n)
    results: list[tuple[int, int, dict[str, Any]]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def post(i: int) -> None:
        try:
            client = app.test_client()
            barrier.wait(timeout=30)
            body = scenario(name=f"concurrent-{i:02d}", simulation={"samples": 2, "seed": i})
            response = client.post("/v1/runs", json=body)
            with lock:
                results.append((i, response.status_code, response.get_json()))
        except BaseException as exc:  # reported below; a thread's exception would be lost
            with lock:
                errors.append(exc)

    threads = [threading.Thread(target=post, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    assert sorted(code for _, code, _ in results) == [201] * n
    ids = [run["id"] for _, _, run in results]
    assert len(set(ids)) == n  # no duplicates

    client = app.test_client()
    for i, _, run in results:
        stored = client.get(f"/v1/runs/{run['id']}").get_json()
        assert stored["name"] == f"concurrent-{i:02d}" and stored["seed"] == i
    listing = client.get("/v1/runs?page_size=100").get_json()
    assert listing["total"] == n
    assert sorted(r["id"] for r in listing["items"]) == sorted(ids)  # none lost


@pytest.mark.parametrize("doc, path, message", KEY_PATH_CASES)
def test_errors_name_their_key_path_over_http(client: FlaskClient, doc, path, message) -> None:
    body = assert_error(client.post("/v1/evaluate", json=doc), 422)
    assert body["errors"] == [{"path": path, "message": body["errors"][0]["message"]}]
    assert message in body["errors"][0]["message"]


# --------------------------------------------------------------------------- a store that fails


def assert_unavailable(response: Any) -> None:
    """503 in the one error shape, with Retry-After and no server path or URL."""
    body = assert_error(response, 503)
    assert response.headers["Retry-After"].isdigit()
    assert "run store" in body["message"] and "/" not in body["message"]


def store_routes(client: FlaskClient, run_id: str) -> list[Any]:
    """One request to every route that needs the run store."""
    return [
        client.post("/v1/runs", json=WORKED),
        client.get("/v1/runs"),
        client.get(f"/v1/runs/{run_id}"),
        client.get(f"/v1/runs/{run_id}/report?format=csv"),
        client.get("/health"),
    ]


def test_a_store_that_cannot_open_is_503_on_every_route(tmp_path: Path) -> None:
    port = backends.free_port()  # nothing listens there
    for db in (str(tmp_path), f"postgresql://postgres@127.0.0.1:{port}/postgres"):
        client = make_app(tmp_path, DB=db).test_client()  # a directory; a closed port
        for response in store_routes(client, "some-run"):
            assert_unavailable(response)
        assert client.post("/v1/evaluate", json=WORKED).status_code == 200  # needs no store


def refuse_writes(location: str) -> None:
    """Make every write of runs fail in the database itself, as a full disk or a read-only
    database does, while reads go on."""
    if location.startswith("postgresql://"):
        backends.query(
            location,
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device'; END $$",
        )
        sql = (
            "CREATE TRIGGER full_disk BEFORE INSERT ON runs FOR EACH ROW EXECUTE FUNCTION refuse()"
        )
    else:
        sql = (
            "CREATE TRIGGER full_disk BEFORE INSERT ON runs "
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
    backends.query(location, sql)


def test_health_says_so_when_the_store_refuses_writes(
    store_app: Flask, store_location: str
) -> None:
    # /health said "ok" while every POST /v1/runs failed
    client = store_app.test_client()
    assert client.get("/health").status_code == 200
    refuse_writes(store_location)
    assert_unavailable(client.post("/v1/runs", json=WORKED))
    assert client.get("/health").status_code == 200  # the last probe is trusted a few seconds
    store_app.extensions["costmodel"]["probe"] = None  # ... and then made again
    response = client.get("/health")
    error = assert_error(response, 503)
    assert "refuses writes" in error["message"] and paths(error) == {"store"}
    assert response.headers["Retry-After"].isdigit()
    assert client.get("/v1/runs").get_json()["total"] == 0  # reads go on; the probe left nothing


def test_a_store_that_breaks_while_serving_is_503_on_every_route(
    store_client: FlaskClient, store_location: str
) -> None:
    run_id = store_client.post("/v1/runs", json=WORKED).get_json()["id"]
    backends.query(store_location, "DROP TABLE runs")
    for response in store_routes(store_client, run_id):
        assert_unavailable(response)


@pytest.mark.parametrize("damage", backends.SQLITE_DAMAGES)
def test_a_damaged_sqlite_file_is_503_never_a_phantom_201(tmp_path: Path, damage: str) -> None:
    """The reported defect: the SQLite file truncated under a running server (two workers here)
    gave 500s and a 201 for a run that was never stored. Now every 201 is a run that a new
    connection reads back, and everything else is a 503."""
    workers = [make_app(tmp_path).test_client() for _ in range(2)]
    for client in workers:
        assert client.post("/v1/runs", json=WORKED).status_code == 201
    db = tmp_path / "runs.sqlite3"
    backends.damage_sqlite(db, damage)
    created = []
    for i in range(6):
        response = workers[i % 2].post("/v1/runs", json=WORKED)
        if response.status_code == 201:
            created.append(response.get_json()["id"])
        else:
            assert_unavailable(response)
    for run_id in created:
        assert backends.query(str(db), "SELECT id FROM runs WHERE id = ?", (run_id,)) == [(run_id,)]
    if damage != "overwrite":  # there the WAL still holds every page, so runs are kept
        assert created == []


@pytest.mark.parametrize(
    "db", ["mysql://u@db.example/runs", "postgresql+psycopg://u@db.example/runs", "file:x"]
)
def test_an_unsupported_store_url_stops_the_app_at_start(tmp_path: Path, db: str) -> None:
    with pytest.raises(ValueError, match=r"COSTMODEL_DB: unsupported .*postgresql://") as info:
        make_app(tmp_path, DB=db)
    assert "sqlite:///PATH" in str(info.value)
    assert list(tmp_path.iterdir()) == []  # no folder named "mysql:" or file made


def test_a_postgres_url_without_the_driver_stops_the_app_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg_pool", None)  # import psycopg_pool now fails
    monkeypatch.setenv("COSTMODEL_DB", "postgresql://u@db.example/runs")
    with pytest.raises(ValueError, match=r'pip install "gpu-costmodel\[postgres\]"'):
        create_app({"TESTING": True})
