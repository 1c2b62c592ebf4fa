"""docs/api.md's examples are what the service does: every `curl` request of the page is sent
to the app (through Flask's test client) with its headers, a response printed right after a
request is the answer word for word, a job the page starts ends done, and the keys the page
lists for an answer are the answer's keys."""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from api import create_app

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "api.md").read_text("utf-8")
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)


def _requests() -> list[tuple[str, str | None]]:
    """Each `curl` command of the page with the JSON block printed right after it (in the same
    section, no heading between), if any."""
    blocks = list(FENCE.finditer(PAGE))
    found = []
    for block, after in zip(blocks, [*blocks[1:], None], strict=True):
        if block[1] != "bash" or "curl " not in block[2]:
            continue
        between = PAGE[block.end() : after.start()] if after else ""
        answered = after and after[1] == "json" and not re.search(r"^#", between, re.M)
        for command in block[2].replace("\\\n", " ").splitlines():
            if command.strip().startswith("curl "):
                found.append((command.strip(), after[2] if answered else None))
    return found


REQUESTS = _requests()


def _parse(command: str) -> tuple[str, str, Any, dict[str, str]]:
    """(method, path with query, JSON body or None, headers) of a `curl` command of the page."""
    words = shlex.split(command)
    method, body, url, headers = "GET", None, words[-1], {}
    for flag, value in zip(words, words[1:], strict=False):
        if flag == "-X":
            method = value
        elif flag == "-H":
            name, _, given = value.partition(":")
            headers[name.strip()] = given.strip()
        elif flag == "--data":
            # Either literal JSON or the page's `$(python ... FILE.yaml)` that turns a YAML
            # example into JSON.
            example = re.search(r"\S+\.yaml", value) if value.startswith("$(") else None
            source = (ROOT / example.group(0)).read_text("utf-8") if example else None
            body = yaml.safe_load(source) if source else json.loads(value)
    assert url.startswith("http://127.0.0.1:8000/"), url
    return method, url.removeprefix("http://127.0.0.1:8000"), body, headers


@pytest.fixture(scope="module")
def client(tmp_path_factory) -> Iterator[Any]:
    path = tmp_path_factory.mktemp("doc-examples") / "runs.sqlite3"
    app = create_app({"DB": str(path), "API_KEYS": ""})
    yield app.test_client()
    app.extensions["costmodel"]["jobs"].close()


def _followed(client: Any, response: Any) -> Any:
    """The run a 202 stands for, polled at its Location until it is no longer under way."""
    deadline = time.monotonic() + 120
    while (run := client.get(response.headers["Location"]).get_json())["status"] in (
        "queued",
        "running",
    ):
        assert time.monotonic() < deadline, "the documented job did not end"
        time.sleep(0.1)
    return run


def test_the_page_has_requests_and_a_printed_answer():
    assert len(REQUESTS) >= 3
    assert any(answer for _, answer in REQUESTS)


@pytest.mark.parametrize(("command", "answer"), REQUESTS, ids=lambda v: str(v)[:60])
def test_every_documented_request_is_answered_as_documented(client, command, answer):
    method, path, body, headers = _parse(command)
    headers.pop("Content-Type", None)  # json= sends it
    response = client.open(path, method=method, json=body, headers=headers)
    if answer is None:  # a run is created (a job with Prefer: respond-async), all else answered
        created = 202 if headers.get("Prefer") == "respond-async" else 201
        expected = created if method == "POST" and path.startswith("/v1/runs") else 200
        assert response.status_code == expected, response.get_json()
        if expected == 202:
            assert _followed(client, response)["status"] == "done"
    else:
        documented = json.loads(answer)
        assert response.status_code == documented["code"]
        assert response.get_json() == documented


def _names(words: str) -> set[str]:
    """The top-level key names of a list such as `{id, side: buy|rent, cost: {p10, p50}}`."""
    inner = words.strip()[1:-1]
    while re.search(r"\{[^{}]*\}", inner):
        inner = re.sub(r"\{[^{}]*\}", "", inner)
    return {item.split(":")[0].strip() for item in inner.split(",")}


def test_the_compare_answer_has_the_documented_keys(client):
    command = next(c for c, _ in REQUESTS if "/v1/compare" in c)
    method, path, body, _ = _parse(command)
    answer = client.open(path, method=method, json=body).get_json()
    # The sentence that lists the answer's keys, each followed by its meaning in brackets.
    paragraph = re.search(r"^The answer holds (.*?) and `ruled_out`", PAGE, re.M | re.S)[0]
    top = set(re.findall(r"`([a-z_]+)`", re.sub(r"\([^()]*(\([^()]*\)[^()]*)*\)", "", paragraph)))
    assert top == set(answer)
    option = re.search(r"`options` \(each `(\{.*?\})`", paragraph, re.S).group(1)
    assert _names(option) == set(answer["options"][0])
    cost = re.search(r"cost_per_reference_gpu_hour:\s*(\{[^}]*\})", option)[1]
    assert _names(cost) == set(answer["options"][0]["cost_per_reference_gpu_hour"])
