"""Hostile and careless input: alias bombs, deep nesting, numbers and text Python cannot hold,
values at the edges of their ranges. Each is one clear error naming the file and key path (exit
status 2, HTTP 4xx), never a traceback, a hang, a numpy warning or a silent guess; a batch runs
every other file."""

from __future__ import annotations

import contextlib
import copy
import csv
import io
import json
import subprocess
import sys
import warnings
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api import create_app
from costmodel import BuyInputs, Fixed, ModelInputs, RentInputs, simulate, summarise
from scenarios import ScenarioError, load_mapping, loader
from scenarios.batch import run_batch
from scenarios.loader import MAX_DEPTH, MAX_FILE_BYTES, MAX_VALUES, load_documents

ROOT = Path(__file__).resolve().parents[1]
WORKED_TEXT = (ROOT / "scenarios" / "examples" / "worked-example.yaml").read_text("utf-8")
WORKED = yaml.safe_load(WORKED_TEXT)


def _bomb(levels: int = 9, width: int = 9) -> str:
    """Nine levels of nine aliases: 1.6 KB of YAML that expands to 9**9 values."""
    lines = [f"a0: &a0 [{', '.join(['0.5'] * width)}]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return "\n".join(lines) + f"\nutilisation: *a{levels}\n"


def _worked(old: str, new: str) -> str:
    assert old in WORKED_TEXT
    return WORKED_TEXT.replace(old, new, 1)


NAME = "name: worked-example-2gpu-vs-on-demand"
BLOCKS = "name:\n" + "".join("  " * i + "- \n" for i in range(1, 60))
OWN_SPEED = "  relative_throughput: 1.0\n  scaling_efficiency: 1.0"
INLINE_GPU = 'gpu: {name: "consumer 24 GB card", memory_gb: 24, tdp_w: 350, price_usd: 1500}'

#: Hostile files: (id, text, what the one error line must say).
HOSTILE = [
    ("alias-bomb", _bomb(), f"more than {MAX_VALUES:,} values"),
    ("flow-nesting", _worked(NAME, "name: " + "[" * 500 + "]" * 500), "nested too deeply"),
    ("block-nesting", _worked(NAME, BLOCKS), f"deeper than {MAX_DEPTH}"),
    ("int-400-digits", _worked("discount_rate: 0.08", "discount_rate: " + "9" * 400), "rate"),
    ("int-5000-digits", _worked("discount_rate: 0.08", "discount_rate: 9" + "9" * 5000), "4300"),
    (
        "description-over-1-mib",
        WORKED_TEXT + "description: " + "x" * MAX_FILE_BYTES + "\n",
        f"the file is larger than {MAX_FILE_BYTES:,} bytes (COSTMODEL_MAX_FILE_BYTES)",
    ),
    (
        "list-of-400000-under-an-unknown-key",
        WORKED_TEXT + "unknown: [" + "0," * 400_000 + "0]\n",
        f"more than {MAX_VALUES:,} values",
    ),
    (
        "price-400-digits",
        _worked("gpu_price_usd: 1500", "gpu_price_usd: " + "9" * 400),
        "buy.gpu_price_usd: the value is an integer of 400 digits",
    ),
    (
        "seed-400-digits",
        _worked("seed: 1,", "seed: " + "9" * 400 + ","),
        "simulation.seed: must be <= 9,223,372,036,854,775,807 [-], got an integer of 400 digits",
    ),
    (  # the bound and the value were both shown as 9.22337e+18
        "seed-one-past-the-bound",
        _worked("seed: 1,", "seed: 9223372036854775808,"),
        "simulation.seed: must be <= 9,223,372,036,854,775,807 [-], got 9,223,372,036,854,775,808",
    ),
    (
        "dist-bound-400-digits",
        _worked(
            "gpu_price_usd: 1500",
            "gpu_price_usd: {dist: uniform, low: 1, high: 9" + "9" * 399 + "}",
        ),
        "buy.gpu_price_usd: high is an integer of 400 digits",
    ),
    ("lone-surrogate", _worked(NAME, 'name: "bad \\ud800 name"'), "name: text holds the unpaired"),
    ("surrogate-key", _worked(NAME, NAME + '\n"\\udfff": 1'), "key holds the unpaired surrogate"),
    (  # the whole id was echoed: an error line of 100,000 characters
        "gpu-id-of-100000-characters",
        _worked(INLINE_GPU, 'gpu: "rtx' + "x" * 100_000 + '"'),
        "buy.gpu: unknown GPU id 'rtx" + "x" * 57 + "'... (100,003 characters); see 'costmodel",
    ),
    (  # written as JSON would (YAML does not join the pair): was "use ... its surrogate pair"
        "surrogate-pair",
        _worked(NAME, 'name: "rocket \\ud83d\\ude80"'),
        "name: text holds the surrogate pair \\ud83d\\ude80, which YAML does not join into a "
        "character; write \\U0001f680 or the character itself",
    ),
    ("no-such-date", _worked(NAME, "name: 2026-13-45"), "month must be in 1..12"),
    (
        "control-char",
        _worked(NAME, 'name: "a\\x01b"'),
        "name: text holds the control character U+0001",
    ),
    (
        "price-1e308",
        _worked("gpu_price_usd: 1500", "gpu_price_usd: 1.0e+308"),
        "buy.gpu_price_usd: values must lie in [0, 1,000,000]",
    ),
    (
        "speed-1e-300",
        _worked(OWN_SPEED, OWN_SPEED.replace("1.0\n", "1.0e-300\n")),
        "rent.relative_throughput: values must lie in [0.001, 1,000]",
    ),
]


@pytest.fixture
def hostile_files(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, text, _ in HOSTILE:
        out[name] = tmp_path / f"{name}.yaml"
        out[name].write_text(text, encoding="utf-8")
    return out


@pytest.mark.parametrize(("name", "expected"), [(n, e) for n, _, e in HOSTILE])
def test_hostile_file_is_one_clear_error(hostile_files, name, expected):
    path = hostile_files[name]
    # a subprocess with a timeout: an alias bomb used to run for minutes at 1.7 GB and rising
    out = subprocess.run(
        [sys.executable, "-m", "cli", "run", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}")
    assert expected in lines[0]
    assert len(lines[0]) < len(str(path)) + 600  # what the user wrote is not echoed at length


def test_a_batch_runs_every_other_file_and_lists_each_failure(hostile_files, tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(WORKED_TEXT, encoding="utf-8")
    out = tmp_path / "out"
    summary = run_batch(
        [*hostile_files.values(), good],
        out,
        workers=1,
        formats=("json",),
        store=tmp_path / "runs.sqlite3",
        progress=False,
    )
    assert summary.ok == 1 and summary.failed == len(HOSTILE)
    assert (out / "good.json").exists()
    with (out / "summary.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    failed = {Path(r["file"]).stem: r["error"] for r in rows if r["status"] == "failed"}
    assert set(failed) == set(hostile_files)
    for name, _, expected in HOSTILE:
        assert expected in failed[name], name


def _numbers(node: Any, path: tuple = ()) -> Iterator[tuple]:
    """The key path of every number of a parsed document."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _numbers(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _numbers(value, (*path, i))
    elif isinstance(node, int | float) and not isinstance(node, bool):
        yield path


@pytest.mark.parametrize("example", sorted((ROOT / "scenarios" / "examples").glob("*.yaml")))
def test_a_400_digit_integer_anywhere_is_a_scenario_error(example):
    # Each number of each example in turn, as +-(10**400 - 1): a float cannot hold it, and it
    # used to escape as an OverflowError from the distribution forms and the range messages.
    doc = yaml.safe_load(example.read_text("utf-8"))
    for path in _numbers(doc):
        for value in (int("9" * 400), -int("9" * 400)):
            changed = copy.deepcopy(doc)
            node = changed
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
            with contextlib.suppress(ScenarioError):
                load_mapping(changed)


def test_a_file_over_the_size_limit_is_refused_unparsed(tmp_path, monkeypatch):
    path = tmp_path / "worked.yaml"
    path.write_text(WORKED_TEXT, encoding="utf-8")
    size = path.stat().st_size
    monkeypatch.setenv("COSTMODEL_MAX_FILE_BYTES", str(size))
    assert load_documents(path)  # at the limit: read
    monkeypatch.setenv("COSTMODEL_MAX_FILE_BYTES", str(size - 1))
    monkeypatch.setattr(loader, "_parse", _never)
    with pytest.raises(ScenarioError, match=f"larger than {size - 1:,} bytes"):
        load_documents(path)
    monkeypatch.setenv("COSTMODEL_MAX_FILE_BYTES", "1MB")
    with pytest.raises(ScenarioError, match="COSTMODEL_MAX_FILE_BYTES must be a positive integer"):
        load_documents(path)


def _never(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("called")


@pytest.mark.parametrize("loader_class", ["_FAST_LOADER", "_PythonLoader"])
def test_values_are_counted_while_parsing(tmp_path, monkeypatch, loader_class):
    # twice the limit of list items: refused after the first limit's nodes, before anything is
    # built (at a limit of 2,000: the count is the same code at any limit, and the files above
    # meet the limit of 100,000 itself)
    if getattr(loader, loader_class) is None:
        pytest.skip("PyYAML without libyaml")
    monkeypatch.setattr(loader, "_FAST_LOADER", getattr(loader, loader_class))
    monkeypatch.setattr(loader, "MAX_VALUES", 2_000)
    monkeypatch.setattr(yaml.constructor.BaseConstructor, "construct_document", _never)
    path = tmp_path / "long.yaml"
    path.write_text("unknown:\n" + "- 0\n" * 4_000, encoding="utf-8")
    with pytest.raises(ScenarioError, match="more than 2,000 values"):
        load_documents(path)


def test_an_alias_bomb_in_a_mapping_is_refused():
    # A JSON body cannot alias, but a mapping built in Python can share its lists.
    level: list = [0.5] * 9
    for _ in range(9):
        level = [level] * 9
    with pytest.raises(ScenarioError, match="more than 100,000 values"):
        load_mapping({**WORKED, "utilisation": level})


@pytest.fixture
def client(tmp_path: Path):
    app = create_app({"TESTING": True, "DB": str(tmp_path / "runs.sqlite3"), "API_KEYS": ""})
    return app.test_client()


def _error(response, code: int) -> dict:
    """The body of an error response, checked to be the one error shape with ``code``."""
    assert response.status_code == code, response.data[:300]
    body = response.get_json()
    assert set(body) == {"code", "status", "message", "errors"} and body["code"] == code
    return body


@pytest.mark.parametrize("path", ["/v1/evaluate", "/v1/runs"])
def test_a_lone_surrogate_is_422_over_http(client, path):
    # JSON's "\ud800" escape decodes to a lone surrogate; it used to be a 500 on /v1/runs
    body = '{"version": 1, "name": "bad \\ud800", "buy": {"gpu": "rtx-2080-ti"}, '
    body += '"rent": {"instance": "aws/p3.8xlarge"}}'
    response = client.post(path, data=body, content_type="application/json")
    errors = _error(response, 422)["errors"]
    assert errors[0]["path"] == "name" and "surrogate" in errors[0]["message"]


@pytest.mark.parametrize(
    ("extra", "status"),
    [
        (0, 200),
        (2**20 - len(json.dumps(WORKED)), 200),  # exactly the limit of 1 MiB
        (2**20 - len(json.dumps(WORKED)) + 1, 413),
        (3 * 2**20, 413),  # was accepted: the body was cut at the limit and parsed
    ],
)
def test_a_chunked_body_over_the_limit_is_413(client, extra, status):
    # Sent chunked, a body has no Content-Length; gunicorn and the development server then
    # set wsgi.input_terminated, and werkzeug stops reading at the limit without an error.
    body = json.dumps(WORKED).encode() + b" " * extra
    response = client.post(
        "/v1/evaluate",
        input_stream=io.BytesIO(body),
        headers={"Transfer-Encoding": "chunked", "Content-Type": "application/json"},
        environ_overrides={"wsgi.input_terminated": True},
    )
    if status == 413:
        _error(response, 413)
    else:
        assert response.status_code == 200


def test_deeply_nested_json_is_400(client):
    body = '{"name": ' + "[" * 100_000 + "]" * 100_000 + "}"
    _error(client.post("/v1/evaluate", data=body, content_type="application/json"), 400)


def _at(cls: type, end: str, **fixed) -> dict:
    """Every bounded numeric input of ``cls`` at the ``end`` of its range ("low" or "high");
    an open end is approached to within 1e-9 of its span."""
    out = {}
    for f in fields(cls):
        bound = f.metadata.get("bound")
        if bound is None or f.name in fixed:
            continue
        value = getattr(bound, end)
        if end == "low" and bound.low_open:
            value += 1e-9 * (bound.high - bound.low)
        if bound.integer:
            value = int(value)
        out[f.name] = Fixed(float(value)) if f.metadata.get("dist") else value
    return {**out, **fixed}


@pytest.mark.parametrize("end", ["low", "high"])
@pytest.mark.parametrize("pricing", ["on_demand", "reserved_3y"])
@pytest.mark.parametrize("speed", ["relative_throughput", "tokens_per_s_per_gpu"])
def test_inputs_at_the_ends_of_their_ranges_give_finite_costs_without_warnings(end, pricing, speed):
    # a side gives its throughput once: in units of work, or in tokens per second
    other = {"relative_throughput": None, "tokens_per_s_per_gpu": None}
    other.pop(speed)
    b = BuyInputs(**{**_at(BuyInputs, end, depreciation="straight_line"), **other})
    plain = {"committed_instances": None, "on_demand_price_usd_per_hour": None}
    r = RentInputs(
        **{
            **_at(RentInputs, end, pricing=pricing, **(plain if pricing == "on_demand" else {})),
            **other,
        }
    )
    unit = "million_tokens" if speed == "tokens_per_s_per_gpu" else "reference_gpu_hour"
    top = _at(
        ModelInputs, end, buy=b, rent=r, samples=3, seed=1, utilisation=(0.0, 0.5, 1.0), unit=unit
    )
    top.pop("report_utilisation", None)
    m = ModelInputs(**top)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning fails the test
        result = summarise(simulate(m))
    assert np.all(np.isfinite(result.buy_tco.mean)) and np.all(np.isfinite(result.rent_tco.mean))


_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
_TREES = st.recursive(
    _SCALARS,
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=30,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=300) | _TREES.map(lambda t: yaml.safe_dump(t, allow_unicode=True)))
def test_the_yaml_loader_raises_only_scenario_errors(tmp_path, text):
    path = tmp_path / "fuzz.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        for source, data, _ in load_documents(path):
            load_mapping(data, source)
    except ScenarioError:
        pass


@settings(max_examples=100, deadline=None)
@given(tree=_TREES)
def test_scenario_shaped_fuzz_raises_only_scenario_errors(tree):
    # a valid scenario with one key replaced by anything at all
    doc = dict(WORKED)
    doc["buy"] = {**WORKED["buy"], "pue": tree}
    with contextlib.suppress(ScenarioError):
        load_mapping(doc)


@pytest.mark.skipif(loader._FAST_LOADER is None, reason="PyYAML without libyaml")
@pytest.mark.parametrize("text", ["!", "a: !", "- !\n- 3", 'a: ! "x"', "a: ! 5", "a: .nan"])
def test_a_bare_tag_reads_as_pyyaml_reads_it(text):
    # libyaml marks a "!"-tagged scalar not implicit, so "a: !" read {'a': ''} where PyYAML
    # reads {'a': None} (found by the property below)
    fast, python = (
        loader._load(cls, text)[0] for cls in (loader._FAST_LOADER, loader._PythonLoader)
    )
    assert repr(fast) == repr(python)


@pytest.mark.skipif(loader._FAST_LOADER is None, reason="PyYAML without libyaml")
@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200) | _TREES.map(lambda t: yaml.safe_dump(t, allow_unicode=True)))
def test_libyaml_parses_what_pyyaml_parses_into_the_same_data(text):
    try:
        expected = loader._load(loader._PythonLoader, text)[0]
    except (yaml.YAMLError, ValueError, RecursionError):
        return  # refused by PyYAML: read_yaml reports PyYAML's own message
    with contextlib.suppress(yaml.YAMLError):  # libyaml refuses some: then PyYAML reads them
        # compared as text, so that ".nan" (NaN, unequal to itself) counts as the same data
        assert repr(loader._load(loader._FAST_LOADER, text)[0]) == repr(expected)


def test_doubling_toward_a_target_counts_against_the_sample_limit(client):
    doc = {**WORKED, "simulation": {"samples": 1000, "seed": 1, "target_halfwidth": 0.001}}
    errors = _error(client.post("/v1/evaluate", json=doc), 422)["errors"]
    assert errors[0]["path"] == "simulation.max_samples"  # up to 1,000,000 draws by default
    doc["simulation"]["max_samples"] = 100_000
    assert client.post("/v1/evaluate", json=doc).status_code == 200
