"""docs/api.md's examples are what the service does: every `curl` request of the page is sent
to the app (through Flask's test client), a response printed right after a request is the
answer word for word, and the keys the page lists for an answer are the answer's keys."""

from __future__ import annotations

import json
import re
import shlex
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


def _parse(command: str) -> tuple[str, str, Any]:
    """(method, path with query, JSON body or None) of a `curl` command of the page."""
    words = shlex.split(command)
    method, body, url = "GET", None, words[-1]
    for flag, value in zip(words, words[1:], strict=False):
        if flag == "-X":
            method = value
        elif flag == "--data":
            # Either literal JSON or the page's `$(python ... FILE.yaml)` that turns a YAML
            # example into JSON.
            example = re.search(r"\S+\.yaml", value) if value.startswith("$(") else None
            source = (ROOT / example.group(0)).read_text("utf-8") if example else None
            body = yaml.safe_load(source) if source else json.loads(value)
    assert url.startswith("http://127.0.0.1:8000/"), url
    return method, url.removeprefix("http://127.0.0.1:8000"), body


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    path = tmp_path_factory.mktemp("doc-examples") / "runs.sqlite3"
    return create_app({"DB": str(path), "API_KEYS": ""}).test_client()


def test_the_page_has_requests_and_a_printed_answer():
    assert len(REQUESTS) >= 3
    assert any(answer for _, answer in REQUESTS)


@pytest.mark.parametrize(("command", "answer"), REQUESTS, ids=lambda v: str(v)[:60])
def test_every_documented_request_is_answered_as_documented(client, command, answer):
    method, path, body = _parse(command)
    response = client.open(path, method=method, json=body)
    if answer is None:  # a run is created, everything else answered
        expected = 201 if method == "POST" and path.startswith("/v1/runs") else 200
        assert response.status_code == expected, response.get_json()
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
    method, path, body = _parse(command)
    answer = client.open(path, method=method, json=body).get_json()
    # The sentence that lists the answer's keys, each followed by its meaning in brackets.
    paragraph = re.search(r"^The answer holds (.*?) and `ruled_out`", PAGE, re.M | re.S)[0]
    top = set(re.findall(r"`([a-z_]+)`", re.sub(r"\([^()]*(\([^()]*\)[^()]*)*\)", "", paragraph)))
    assert top == set(answer)
    option = re.search(r"`options` \(each `(\{.*?\})`", paragraph, re.S).group(1)
    assert _names(option) == set(answer["options"][0])
    cost = re.search(r"cost_per_reference_gpu_hour:\s*(\{[^}]*\})", option)[1]
    assert _names(cost) == set(answer["options"][0]["cost_per_reference_gpu_hour"])
