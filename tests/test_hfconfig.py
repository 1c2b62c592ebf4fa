"""A model's architecture from a Hugging Face config.json (pricing.hfconfig): what it reads, the
parameter count of the counted families against hand arithmetic, and its errors; and an
inline model of a scenario naming one (``workload.model.config``).

The fixtures hold the values of published configs (tests/fixtures/hfconfig/README.md).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

import scenarios
from pricing import load_catalog
from pricing.hfconfig import ConfigError, architecture, read_config
from scenarios import ScenarioError
from tests.test_inference import WORKED

FIXTURES = Path(__file__).parent / "fixtures" / "hfconfig"


def _config(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- the reader


def test_llama_3_1_8b_counts_8_030e9():
    arch = read_config(FIXTURES / "llama-3.1-8b.json")
    assert (arch.family, arch.layers, arch.heads, arch.kv_heads) == ("llama", 32, 32, 8)
    # no head_dim in the file: hidden_size / num_attention_heads = 4096 / 32 = 128
    assert (arch.head_dim, arch.kv_dim_per_layer, arch.experts) == (128, None, None)
    assert (arch.sliding_window_layers, arch.sliding_window) == (None, None)
    # embeddings, untied: 128,256 x 4,096 x 2 = 1,050,673,152
    # per layer: attention 4,096 x 32 x 128 x 2 + 2 x 4,096 x 8 x 128 = 41,943,040
    #            MLP 3 x 4,096 x 14,336 = 176,160,768; x 32 layers = 6,979,321,856
    # in all 8,029,995,008 (8.030e9; 8,030,261,248 with the norms)
    assert arch.params_b * 1e9 == pytest.approx(8_029_995_008, abs=0.5)
    assert arch.active_params_b is None
    assert round(arch.params_b, 2) == load_catalog().model("llama-3.1-8b").params_b


def test_qwen3_moe_counts_every_expert_and_the_active_ones():
    arch = read_config(FIXTURES / "qwen3-30b-a3b.json")
    assert (arch.layers, arch.kv_heads, arch.head_dim) == (48, 4, 128)
    assert (arch.experts, arch.experts_per_token) == (128, 8)
    # embeddings 151,936 x 2,048 x 2 = 622,329,856
    # attention per layer 2 x 2,048 x 32 x 128 + 2 x 2,048 x 4 x 128 = 18,874,368; x 48
    #   = 905,969,664
    # experts per layer 3 x 2,048 x 768 x 128 = 603,979,776; x 48 = 28,991,029,248
    # total 30,519,328,768; active: 3 x 2,048 x 768 x 8 = 37,748,736 x 48 = 1,811,939,328,
    #   + 622,329,856 + 905,969,664 = 3,340,238,848
    assert arch.params_b * 1e9 == pytest.approx(30_519_328_768, abs=0.5)
    assert arch.active_params_b * 1e9 == pytest.approx(3_340_238_848, abs=0.5)
    qwen = load_catalog().model("qwen3-30b-a3b")
    assert (round(arch.params_b, 2), round(arch.active_params_b, 2)) == (
        qwen.params_b,
        qwen.active_params_b,
    )


def test_mixtral_experts_take_intermediate_size():
    arch = read_config(FIXTURES / "mixtral-8x7b.json")
    # embeddings 32,000 x 4,096 x 2 = 262,144,000; attention 41,943,040 x 32 = 1,342,177,280
    # experts 3 x 4,096 x 14,336 x 8 = 1,409,286,144 x 32 = 45,097,156,608 -> 46,701,477,888
    # active: 2 experts = 352,321,536 x 32 = 11,274,289,152 -> 12,878,610,432
    assert arch.params_b * 1e9 == pytest.approx(46_701_477_888, abs=0.5)
    assert arch.active_params_b * 1e9 == pytest.approx(12_878_610_432, abs=0.5)
    assert (arch.experts, arch.experts_per_token) == (8, 2)


def _tiny(**changes) -> dict:
    """A small Qwen2-MoE config: h 8, 2 layers, 4 heads of 2, 2 KV heads, vocab 10."""
    base = {
        "model_type": "qwen2_moe",
        "hidden_size": 8,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 10,
        "intermediate_size": 6,
        "moe_intermediate_size": 3,
        "shared_expert_intermediate_size": 5,
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "tie_word_embeddings": True,
    }
    return {**base, **changes}


def test_shared_experts_and_layers_kept_dense():
    # embeddings tied: 10 x 8 = 80; attention per layer 2 x 8 x 4 x 2 + 2 x 8 x 2 x 2 = 192
    # MoE layer: 3 x 8 x 3 x 4 = 288 routed + 3 x 8 x 5 = 120 shared; active 3 x 8 x 3 x 2 = 144
    # both layers MoE: 80 + 2 x 192 + 2 x 408 = 1,280; active 80 + 384 + 2 x 264 = 992
    arch = architecture(_tiny())
    assert arch.params_b * 1e9 == pytest.approx(1280)
    assert arch.active_params_b * 1e9 == pytest.approx(992)
    # layer 0 kept dense (3 x 8 x 6 = 144): 80 + 384 + 144 + 408 = 1,016; active 80+384+144+264
    dense_first = architecture(_tiny(mlp_only_layers=[0]))
    assert dense_first.params_b * 1e9 == pytest.approx(1016)
    assert dense_first.active_params_b * 1e9 == pytest.approx(872)
    # decoder_sparse_step 2: only layer 1 ((1 + 1) % 2 == 0) is MoE, the same count
    assert architecture(_tiny(decoder_sparse_step=2)).params_b == dense_first.params_b


@pytest.mark.parametrize(
    ("changes", "window"),
    [
        ({"model_type": "mistral", "sliding_window": 4096}, (32, 4096)),  # Mistral 7B v0.1
        ({"model_type": "qwen2", "sliding_window": 131072, "use_sliding_window": False}, None),
        (
            {
                "model_type": "qwen2",
                "sliding_window": 4096,
                "use_sliding_window": True,
                "max_window_layers": 28,
            },
            (4, 4096),
        ),  # fmt: skip
        ({"model_type": "gemma2", "sliding_window": 4096}, (16, 4096)),  # even layers of 32
        (
            {"model_type": "gemma3_text", "sliding_window": 1024, "sliding_window_pattern": 6},
            (27, 1024),
        ),  # 32 - 32 // 6 = 27  # fmt: skip
        (
            {
                "model_type": "gpt_oss",
                "sliding_window": 128,
                "layer_types": ["sliding_attention", "full_attention"] * 16,
            },
            (16, 128),
        ),  # fmt: skip
        ({"model_type": "llama", "sliding_window": None}, None),
    ],
)
def test_sliding_window_layers(changes, window):
    arch = architecture({**_config("llama-3.1-8b"), **changes})
    assert (arch.sliding_window_layers, arch.sliding_window) == (window or (None, None))


def test_compressed_attention_and_an_uncounted_family():
    deepseek = {
        "model_type": "deepseek_v3",
        "num_hidden_layers": 61,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "hidden_size": 7168,
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
        "n_routed_experts": 256,
        "num_experts_per_tok": 8,
    }
    arch = architecture(deepseek)
    assert (arch.kv_dim_per_layer, arch.kv_heads, arch.head_dim) == (512 + 64, None, None)
    assert (arch.experts, arch.experts_per_token) == (256, 8)
    assert arch.params_b is None and arch.active_params_b is None


def test_a_multimodal_config_is_read_from_its_text_config():
    text = {k: v for k, v in _config("llama-3.1-8b").items() if k != "model_type"}
    arch = architecture({"model_type": "llama4", "text_config": {**text, "model_type": "llama"}})
    assert (arch.family, arch.layers, arch.head_dim) == ("llama", 32, 128)


@pytest.mark.parametrize(
    ("config", "key", "problem"),
    [
        ([1, 2], None, "expected a JSON object, got list"),
        ({"num_attention_heads": 32}, "num_hidden_layers", "is required (a positive integer)"),
        ({"num_hidden_layers": 32, "num_attention_heads": 0}, "num_attention_heads", "positive"),
        ({"num_hidden_layers": True, "num_attention_heads": 32}, "num_hidden_layers", "True"),
        (
            {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8.5},
            "num_key_value_heads",
            "got 8.5",
        ),  # fmt: skip
        (
            {"num_hidden_layers": 2, "num_attention_heads": 3, "hidden_size": 8},
            "head_dim",
            "hidden_size 8 is not a multiple of num_attention_heads 3",
        ),  # fmt: skip
        ({**_tiny(), "num_experts_per_tok": 5}, "num_experts_per_tok", "must be <= num_experts"),
        ({**_tiny(), "mlp_only_layers": "0"}, "mlp_only_layers", "a list of layer indices"),
        ({**_tiny(), "vocab_size": None}, "vocab_size", "is required"),
    ],
)
def test_errors_name_the_key(config, key, problem):
    with pytest.raises(ConfigError) as info:
        architecture(config)
    assert info.value.key == key and problem in info.value.problem


def test_file_errors(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the file"):
        read_config(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a JSON file"):
        read_config(bad)
    big = tmp_path / "big.json"
    big.write_text(" " * (1024 * 1024 + 1), encoding="utf-8")
    with pytest.raises(ConfigError, match="larger than 1,048,576 bytes"):
        read_config(big)


# --------------------------------------------------------------------------- scenarios


def _write(tmp_path: Path, model: dict, config: dict | None = None) -> Path:
    """A scenario file (the worked inference example, its throughputs given) whose inline model
    is ``model``, with ``config`` as models/config.json beside it."""
    doc = copy.deepcopy(WORKED)
    doc["workload"]["model"] = model
    if config is not None:
        (tmp_path / "models").mkdir(exist_ok=True)
        (tmp_path / "models" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _errors(path: Path) -> dict[str, str]:
    with pytest.raises(ScenarioError) as info:
        scenarios.load_file(path)
    return {e["path"]: e["message"] for e in info.value.errors}


def test_an_inline_model_reads_its_config(tmp_path):
    model = {"name": "my moe", "config": "models/config.json"}
    scenario = scenarios.load_file(_write(tmp_path, model, _config("qwen3-30b-a3b")))
    got = scenario.document["workload"]["model"]
    assert got == {
        "name": "my moe",
        "params_b": 30.519,
        "active_params_b": 3.34,
        "layers": 48,
        "kv_heads": 4,
        "head_dim": 128,
        "arch_source": "the config.json 'models/config.json' (model_type qwen3_moe); "
        "parameters: counted from the config by the catalog's rule",
    }
    model = scenario.resolved.question.work.model
    assert (model.params_b, model.active_params_b, model.layers) == (30.519, 3.34, 48)
    assert model.kv_values_per_token == 2 * 48 * 4 * 128
    # the resolved document runs without the file, to the same key
    again = scenarios.load_mapping(scenario.document)
    assert again.key(1, 0) == scenario.key(1, 0)
    scenarios.evaluate(scenario)


def test_the_catalogs_figure_wins_and_typed_keys_win_over_the_file(tmp_path):
    path = _write(tmp_path, {"name": "Llama-3.1-8B", "config": "models/config.json"},
                  _config("llama-3.1-8b"))  # fmt: skip
    got = scenarios.load_file(path).document["workload"]["model"]
    assert got["params_b"] == 8.03  # the catalog's, not the count 8.029995
    assert "the catalog's figure for llama-3.1-8b; the config counts 8.03 B" in got["arch_source"]
    typed = {"name": "x", "config": "models/config.json", "params_b": 9, "layers": 30}
    got = scenarios.load_file(_write(tmp_path, typed)).document["workload"]["model"]
    assert (got["params_b"], got["layers"], got["kv_heads"]) == (9, 30, 8)


def test_an_uncounted_family_must_give_its_parameters(tmp_path):
    gemma = {**_config("llama-3.1-8b"), "model_type": "gemma2", "sliding_window": 4096}
    errors = _errors(_write(tmp_path, {"name": "g", "config": "models/config.json"}, gemma))
    message = errors["workload.model.params_b"]
    assert "'gemma2' config" in message and "llama, mistral, mixtral, qwen2" in message
    path = _write(tmp_path, {"name": "g", "config": "models/config.json", "params_b": 9.24})
    got = scenarios.load_file(path).document["workload"]["model"]
    assert (got["params_b"], got["sliding_window_layers"], got["sliding_window"]) == (
        9.24,
        16,
        4096,
    )


def test_config_errors_are_at_their_key_path(tmp_path):
    errors = _errors(_write(tmp_path, {"name": "m", "config": "nowhere.json"}))
    assert "nowhere.json: cannot read the file" in errors["workload.model.config"]
    broken = {"model_type": "llama", "num_hidden_layers": 32}
    errors = _errors(_write(tmp_path, {"name": "m", "config": "models/config.json"}, broken))
    assert "'num_attention_heads'" in errors["workload.model.config"]
    errors = _errors(_write(tmp_path, {"name": "m"}))
    assert "unless config names a config.json" in errors["workload.model.params_b"]
    # a request has no file to read one relative to
    doc = copy.deepcopy(WORKED)
    doc["workload"]["model"] = {"name": "m", "config": "config.json"}
    with pytest.raises(ScenarioError) as info:
        scenarios.load_mapping(doc)
    assert "relative to a scenario file" in info.value.errors[0]["message"]
    assert info.value.errors[0]["path"] == "workload.model.config"


def test_typed_architecture_keys_are_checked_together(tmp_path):
    typed = {"name": "m", "params_b": 8, "layers": 32, "kv_heads": 8}
    errors = _errors(_write(tmp_path, typed))
    assert "needs kv_heads and head_dim" in errors["workload.model.head_dim"]
    typed = {"name": "m", "params_b": 8, "active_params_b": 9}
    assert (
        "must be <= params_b (8)"
        in _errors(_write(tmp_path, typed))["workload.model.active_params_b"]
    )
    typed = {"name": "m", "params_b": 8, "layers": 32, "kv_dim_per_layer": 576}
    model = scenarios.load_file(_write(tmp_path, typed)).resolved.question.work.model
    assert model.kv_values_per_token == 32 * 576
    assert model.arch_source == "scenario: inline model 'm'"


def test_an_inline_model_without_architecture_keeps_its_document():
    doc = copy.deepcopy(WORKED)
    doc["workload"]["model"] = {"name": "my 13B", "params_b": 13}
    scenario = scenarios.load_mapping(doc)
    assert scenario.document["workload"]["model"] == {"name": "my 13B", "params_b": 13}


def test_the_json_schema_states_the_same_rule():
    import jsonschema

    from scenarios.jsonschema import scenario_json_schema

    validator = jsonschema.Draft202012Validator(scenario_json_schema())
    doc = copy.deepcopy(WORKED)
    for model, valid in [
        ({"name": "m", "params_b": 8}, True),
        ({"name": "m", "config": "config.json"}, True),
        ({"name": "m", "config": "config.json", "layers": 32, "kv_dim_per_layer": 576}, True),
        ({"name": "m"}, False),
        ({"name": "m", "params_b": None}, False),
        ({"name": "m", "params_b": 8, "layers": 0}, False),
        ({"name": "m", "params_b": 8, "head_dim": 12.5}, False),
    ]:
        doc["workload"]["model"] = model
        assert validator.is_valid(doc) == valid, model
