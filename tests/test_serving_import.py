"""The user's own serving benchmarks and where a serving row holds.

Parsers of saved benchmark results (vLLM, GuideLLM, GenAI-Perf; fixtures and their origin in
tests/fixtures/serving/README.md), the serving file (read, written, laid over the catalog with
its rows first), ``costmodel serving import`` and ``--serving``, ``COSTMODEL_SERVING``, and the
replica-size rule: a row measured on G GPUs per replica holds for builds of a multiple of G."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scenarios
from api import create_app
from cli.commands.serving import IMPORT_TOOLS
from cli.main import main
from pricing import CatalogError, apply_serving, load_catalog, read_serving, tokens_per_s
from pricing.benchmarks import TOOLS, parse, serving_rows
from pricing.errors import ServingUnavailableError
from pricing.userserving import SERVING_COLUMNS, write_serving
from scenarios.compare import CompareRequest, compare

FIXTURES = Path(__file__).parent / "fixtures" / "serving"
VLLM = FIXTURES / "vllm-openai-chat-infqps-Llama-3.1-8B-Instruct.json"
GUIDELLM = FIXTURES / "guidellm-benchmarks.json"
GENAI_PERF = FIXTURES / "genai-perf-profile_export_genai_perf.json"
H100 = "h100-sxm5-80gb"


def _rows(tool, path, **kw):
    kw = {"gpu": H100, "gpus": 1, "model": "llama-3.1-8b", "precision": "fp16", **kw}
    return serving_rows(tool, [path], load_catalog(), **kw)


def _copy(tmp_path, path, change=None, name=None):
    """A copy of the fixture ``path`` with ``change(doc)`` applied."""
    doc = json.loads(path.read_text())
    if change:
        change(doc)
    out = tmp_path / (name or path.name)
    out.write_text(json.dumps(doc))
    return out


# ---------------------------------------------------------------------------------- parsers


def test_the_command_offers_every_tool_the_parsers_read():
    assert tuple(TOOLS) == IMPORT_TOOLS


def test_a_vllm_result_becomes_one_row_per_gpu_of_its_server():
    (row,) = _rows("vllm", VLLM, gpus=2, framework="vLLM")
    # 229,711 input and 203,068 output tokens over 1,000 requests: 229.711 -> 230, 203.068 -> 203
    assert (row.input_tokens, row.output_tokens) == (230, 203)
    # total_token_throughput 14,029.44 tokens/s over 2 GPUs = 7,014.72 per GPU
    assert row.tokens_per_s_per_gpu == pytest.approx(7014.72, rel=1e-12)
    assert row.gpus_per_replica == 2
    # 1000 / median TPOT 48.84 ms = 20.475020... tokens/s per user, marked derived
    assert row.tokens_per_s_per_user == pytest.approx(1000 / 48.84, abs=1e-6)
    assert row.estimated_fields == ("tokens_per_s_per_user",)
    assert (row.ttft_ms, row.tpot_ms) == (9459.70, 48.84)
    # an infinite rate with no cap on concurrency: every request at once
    assert row.offline and row.concurrency is None
    assert row.as_of == "2025-05-22"  # from "date": "20250522-000000"
    assert row.framework == "vLLM" and row.source.startswith(VLLM.name)
    assert row.id == "llama-3.1-8b/fp16/h100-sxm5-80gb/230x203/vllm-vllm-2gpu-offline"


def test_a_vllm_run_with_a_cap_or_a_rate_says_so(tmp_path):
    capped = _copy(tmp_path, VLLM, lambda d: d.update(max_concurrency=16), "capped.json")
    (row,) = _rows("vllm", capped)
    assert row.concurrency == 16 and not row.offline
    rated = _copy(tmp_path, VLLM, lambda d: d.update(request_rate=4.0), "rated.json")
    (row,) = _rows("vllm", rated)
    assert row.concurrency is None and not row.offline and "4.0 requests/s" in row.note


def test_a_vllm_result_without_the_total_throughput_computes_it(tmp_path):
    path = _copy(tmp_path, VLLM, lambda d: d.pop("total_token_throughput"))
    (row,) = _rows("vllm", path)
    # (229,711 + 203,068) tokens / 30.85 s = 14,028.4927 tokens/s
    assert row.tokens_per_s_per_gpu == pytest.approx(432779 / 30.85, rel=1e-9)


def test_the_model_and_precision_come_from_the_file_when_it_names_them(tmp_path):
    fp8 = _copy(tmp_path, VLLM, lambda d: d.update(model_id="nvidia/Llama-3.1-8B-Instruct-FP8"))
    (row,) = serving_rows("vllm", [fp8], load_catalog(), gpu=H100, gpus=1)
    assert (row.model, row.precision) == ("llama-3.1-8b", "fp8")
    with pytest.raises(CatalogError, match=r"give --precision fp16, fp8 or fp4"):
        serving_rows("vllm", [VLLM], load_catalog(), gpu=H100, gpus=1)
    with pytest.raises(CatalogError, match=r"'ensemble', which is no catalog model id.*--model"):
        serving_rows("genai-perf", [GENAI_PERF], load_catalog(), gpu=H100, gpus=1)


def test_a_guidellm_report_gives_a_row_per_benchmark():
    (row,) = _rows("guidellm", GUIDELLM)
    # requests_per_second 1.54818... x (257.1087 + 128.0) mean tokens = 596.2178 tokens/s
    assert row.tokens_per_s_per_gpu == pytest.approx(
        1.5481806532737452 * (257.1086956521739 + 127.99999999999999), abs=1e-6
    )
    assert (row.input_tokens, row.output_tokens) == (257, 128)
    assert row.concurrency == 1 and not row.offline  # the synchronous strategy
    assert row.ttft_ms == pytest.approx(16.38054847717285)
    assert row.tokens_per_s_per_user == pytest.approx(1000 / 4.885653033852577, abs=1e-6)
    assert row.as_of == "2025-06-05"  # start_time 1749157168 s is 2025-06-05 20:59 UTC
    assert row.framework == "not stated (measured with GuideLLM)"


def test_guidellm_strategies_set_the_load(tmp_path):
    def sweep(d):
        first = d["benchmarks"][0]
        d["benchmarks"] = [
            {**first, "args": {"strategy": s}}
            for s in (
                {"type_": "concurrent", "streams": 8},
                {"type_": "throughput"},
                {"type_": "constant", "rate": 2.5},
            )
        ]

    rows = _rows("guidellm", _copy(tmp_path, GUIDELLM, sweep))
    assert [(r.concurrency, r.offline) for r in rows] == [(8, False), (None, True), (None, False)]
    assert "at 2.5 requests/s" in rows[2].note and len({r.id for r in rows}) == 3


def test_a_genai_perf_export_gives_its_concurrency_and_latencies():
    (row,) = _rows("genai-perf", GENAI_PERF)
    # request_throughput 17.2225 x (200.85 + 2,565.855) tokens = 47,649.71 tokens/s
    assert row.tokens_per_s_per_gpu == pytest.approx(17.222547659562533 * 2766.705, abs=1e-6)
    # the output part is the file's own output_token_throughput, 44,190.56
    assert pytest.approx(44190.56002502682, rel=1e-12) == 17.222547659562533 * 2565.855
    assert (row.input_tokens, row.output_tokens, row.concurrency) == (201, 2566, 100)
    assert (row.ttft_ms, row.tpot_ms) == (172.8093975, 2.1787205)
    assert row.framework == "TensorRT-LLM"  # input_config.backend tensorrtllm
    assert "modification date" in row.note  # the export holds no date


def test_genai_perf_latencies_in_nanoseconds_and_the_newer_config(tmp_path):
    def newer(d):
        d["inter_token_latency"] = {"unit": "ns", "p50": 2178720.5}
        c = d.pop("input_config")
        d["input_config"] = {"perf_analyzer": {"stimulus": {"concurrency": 64}}}
        d["input_config"]["model_names"] = c["model"]

    (row,) = _rows("genai-perf", _copy(tmp_path, GENAI_PERF, newer))
    assert row.tpot_ms == pytest.approx(2.1787205, rel=1e-12) and row.concurrency == 64


@pytest.mark.parametrize(
    ("tool", "text", "match"),
    [
        ("vllm", "{", r"row 'line 1'.*invalid JSON"),
        ("vllm", "[]", r"expected a vLLM benchmark_serving result"),
        ("vllm", '{"completed": 10}', r"total_input_tokens.*missing; is this a vLLM"),
        ("vllm", '{"completed": "ten"}', r"row 'completed'.*expected a number, got 'ten'"),
        ("guidellm", '{"benchmarks": []}', r"row 'benchmarks'.*missing or empty"),
        ("guidellm", '{"benchmarks": [{"metrics": {}}]}', r"benchmarks\[0\].metrics.prompt_"),
        ("genai-perf", '{"request_throughput": {"avg": 1}}', r"input_sequence_length.avg"),
    ],
)
def test_a_bad_result_is_an_error_at_its_key_path(tool, text, match):
    with pytest.raises(CatalogError, match=match):
        parse(tool, text, "r.json")


# ------------------------------------------------------------------------------ serving file


def test_a_serving_file_round_trips(tmp_path):
    rows = (*_rows("vllm", VLLM, framework="vLLM"), *_rows("guidellm", GUIDELLM))
    path = tmp_path / "serving.csv"
    write_serving(path, rows)
    read = read_serving(path)
    assert read == tuple(r.__class__(**{**vars(r), "file": str(path)}) for r in rows)


def _serving_csv(tmp_path, rows, header=None):
    header = header or [
        "model", "precision", "gpu", "gpus_per_replica", "framework", "input_tokens",
        "output_tokens", "concurrency", "tokens_per_s_per_gpu", "as_of", "source",
    ]  # fmt: skip
    out = io.StringIO()
    csv.writer(out).writerows([header, *rows])
    path = tmp_path / "serving.csv"
    path.write_text(out.getvalue())
    return path


_ROW = [
    "llama-3.3-70b",
    "fp8",
    H100,
    "8",
    "vLLM",
    "1000",
    "1000",
    "64",
    "1500",
    "2026-11-01",
    "lab",
]


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({3: "two"}, r"line 2', column 'gpus_per_replica': 'two' is not a whole number"),
        ({1: "int4"}, r"line 2', column 'precision'"),
        ({8: "-5"}, r"line 2', column 'tokens_per_s_per_gpu'"),
        ({9: "1st May"}, r"line 2', column 'as_of'"),
        ({4: ""}, r"line 2', column 'framework': is required"),
    ],
)
def test_a_bad_serving_row_is_named_by_file_line_and_column(tmp_path, change, match):
    row = [change.get(i, v) for i, v in enumerate(_ROW)]
    with pytest.raises(CatalogError, match=match):
        read_serving(_serving_csv(tmp_path, [row]))


def test_serving_file_errors_of_the_whole_file(tmp_path):
    with pytest.raises(CatalogError, match=r"unknown column\(s\) 'colour'; valid: id, model"):
        read_serving(_serving_csv(tmp_path, [], ["model", "colour"]))
    with pytest.raises(CatalogError, match=r"missing column\(s\): precision"):
        read_serving(_serving_csv(tmp_path, [], ["model", "gpu"]))
    with pytest.raises(CatalogError, match=r"holds no serving rows"):
        read_serving(_serving_csv(tmp_path, []))
    # two rows of the same setup: the made ids are told apart by line, a given id twice is wrong
    made = read_serving(_serving_csv(tmp_path, [_ROW, _ROW]))
    assert made[1].id == f"{made[0].id}-line3"
    header = ["id", "model", "precision", "gpu", "framework", "input_tokens", "output_tokens",
              "tokens_per_s_per_gpu", "as_of", "source"]  # fmt: skip
    given = ["llama-3.3-70b/fp8/h100-sxm5-80gb/1000x1000/mine", *_ROW[:3], "vLLM", "1000",
             "1000", "1500", "2026-11-01", "lab"]  # fmt: skip
    with pytest.raises(CatalogError, match=r"line 3', column 'id': a second .* \(first at line 2"):
        read_serving(_serving_csv(tmp_path, [given, given], header))
    with pytest.raises(CatalogError, match=r"a serving file is a .csv file"):
        read_serving(tmp_path / "serving.yaml")


def test_unknown_ids_are_named_with_the_closest(tmp_path):
    row = [*_ROW[:2], "h10", *_ROW[3:]]
    points = read_serving(_serving_csv(tmp_path, [row]))
    with pytest.raises(CatalogError, match=r"column 'gpu': unknown gpu id 'h10'; closest"):
        apply_serving(load_catalog(), points)


_CELLS = st.sampled_from(["", "1", "0", "-1", "1e3", "nan", "offline", "fp8", H100, "x", "\x00"])


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    header=st.lists(st.sampled_from([*SERVING_COLUMNS, "x"]), max_size=10),
    rows=st.lists(st.lists(_CELLS | st.text(max_size=5), max_size=10), max_size=3),
)
def test_a_serving_file_raises_only_catalog_errors(tmp_path, header, rows):
    out = io.StringIO()
    csv.writer(out).writerows([header, *rows])
    path = tmp_path / "serving.csv"
    path.write_text(out.getvalue(), encoding="utf-8", errors="surrogatepass")
    with contextlib.suppress(CatalogError):
        apply_serving(load_catalog(), read_serving(path))


# ---------------------------------------------------------------------- where a row holds


def _speed(gpus, catalog=None, shape=(1000, 1000), floor=None):
    cat = catalog or load_catalog()
    return tokens_per_s(cat, "llama-3.3-70b", "fp8", H100, *shape, floor, gpus=gpus)


def test_a_row_holds_only_where_the_gpu_count_is_a_multiple_of_its_replica():
    # H100 rows of Llama 3.3 70B fp8: 1000/1000 offline on 2 GPUs per replica (4,418) and
    # InferenceX's 1024/1024 (2,123.1) that does not state its replica size
    assert _speed(None).value == 4418 and _speed(2).value == 4418 and _speed(8).value == 4418
    one = _speed(1)  # the 2-GPU row does not hold for one GPU: the nearest that does
    assert one.value == 2123.1 and one.row.gpus_per_replica is None
    assert one.caveats == ("measured at 1024/1024 tokens", "replica size not stated")
    assert one.conditions == "replica size not stated, concurrency 64, vLLM, 1024/1024 tokens"


def test_no_row_holding_is_an_error_that_says_why():
    cat = load_catalog()
    with pytest.raises(ServingUnavailableError, match=r"measured on 4 or 8 GPUs per replica"):
        tokens_per_s(cat, "llama-3.1-70b", "fp16", "a100-sxm4-80gb", 1000, 1000, gpus=2)
    # 8 GPUs: both the 4- and the 8-GPU rows hold; the higher, 960.88 on 4 GPUs per replica
    eight = tokens_per_s(cat, "llama-3.1-70b", "fp16", "a100-sxm4-80gb", 1000, 1000, gpus=8)
    assert eight.value == 960.88 and eight.caveats == ("offline: no latency bound",)


def test_your_rows_come_before_the_catalogs_where_they_hold(tmp_path):
    # yours: 1,500 tokens/s at 8 GPUs per replica and 1024/1024, below the catalog's 4,418
    row = [*_ROW[:5], "1024", "1024", *_ROW[7:]]
    cat = apply_serving(load_catalog(), read_serving(_serving_csv(tmp_path, [row])))
    mine = _speed(8, cat)
    assert mine.value == 1500 and mine.origin == "yours" and mine.shape_differs
    assert "row llama-3.3-70b/fp8/h100-sxm5-80gb/1024x1024/vllm-8gpu-c64 of serving.csv" in mine.how
    theirs = _speed(4, cat)  # yours does not hold for 4 GPUs: the catalog's
    assert theirs.value == 4418 and theirs.origin == "measured"


def test_your_rows_widen_the_precisions_a_model_is_measured_at(tmp_path):
    row = [
        "llama-3.1-8b",
        "fp4",
        "b200",
        "1",
        "vLLM",
        "1000",
        "1000",
        "64",
        "9000",
        "2026-11-01",
        "x",
    ]
    cat = apply_serving(load_catalog(), read_serving(_serving_csv(tmp_path, [row])))
    assert cat.model("llama-3.1-8b").precisions == ("fp16", "fp8", "fp4")
    assert load_catalog().model("llama-3.1-8b").precisions == ("fp16", "fp8")
    result = compare(
        CompareRequest(utilisation=0.5, model="llama-3.1-8b", precision="fp4", samples=50), cat
    )
    b200 = [o for o in result.options if o.gpu == "b200" and o.side == "buy"]
    assert b200 and all(o.source.origin == "yours" for o in b200)


def test_compare_marks_each_options_origin_and_conditions():
    result = compare(CompareRequest(utilisation=0.5, model="llama-3.3-70b", precision="fp8",
                                    samples=50))  # fmt: skip
    one = next(o for o in result.options if o.id == "nebius/gpu-h100-sxm_1gpu-16vcpu-200gb")
    assert one.tokens_per_s_per_gpu == 2123.1  # not the 2-GPU row's 4,418
    assert one.source.origin == "measured" and "replica size not stated" in one.source.caveats
    api = next(o for o in result.options if o.side == "api")
    assert api.source.origin == "published" and api.source.caveats == ()


# ------------------------------------------------------------------------------ surfaces


def test_serving_import_then_compare_with_serving(tmp_path, capsys):
    out = tmp_path / "mine.csv"
    args = ["serving", "import", "--from", "vllm", str(VLLM), "--gpu", H100, "--gpus", "1"]
    assert main([*args, "--precision", "fp16", "--framework", "vLLM", "-o", str(out)]) == 0
    assert "wrote 1 serving row(s)" in capsys.readouterr().out
    compare_args = ["compare", "-u", "0.5", "--model", "llama-3.1-8b", "--precision", "fp16"]
    assert main([*compare_args, "--samples", "50", "--serving", str(out), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    mine = [r for r in rows if r["source_origin"] == "yours"]
    assert mine and {r["gpu"] for r in mine} == {H100}
    assert mine[0]["source_conditions"] == "1 GPU per replica, offline, vLLM, 230/203 tokens"


def test_serving_import_errors_are_one_line(tmp_path, capsys):
    args = ["serving", "import", "--from", "vllm", str(VLLM), "--gpus", "1"]
    assert main([*args, "--gpu", "h10", "-o", str(tmp_path / "s.csv")]) == 2
    assert "unknown GPU id 'h10'" in capsys.readouterr().err
    assert main([*args, "--gpu", H100, "-o", str(tmp_path / "s.txt")]) == 2
    assert "a serving file is a .csv file" in capsys.readouterr().err


def test_run_with_serving_names_your_row(tmp_path, capsys):
    # the example asks 20 tokens/s per user: a row without that measure does not count
    header = ["model", "precision", "gpu", "framework", "input_tokens", "output_tokens",
              "tokens_per_s_per_gpu", "tokens_per_s_per_user", "as_of", "source"]  # fmt: skip
    rows = [["llama-3.3-70b", "fp8", H100, "vLLM", "1000", "1000", v, u, "2026-11-01", "lab"]
            for v, u in (("9000", ""), ("1500", "25"))]  # fmt: skip
    args = ["run", "inference-70b-fp8-h100", "--samples", "50", "--format", "json"]
    assert main([*args, "--serving", str(_serving_csv(tmp_path, rows, header))]) == 0
    doc = json.loads(capsys.readouterr().out)
    found = {a["key"]: a for a in doc["assumptions"]}["buy.tokens_per_s_per_gpu"]
    assert found["value"] == 1500 and found["source"].startswith("yours (serving.csv): ")


def test_the_server_lays_costmodel_serving_over_its_catalog(tmp_path):
    path = _serving_csv(tmp_path, [_ROW])
    app = create_app({"TESTING": True, "DB": str(tmp_path / "r.sqlite3"), "SERVING": str(path)})
    body = {"utilisation": 0.5, "model": "llama-3.3-70b", "precision": "fp8", "samples": 50}
    doc = app.test_client().post("/v1/compare", json=body).get_json()
    mine = [o for o in doc["options"] if o.get("source", {}).get("origin") == "yours"]
    assert mine and all(o["gpu_count"] % 8 == 0 for o in mine)
    bad = shutil.copy(path, tmp_path / "bad.csv")
    Path(bad).write_text(path.read_text().replace(H100, "h10"))
    with pytest.raises(ValueError, match=r"^COSTMODEL_SERVING: .*unknown gpu id 'h10'"):
        create_app({"TESTING": True, "DB": str(tmp_path / "r.sqlite3"), "SERVING": str(bad)})


def _a100_doc(gpu_count):
    """Llama 3.1 70B at fp16 on ``gpu_count`` A100s, throughput from the catalog, against a
    rented 8x A100: the catalog measures it offline on 4 and on 8 GPUs per replica."""
    return {
        "version": 1,
        "name": "a100",
        "horizon_months": 36,
        "simulation": {"samples": 20},
        "workload": {
            "kind": "inference",
            "model": "llama-3.1-70b",
            "precision": "fp16",
            "input_tokens": 1000,
            "output_tokens": 1000,
        },  # fmt: skip
        "buy": {"gpu": "a100-sxm4-80gb", "gpu_count": gpu_count},
        "rent": {"instance": "lambda/gpu_8x_a100_80gb_sxm4"},
    }


def test_a_scenario_on_an_offline_row_says_so():
    result = scenarios.evaluate(_a100_doc(8))
    notes = {a.key: a for a in result.assumptions}
    assert notes["buy.tokens_per_s_per_gpu"].value == 960.88  # 4 GPUs per replica, x2
    assert (
        "4 GPUs per replica, offline (max throughput)" in notes["buy.tokens_per_s_per_gpu"].source
    )
    found = [w for w in result.warnings if w.code == "serving_conditions_differ"]
    assert [w.side for w in found] == ["buy", "rent"]
    assert "offline: no latency bound" in found[0].message


def test_a_scenario_whose_count_no_row_holds_for_is_estimated():
    # the catalog's rows are of 4 and 8 GPUs per replica: a 2-GPU build serves at the estimate
    notes = {a.key: a for a in scenarios.load_mapping(_a100_doc(2)).resolved.assumptions}
    assert notes["buy.tokens_per_s_per_gpu"].source.startswith("estimated: calibrated roofline")
    assert "buy.throughput_error" in notes


def test_a_job_worker_lays_the_servers_serving_rows_over_its_catalog(tmp_path):
    from scenarios.executor import Job, run_jobs

    points = read_serving(_serving_csv(tmp_path, [["llama-3.1-70b", "fp16", "a100-sxm4-80gb",
                                                   "2", *_ROW[4:]]]))  # fmt: skip
    doc = _a100_doc(2)  # no catalog row holds for 2 A100s; the server's 2-GPU row does
    key = scenarios.load_mapping(doc, catalog=apply_serving(load_catalog(), points)).key(20, 0)
    job = Job(key, (doc, "<request>", {}), None, 20, 0, serving=points)
    ((_, done),) = run_jobs([job], 1, None)
    speed = {a.key: a for a in done.result.assumptions}["buy.tokens_per_s_per_gpu"]
    assert speed.value == 1500 and speed.source.startswith("yours (serving.csv)")
    # without them, the document resolves to the estimate instead
    notes = {a.key: a for a in scenarios.load_mapping(doc).resolved.assumptions}
    assert notes["buy.tokens_per_s_per_gpu"].source.startswith("estimated")


def test_batch_with_serving_rests_every_document_on_your_row(tmp_path, capsys):
    out = tmp_path / "mine.csv"
    args = ["serving", "import", "--from", "vllm", str(VLLM), "--gpu", H100, "--gpus", "1"]
    assert main([*args, "--precision", "fp16", "--framework", "vLLM", "-o", str(out)]) == 0
    mine = read_serving(out)[0].tokens_per_s_per_gpu
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in (1, 2):  # two inference scenarios on 1 and 2 H100s: the 1-GPU row holds for both
        doc = {**_a100_doc(n), "name": f"h100-{n}", "buy": {"gpu": H100, "gpu_count": n},
               "rent": {"instance": "nebius/gpu-h100-sxm_1gpu-16vcpu-200gb"}}  # fmt: skip
        doc["workload"] = {**doc["workload"], "model": "llama-3.1-8b"}
        (folder / f"h100-{n}.yaml").write_text(json.dumps(doc))
    batch = ["batch", str(folder), "--workers", "1", "-q", "--format", "json"]
    db = ["--db", str(tmp_path / "runs.sqlite3")]
    assert main([*batch, "--out", str(tmp_path / "yours"), *db, "--serving", str(out)]) == 0
    assert main([*batch, "--out", str(tmp_path / "catalog"), *db]) == 0
    assert "2 scenario(s): 2 run, 0 skipped" in capsys.readouterr().out  # not the stored ones
    for n in (1, 2):
        yours, theirs = (
            {a["key"]: a for a in json.loads((tmp_path / d / f"h100-{n}.json").read_text())[
                "assumptions"]}["buy.tokens_per_s_per_gpu"]
            for d in ("yours", "catalog")
        )  # fmt: skip
        assert yours["value"] == mine and yours["source"].startswith("yours (mine.csv): ")
        assert not theirs["source"].startswith("yours")
    assert main([*batch, "--out", str(tmp_path / "bad"), *db, "--serving", str(VLLM)]) == 2
    assert "a serving file is a .csv file" in capsys.readouterr().err


def test_throughput_with_serving_answers_from_your_row(tmp_path, capsys):
    out = tmp_path / "mine.csv"
    args = ["serving", "import", "--from", "vllm", str(VLLM), "--gpu", H100, "--gpus", "1"]
    assert main([*args, "--precision", "fp16", "--framework", "vLLM", "-o", str(out)]) == 0
    row = read_serving(out)[0]
    capsys.readouterr()
    ask = ["throughput", "llama-3.1-8b", "--gpu", H100, "--gpus", "1", "--precision", "fp16"]
    ask += ["--input-tokens", "230", "--output-tokens", "203", "--format", "json"]
    assert main([*ask, "--serving", str(out)]) == 0
    (option,) = json.loads(capsys.readouterr().out)["options"]
    assert (option["origin"], option["row_id"]) == ("yours", row.id)
    assert option["tokens_per_s_per_gpu"]["p50"] == row.tokens_per_s_per_gpu
    assert main(ask) == 0  # without it, no catalog row has this shape: the estimate
    assert json.loads(capsys.readouterr().out)["options"][0]["origin"] == "estimated"
