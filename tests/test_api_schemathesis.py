"""Property-based tests of the HTTP API from its own OpenAPI document (schemathesis, in-process).

Every operation of ``/openapi.json`` gets the example library of the spec plus a bounded number
of generated requests, valid and invalid (schemathesis' positive and negative modes). None may be
answered with a 5xx, and every answer must match what the document says (status codes, content
types, headers and body schemas), so the spec cannot drift from the code.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks

from api import create_app

# Limits below the defaults keep generated-but-valid scenarios fast (each limit is still a real
# check); they let the example scenarios of the spec (10,000 samples, 20 levels) through. Runs
# above MAX_WORK (or sent with Prefer: respond-async) are jobs, held to MAX_JOB_WORK.
_APP = create_app(
    {
        "TESTING": True,
        "MAX_SAMPLES": 10_000,
        "MAX_HORIZON": 120,
        "MAX_LEVELS": 21,
        "MAX_JOB_WORK": 2_000_000_000,
        "RESULT_CACHE": 0,
        "API_KEYS": "",
    }
)
# The coverage phase enumerates boundary cases of every scenario field (about 11,000 requests
# for POST /v1/evaluate alone); the examples phase and 50 generated cases per operation keep
# the whole module under half a minute. 50 reach as much of the code as 100 did: the lines of
# api, scenarios, costmodel and present run by the operations that evaluate (compare, runs,
# evaluate, plans, throughput), measured with coverage.py over runs of each, were 98.2 and
# 98.4 % of all the runs' lines at 100 cases, 99.4 and 98.0 % at 50 (98.1 % at 30): the
# draws of a run matter more than their number.
_CONFIG = schemathesis.Config.from_dict({"phases": {"coverage": {"enabled": False}}})
schema = schemathesis.openapi.from_wsgi("/openapi.json", _APP, config=_CONFIG)

_CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
    checks.allow_header_conformance,
]


@pytest.fixture(scope="module", autouse=True)
def _temporary_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    _APP.config["DB"] = str(Path(tmp_path_factory.mktemp("db")) / "runs.sqlite3")
    yield
    _APP.extensions["costmodel"]["jobs"].close()  # the jobs of generated runs stop here


def test_openapi_document_is_valid() -> None:
    from openapi_spec_validator import validate  # here, so a missing package fails only this

    spec = _APP.test_client().get("/openapi.json").get_json()
    validate(spec)  # raises on an invalid OpenAPI 3 document
    assert spec["openapi"].startswith("3.")
    assert {
        "/v1/evaluate",
        "/v1/runs",
        "/v1/runs/{run_id}",
        "/v1/runs/{run_id}/report",
        "/v1/catalog/gpus",
        "/v1/catalog/gpus/{gpu_id}",
        "/v1/catalog/instances",
        "/health",
    } <= set(spec["paths"])


@schema.parametrize()
@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors_and_responses_match_the_spec(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=_CHECKS)
