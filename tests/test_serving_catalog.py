"""The inference catalogs (models, serving throughput, API offers): the shipped data and its
build, the validators, the lookups and the serving-throughput rule (pricing.serving).

Sources are in pricing/data/NOTES.md; hand arithmetic is in the comments.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import importlib.util
import math
import shutil
from importlib import resources
from pathlib import Path
from types import MappingProxyType

import pytest

from pricing import (
    SERVING_PRECISIONS,
    CatalogError,
    Model,
    ServingPoint,
    UnknownIdError,
    load_catalog,
    read_catalog,
    tokens_per_s,
)
from pricing.errors import ServingUnavailableError
from pricing.serving import gpus_with_rows

REPO = Path(__file__).resolve().parents[1]
TOOL = REPO / "tools" / "build_serving.py"
REFERENCE = REPO / "tools" / "reference"


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def _load_tool():
    spec = importlib.util.spec_from_file_location("build_serving", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- shipped data


def test_committed_files_are_the_builds_output():
    files, _ = _load_tool().build(REFERENCE)
    data = resources.files("pricing").joinpath("data")
    for name, text in files.items():
        assert data.joinpath(name).read_text(encoding="utf-8") == text, name


def test_rows_left_out_are_the_gpus_and_precisions_the_catalog_lacks():
    _, left_out = _load_tool().build(REFERENCE)
    reasons = [why for _, why in left_out]
    # 53 reference rows: 3 on MI355X, 1 on MI325X, 1 on the RTX PRO 6000 (no specs in the
    # catalog or the reference GPU table), 3 Q4_K_M GGUF runs (not a serving precision) -> 45
    assert sum("MI355X" in r for r in reasons) == 3
    assert sum("MI325X" in r for r in reasons) == 1
    assert sum("RTX PRO 6000" in r for r in reasons) == 1
    assert sum("Q4_K_M" in r for r in reasons) == 3
    assert len(left_out) == 8


def test_the_build_refuses_a_name_it_does_not_map(tmp_path):
    shutil.copytree(REFERENCE, tmp_path, dirs_exist_ok=True)
    path = tmp_path / "serving.csv"
    path.write_text(path.read_text(encoding="utf-8").replace(",H200,", ",H20,", 1), "utf-8")
    with pytest.raises(SystemExit, match="unmapped GPU 'H20'"):
        _load_tool().build(tmp_path)


def test_catalog_sizes(cat):
    assert len(cat.models) == 30
    assert len(cat.serving) == 45
    assert len(cat.api_offers) == 111
    assert len({o.provider for o in cat.api_offers.values()}) == 13
    assert cat.version == "2026.12.05"


def test_contract_model_ids_and_offer_ids_exist(cat):
    for model in ("llama-3.3-70b", "llama-3.1-8b", "deepseek-r1", "gpt-oss-120b", "qwen3-235b"):
        assert cat.model(model).id == model
    assert cat.api_offer("together/llama-3.3-70b-instruct-turbo").model == "llama-3.3-70b"


def _iso_day(text: str) -> bool:
    return dt.date.fromisoformat(text).isoformat() == text


def test_every_row_is_sourced_dated_and_explains_its_estimates(cat):
    for point in cat.serving:
        assert "https://" in point.source, point.id
        assert _iso_day(point.as_of), point.id
        assert cat.gpu(point.gpu).id == point.gpu
        if "as_of" in point.estimated_fields:
            assert "as_of estimated" in point.note, point.id
        if "tokens_per_s_per_gpu" in point.estimated_fields:
            assert "DERIVED" in point.note, point.id
    for offer in cat.api_offers.values():
        assert "https://" in offer.source, offer.id
        assert _iso_day(offer.as_of), offer.id
        if offer.estimated_fields:
            assert "as_of estimated" in offer.note, offer.id
    for model in cat.models.values():
        assert "https://huggingface.co/" in model.source, model.id
        assert "https://" in model.arch_source, model.id
        assert "params_b: " in model.source, model.id  # the basis of the figure


def test_rows_carry_the_reference_figures(cat):
    rows = {p.id: p for p in cat.serving}
    # TensorRT-LLM perf overview, H100 TP2 1000/1000: 2,209 output tokens/s per GPU;
    # total = 2209 * (1000 + 1000) / 1000 = 4418, derived (fixed-length requests)
    h100 = rows["llama-3.3-70b/fp8/h100-sxm5-80gb/1000x1000/trtllm-pytorch-2gpu"]
    assert (h100.tokens_per_s_per_gpu, h100.gpus_per_replica, h100.offline) == (4418, 2, True)
    assert h100.estimated_fields == ("tokens_per_s_per_gpu", "as_of")
    # v0.17 table: 1,921.77 output tokens/s for the TP4 group -> / 4 = 480.44 per GPU, x 2 = 960.88
    a100 = rows["llama-3.1-70b/fp16/a100-sxm4-80gb/1000x1000/trtllm-0.17-4gpu"]
    assert a100.tokens_per_s_per_gpu == pytest.approx(1921.77 / 4 * 2, abs=0.01)
    # InferenceX measures the total; its interactivity is 1000 / median TPOT (29.1 ms) = 34.36
    vllm = rows["llama-3.3-70b/fp8/h100-sxm5-80gb/1024x1024/vllm"]
    assert (vllm.tokens_per_s_per_gpu, vllm.concurrency, vllm.gpus_per_replica) == (
        2123.1,
        64,
        None,
    )
    assert vllm.tokens_per_s_per_user == pytest.approx(1000 / 29.1, abs=0.01)
    assert vllm.estimated_fields == ("tokens_per_s_per_user",)
    # llama-bench 'tg 512' from an empty prompt: every token is an output token
    bench = rows["llama-3-8b/fp16/rtx-4090/0x512/llama.cpp-1gpu"]
    assert bench.tokens_per_s_per_gpu == bench.tokens_per_s_per_user == 54.84
    assert (bench.input_tokens, bench.concurrency, bench.as_of) == (0, 1, "2024-05-10")


def test_models_list_the_precisions_they_are_served_at(cat):
    assert cat.model("llama-3.3-70b").precisions == ("fp8", "fp4")
    assert cat.model("llama-3.1-8b").precisions == ("fp16", "fp8")
    assert cat.model("qwen3-8b").precisions == ("fp16", "fp8")  # served at, not measured
    assert cat.model("deepseek-r1").params_b == 671
    assert cat.model("deepseek-r1").active_params_b == 37
    assert cat.model("llama-3.3-70b").active_params_b is None
    # precise figures: 70,562,938,880 and 8,030,261,248 parameters (thamada/modelQuery)
    assert (cat.model("llama-3.3-70b").params_b, cat.model("llama-3.1-8b").params_b) == (
        70.56,
        8.03,
    )
    gpt = cat.model("gpt-oss-120b")
    assert (gpt.params_b, gpt.active_params_b) == (116.83, 5.13)  # OpenAI's model card


def test_the_models_span_what_teams_serve(cat):
    """At least 25 models, dense and mixtures of experts, from 1B to over 400B parameters, each
    with its architecture."""
    models = cat.models.values()
    assert len(models) >= 25
    moe = [m for m in models if m.active_params_b is not None]
    assert 8 <= len(moe) < len(models)
    assert min(m.params_b for m in models) < 2 and max(m.params_b for m in models) > 400
    for m in models:
        assert m.layers and m.kv_values_per_token, m.id
        assert (m.kv_dim_per_layer is None) == (m.kv_heads is not None), m.id


def test_architectures_carry_the_configs_values(cat):
    # Llama 3.1 8B: 32 layers x 8 KV heads x 128 -> K and V: 2 x 32 x 8 x 128 = 65,536 values
    # per token, the worked example's 65,536 B at one byte per value
    llama = cat.model("llama-3.1-8b")
    assert (llama.layers, llama.kv_heads, llama.head_dim) == (32, 8, 128)
    assert llama.kv_values_per_token == 65_536
    # DeepSeek's MLA: kv_lora_rank 512 + qk_rope_head_dim 64 = 576 per layer, x 61 = 35,136
    r1 = cat.model("deepseek-r1")
    assert (r1.kv_dim_per_layer, r1.kv_heads, r1.head_dim) == (576, None, None)
    assert r1.kv_values_per_token == 61 * 576 == 35_136
    # sliding windows: gpt-oss alternates (18 of 36 layers, 128 tokens), Gemma 3 has five local
    # layers in six (62 - 62 // 6 = 52, 1024 tokens), Mistral 7B v0.1 slides on all 32 (4096)
    ids = ("gpt-oss-120b", "gemma-3-27b", "gemma-2-9b", "mistral-7b-v0.1", "llama-3.3-70b")
    windows = {i: (cat.model(i).sliding_window_layers, cat.model(i).sliding_window) for i in ids}
    assert windows == {
        "gpt-oss-120b": (18, 128),
        "gemma-3-27b": (52, 1024),
        "gemma-2-9b": (21, 4096),
        "mistral-7b-v0.1": (32, 4096),
        "llama-3.3-70b": (None, None),
    }


def test_open_model_offers_point_to_catalog_models(cat):
    offers = cat.api_offers.values()
    assert {o.model for o in offers} == set(cat.models) - {"llama-3-8b", "qwen2.5-14b"} | {""}
    assert sum(o.model == "llama-3.3-70b" for o in offers) == 8
    assert cat.api_offer("anthropic/claude-opus-4-6").model == ""
    groq = cat.api_offer("groq/gpt-oss-120b")
    assert (groq.input_usd_per_mtok, groq.cached_input_usd_per_mtok) == (0.15, 0.075)
    assert groq.output_usd_per_mtok == 0.6
    assert cat.api_offer("together/llama-3.3-70b-instruct-turbo").cached_input_usd_per_mtok is None


def test_lookups_are_case_insensitive_and_suggest_close_ids(cat):
    assert cat.model("Llama-3.3-70B").id == "llama-3.3-70b"
    assert cat.api_offer("Together/Llama-3.3-70B-Instruct-Turbo").provider == "together"
    with pytest.raises(UnknownIdError) as info:
        cat.model("llama-3.3-70")
    assert info.value.kind == "model"
    assert info.value.close_matches[0] == "llama-3.3-70b"
    assert str(info.value).startswith("unknown model id 'llama-3.3-70'; closest: llama-3.3-70b")
    with pytest.raises(UnknownIdError, match="closest: together/llama-3.3-70b-instruct-turbo"):
        cat.api_offer("together/llama-3.3-70b-instruct")


# --------------------------------------------------------------------------- validators


@pytest.fixture
def data_dir(tmp_path):
    target = tmp_path / "data"
    with resources.as_file(resources.files("pricing").joinpath("data", "catalog.json")) as meta:
        shutil.copytree(Path(meta).parent, target)
    return target


def _rewrite(path: Path, row_id: str, changes: dict[str, str], *, copies: int = 1) -> None:
    """Set ``changes`` in the row whose first column is ``row_id``; ``copies`` > 1 repeats it."""
    with open(path, newline="", encoding="utf-8") as fh:
        header, *rows = list(csv.reader(fh))
    index = next(i for i, r in enumerate(rows) if r[0] == row_id)
    row = [changes.get(column, cell) for column, cell in zip(header, rows[index], strict=True)]
    rows[index : index + 1] = [row] * copies
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows([header, *rows])


_VLLM = "llama-3.3-70b/fp8/h100-sxm5-80gb/1024x1024/vllm"
_FIREWORKS = "fireworks/gpt-oss-120b"


@pytest.mark.parametrize(
    ("file", "key", "column", "value", "problem"),
    [
        ("serving.csv", _VLLM, "gpu", "h100", "unknown GPU id 'h100' (not in the GPU table)"),
        ("serving.csv", _VLLM, "model", "llama-70b", "unknown model id 'llama-70b'"),
        ("serving.csv", _VLLM, "precision", "int4", "unknown precision 'int4'; valid: fp16"),
        ("serving.csv", _VLLM, "tokens_per_s_per_gpu", "0", "must be > 0 [tokens/s], got 0"),
        ("serving.csv", _VLLM, "tokens_per_s_per_gpu", "fast", "'fast' is not a number"),
        ("serving.csv", _VLLM, "tokens_per_s_per_user", "-1", "must be > 0"),
        ("serving.csv", _VLLM, "input_tokens", "1024.5", "'1024.5' is not an integer"),
        ("serving.csv", _VLLM, "output_tokens", "", "is required"),
        ("serving.csv", _VLLM, "concurrency", "max", "'max' is not an integer"),
        ("serving.csv", _VLLM, "concurrency", "0", "must be >= 1 [requests], got 0"),
        ("serving.csv", _VLLM, "gpus_per_replica", "0", "must be >= 1 [GPU], got 0"),
        ("serving.csv", _VLLM, "as_of", "2025-13-01", "not an ISO date"),
        ("serving.csv", _VLLM, "estimated_fields", "speed", "unknown field 'speed'"),
        ("serving.csv", _VLLM, "source", "", "is required"),
        ("serving.csv", _VLLM, "id", _VLLM.replace("1024x1024", "2048x1024"), "id must be"),
        ("models.csv", "deepseek-r1", "params_b", "-671", "must be > 0"),
        ("models.csv", "deepseek-r1", "active_params_b", "700", "must be <= params_b (671)"),
        ("models.csv", "deepseek-r1", "precisions", "fp4;fp8", "in the order fp16, fp8, fp4"),
        ("models.csv", "deepseek-r1", "precisions", "int8", "unknown precision 'int8'"),
        ("models.csv", "deepseek-r1", "precisions", "fp8", "serving.csv measures fp8;fp4"),
        ("models.csv", "deepseek-r1", "layers", "", "is required"),
        ("models.csv", "deepseek-r1", "layers", "61.5", "'61.5' is not an integer"),
        ("models.csv", "deepseek-r1", "layers", "0", "must be >= 1 [layers], got 0"),
        ("models.csv", "deepseek-r1", "kv_heads", "128", "give one or the other"),
        ("models.csv", "deepseek-r1", "arch_source", "", "is required"),
        ("models.csv", "gpt-oss-120b", "sliding_window_layers", "40", "must be <= layers (36)"),
        ("models.csv", "gpt-oss-120b", "sliding_window", "", "go together (both or neither)"),
        ("models.csv", "gpt-oss-120b", "head_dim", "", "needs kv_heads and head_dim"),
        ("models.csv", "deepseek-r1", "id", "DeepSeek-R1", "invalid model id"),
        ("api_offers.csv", _FIREWORKS, "cached_input_usd_per_mtok", "0.2", "must be <= input"),
        ("api_offers.csv", _FIREWORKS, "output_usd_per_mtok", "-0.6", "must be >= 0"),
        ("api_offers.csv", _FIREWORKS, "model", "gpt-oss", "unknown model id 'gpt-oss'"),
        ("api_offers.csv", _FIREWORKS, "id", "together/gpt-oss-120b", "start with the provider"),
        ("api_offers.csv", _FIREWORKS, "as_of", "July 2026", "not an ISO date"),
    ],
)
def test_validators_name_file_row_and_column(data_dir, file, key, column, value, problem):
    _rewrite(data_dir / file, key, {column: value})
    with pytest.raises(CatalogError) as info:
        read_catalog(data_dir)
    err = info.value
    assert (err.file, err.column) == (file, column)
    assert err.row_id in (key, value)
    assert problem in str(err)


def test_error_message_is_one_located_line(data_dir):
    _rewrite(data_dir / "serving.csv", _VLLM, {"tokens_per_s_per_gpu": "0"})
    with pytest.raises(CatalogError) as info:
        read_catalog(data_dir)
    assert str(info.value) == (
        f"serving.csv, row {_VLLM!r}, column 'tokens_per_s_per_gpu': must be > 0 [tokens/s], got 0"
    )


def test_duplicate_rows_are_rejected(data_dir):
    _rewrite(data_dir / "serving.csv", _VLLM, {}, copies=2)
    with pytest.raises(CatalogError, match=f"row '{_VLLM}', column 'id': duplicate id"):
        read_catalog(data_dir)


def test_offline_is_the_concurrency_cell_and_excludes_a_count(data_dir):
    _rewrite(data_dir / "serving.csv", _VLLM, {"concurrency": "offline"})
    point = next(p for p in read_catalog(data_dir).serving if p.id == _VLLM)
    assert (point.offline, point.concurrency) == (True, None)
    with pytest.raises(CatalogError, match="an offline run has no concurrency"):
        dataclasses.replace(point, concurrency=64)


def test_a_catalog_without_the_files_is_reported(data_dir):
    (data_dir / "api_offers.csv").unlink()
    with pytest.raises(CatalogError, match="^api_offers.csv: file not found$"):
        read_catalog(data_dir)


# --------------------------------------------------------------------------- the lookup rule

_GPUS = ("h100-sxm5-80gb", "b200", "l40s")


def _point(gpu: str, shape: tuple[int, int], tps: float, user: float | None = None, tag: str = "a"):
    """A serving row of model 'm' at fp8, online at concurrency 8 unless ``user`` is None."""
    i, o = shape
    return ServingPoint(
        id=f"m/fp8/{gpu}/{i}x{o}/{tag}",
        model="m",
        precision="fp8",
        gpu=gpu,
        gpus_per_replica=None,
        framework="test",
        input_tokens=i,
        output_tokens=o,
        concurrency=None if user is None else 8,
        offline=user is None,
        tokens_per_s_per_gpu=tps,
        tokens_per_s_per_user=user,
        as_of="2026-01-01",
        source="hand-made",
    )


def _tiny(*points: ServingPoint):
    """The shipped catalog's GPUs with one model 'm' (fp8) and only ``points`` as serving rows."""
    model = Model("m", "M", 10, None, ("fp8",), "hand-made")
    return dataclasses.replace(
        load_catalog(), models=MappingProxyType({"m": model}), serving=tuple(points)
    )


def test_exact_shape_and_the_highest_throughput_at_it():
    tiny = _tiny(
        _point("b200", (1000, 1000), 100, tag="slow"),
        _point("b200", (1000, 1000), 150, tag="fast"),
        _point("b200", (8192, 1024), 300),
    )
    got = tokens_per_s(tiny, "m", "fp8", "b200", 1000, 1000)
    assert (got.value, got.row.id, got.shape_differs) == (150, "m/fp8/b200/1000x1000/fast", False)
    assert got.how.startswith("150 tokens/s per GPU measured at 1000 input / 1000 output tokens;")


def test_nearest_shape_wins_over_higher_throughput_elsewhere():
    tiny = _tiny(_point("b200", (1000, 1000), 100), _point("b200", (8192, 1024), 300))
    # 2000/1000: d(1000x1000) = ln 2 = 0.693; d(8192x1024) = ln 4.096 + ln 1.024 = 1.434
    got = tokens_per_s(tiny, "m", "fp8", "b200", 2000, 1000)
    assert (got.value, got.shape_differs) == (100, True)
    assert "nearest the workload's 2000 / 1000" in got.how
    # 8000/1000: d(8192x1024) = ln 1.024 + ln 1.024 = 0.047; d(1000x1000) = ln 8 = 2.079
    assert tokens_per_s(tiny, "m", "fp8", "b200", 8000, 1000).value == 300


def test_the_floor_keeps_rows_that_measure_it_and_comes_before_the_shape():
    tiny = _tiny(
        _point("b200", (1000, 1000), 150),  # offline: no interactivity measured
        _point("b200", (1000, 1000), 100, user=30),
        _point("b200", (1024, 1024), 90, user=50),
    )
    assert tokens_per_s(tiny, "m", "fp8", "b200", 1000, 1000).value == 150  # no floor: all count
    assert tokens_per_s(tiny, "m", "fp8", "b200", 1000, 1000, 20).value == 100
    assert tokens_per_s(tiny, "m", "fp8", "b200", 1000, 1000, 30).value == 100  # >= the floor
    deeper = tokens_per_s(tiny, "m", "fp8", "b200", 1000, 1000, 40)
    assert (deeper.value, deeper.shape_differs) == (90, True)  # one shape away, fast enough
    with pytest.raises(ServingUnavailableError) as info:
        tokens_per_s(tiny, "m", "fp8", "b200", 1000, 1000, 60)
    err = info.value
    assert (err.gpus, err.floor) == ((), 60)
    assert "its best measured interactivity is 50 tokens/s per user" in str(err)


def test_ties_pool_equally_near_shapes_and_keep_the_first_of_equal_throughputs():
    tiny = _tiny(
        _point("b200", (100, 1000), 100),
        _point("b200", (400, 1000), 120, tag="first"),
        _point("b200", (400, 1000), 120, tag="second"),
    )
    # 200 input tokens lie ln 2 from both 100 and 400; in floating point the two distances
    # differ by 8.9e-16, which the rule counts as a tie, so both shapes are nearest
    gap = abs(math.log(200) - math.log(100)) - abs(math.log(200) - math.log(400))
    assert 0 < abs(gap) < 1e-15
    got = tokens_per_s(tiny, "m", "fp8", "b200", 200, 1000)
    assert (got.value, got.row.id) == (120, "m/fp8/b200/400x1000/first")


def test_no_rows_names_the_gpus_that_have_them():
    tiny = _tiny(_point("b200", (1000, 1000), 100), _point("l40s", (1000, 1000), 10, user=25))
    with pytest.raises(ServingUnavailableError) as info:
        tokens_per_s(tiny, "m", "fp8", "h100-sxm5-80gb", 1000, 1000)
    err = info.value
    assert (err.model, err.precision, err.gpu, err.gpus) == (
        "m",
        "fp8",
        "h100-sxm5-80gb",
        ("b200", "l40s"),
    )
    assert str(err) == (
        "no measured operating point of 'm' at fp8 on 'h100-sxm5-80gb'; GPUs with rows: b200, l40s"
    )
    with pytest.raises(ServingUnavailableError, match="rows meeting that floor: l40s$"):
        tokens_per_s(tiny, "m", "fp8", "b200", 1000, 1000, 20)
    with pytest.raises(ServingUnavailableError, match="do not measure interactivity"):
        tokens_per_s(tiny, "m", "fp8", "b200", 1000, 1000, 20)
    with pytest.raises(ServingUnavailableError, match="at fp4 on 'b200'; no GPUs with rows$"):
        tokens_per_s(tiny, "m", "fp4", "b200", 1000, 1000)
    assert isinstance(err, CatalogError)


def test_gpus_with_rows():
    tiny = _tiny(_point("b200", (1000, 1000), 100), _point("l40s", (1000, 1000), 10, user=25))
    assert gpus_with_rows(tiny, "M", "fp8") == ("b200", "l40s")
    assert gpus_with_rows(tiny, "m", "fp8", 20) == ("l40s",)
    assert gpus_with_rows(tiny, "m", "fp8", 30) == ()
    assert gpus_with_rows(tiny, "m", "fp16") == ()


def test_a_zero_token_side_is_nearest_only_to_zero():
    tiny = _tiny(_point("b200", (0, 512), 55, user=55), _point("l40s", (1000, 1000), 10))
    exact = tokens_per_s(tiny, "m", "fp8", "b200", 0, 512)
    assert (exact.value, exact.shape_differs) == (55, False)
    # with a prompt the 0-token row is infinitely far, yet it is the GPU's only row
    far = tokens_per_s(tiny, "m", "fp8", "b200", 100, 512)
    assert (far.value, far.shape_differs) == (55, True)


@pytest.mark.parametrize(
    ("args", "error", "problem"),
    [
        (("m", "int8", "b200", 1000, 1000), UnknownIdError, "unknown precision 'int8'"),
        (("x", "fp8", "b200", 1000, 1000), UnknownIdError, "unknown model id 'x'"),
        (("m", "fp8", "h100", 1000, 1000), UnknownIdError, "unknown GPU id 'h100'"),
        (("m", "fp8", "b200", -1, 1000), CatalogError, "input_tokens must be a number >= 0"),
        (("m", "fp8", "b200", 1000, 0), CatalogError, "output_tokens must be a number >= 1"),
        (("m", "fp8", "b200", 1000, float("nan")), CatalogError, "output_tokens"),
        (("m", "fp8", "b200", 1000, 1000, 0), CatalogError, "min_tokens_per_s_per_user"),
    ],
)
def test_bad_questions_are_refused(args, error, problem):
    tiny = _tiny(_point("b200", (1000, 1000), 100))
    with pytest.raises(error, match=problem):
        tokens_per_s(tiny, *args)


def test_shipped_catalog_examples(cat):
    h100 = "h100-sxm5-80gb"
    # 1000/1000 without a floor: the offline TensorRT-LLM row at the exact shape, 4418
    exact = tokens_per_s(cat, "llama-3.3-70b", "fp8", h100, 1000, 1000)
    assert (exact.value, exact.shape_differs) == (4418, False)
    assert exact.row.source.startswith("https://github.com/NVIDIA/TensorRT-LLM/blob/03e27c7")
    # 20 tokens/s per user: the offline rows do not count; the 1024/1024 vLLM row (34.36) does
    online = tokens_per_s(cat, "llama-3.3-70b", "fp8", h100, 1000, 1000, 20)
    assert (online.value, online.row.id, online.shape_differs) == (2123.1, _VLLM, True)
    # 8192/1024: vLLM 2568 (18.18 per user) and offline TensorRT-LLM 3582; the higher wins
    assert tokens_per_s(cat, "llama-3.3-70b", "fp8", h100, 8192, 1024).value == 3582
    assert tokens_per_s(cat, "llama-3.3-70b", "fp8", h100, 8192, 1024, 15).value == 2568
    assert gpus_with_rows(cat, "llama-3.3-70b", "fp8") == (
        "b200",
        "h100-sxm5-80gb",
        "h200-sxm-141gb",
        "mi300x",
    )
    assert set(SERVING_PRECISIONS) >= {p.precision for p in cat.serving}
