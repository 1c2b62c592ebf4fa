"""Read a model's architecture from a Hugging Face ``config.json``, and count its parameters.

:func:`read_config` reads a file and :func:`architecture` a parsed mapping. Both answer an
:class:`Architecture`: layers, query and KV heads, head dim (``head_dim``, else
``hidden_size / num_attention_heads``), the cached width of compressed attention (DeepSeek's
MLA: ``kv_lora_rank + qk_rope_head_dim``), experts and experts per token, and the layers that
attend to a sliding window only. A multimodal config's ``text_config`` is read where the top
level has no layers.

Parameters are counted for the families of :data:`COUNTED_FAMILIES` (Llama, Mistral, Mixtral,
Qwen2 and Qwen3, dense and mixture of experts), by the rule: embeddings V*h, twice when the
output projection is not tied to them; per layer h*H_q*d + 2*h*H_kv*d + H_q*d*h for attention
and 3*h*f for a gated MLP of width f (``intermediate_size``), or for a mixture-of-experts layer
3*h*f_e per expert (``moe_intermediate_size``, Mixtral's ``intermediate_size``) times the
experts (times the experts per token for the active count), plus a shared expert of
``shared_expert_intermediate_size``; layers the config keeps dense (``mlp_only_layers``,
``decoder_sparse_step``) use ``intermediate_size``. Router weights, biases and norms are not
counted (under 0.1 %). Llama 3.1 8B counts 8,029,995,008 (8.030e9). Any other family has no
count: its ``params_b`` is given by the user.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["COUNTED_FAMILIES", "Architecture", "ConfigError", "architecture", "read_config"]

#: ``model_type`` values whose parameters :func:`architecture` counts.
COUNTED_FAMILIES: tuple[str, ...] = (
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
)
#: The largest config file read [byte]; a config.json is a few kilobytes.
MAX_CONFIG_BYTES = 1024 * 1024


class ConfigError(ValueError):
    """A ``config.json`` cannot be read or lacks what is needed: ``key`` names the config key
    (``None`` for the file as a whole), ``problem`` says what is wrong."""

    def __init__(self, problem: str, key: str | None = None) -> None:
        self.problem = problem
        self.key = key
        super().__init__(f"{key}: {problem}" if key else problem)


@dataclass(frozen=True)
class Architecture:
    """What a config says of a model's shape.

    Attributes:
        family: the config's ``model_type`` (``"llama"``).
        layers: transformer layers [-]. heads: query heads [-]. kv_heads: KV heads [-], None
            for compressed attention. head_dim: width of one head [-], None for compressed
            attention. kv_dim_per_layer: values cached per token and layer of compressed
            attention (MLA) [-], else None.
        experts, experts_per_token: routed experts and those active per token [-], None for a
            dense model.
        sliding_window_layers: layers attending to a window only [-], None when none do.
        sliding_window: that window [tokens], None when no layer has one.
        params_b, active_params_b: parameters, every expert counted, and those active per
            token [billion]; None for a family :func:`architecture` does not count (and
            ``active_params_b`` None for a dense model).
    """

    family: str
    layers: int
    heads: int
    kv_heads: int | None
    head_dim: int | None
    kv_dim_per_layer: int | None
    experts: int | None
    experts_per_token: int | None
    sliding_window_layers: int | None
    sliding_window: int | None
    params_b: float | None
    active_params_b: float | None


def read_config(path: str | os.PathLike[str]) -> Architecture:
    """The :class:`Architecture` of the ``config.json`` at ``path``.

    Raises:
        ConfigError: the file cannot be read, is not a JSON object, or lacks a key needed.
    """
    try:
        if os.path.getsize(path) > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"the file is larger than {MAX_CONFIG_BYTES:,} bytes; a config.json is a few "
                "kilobytes"
            )
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read the file: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"not a JSON file: {exc}") from None
    return architecture(data)


def architecture(config: Any) -> Architecture:
    """The :class:`Architecture` of a parsed ``config.json`` (a mapping).

    Raises:
        ConfigError: not a mapping, or a key needed is missing or not a positive integer.
    """
    if not isinstance(config, Mapping):
        raise ConfigError(f"expected a JSON object, got {type(config).__name__}")
    c = _text_config(config)
    family = str(c.get("model_type") or config.get("model_type") or "")
    layers = _count(c, "num_hidden_layers")
    heads = _count(c, "num_attention_heads")
    mla = _mla_width(c)
    kv_heads = None if mla else _count(c, "num_key_value_heads", default=heads)
    head_dim = None if mla else _head_dim(c, heads)
    experts, per_token = _experts(c)
    window_layers, window = _sliding(c, family, layers)
    params = _params(c, family, layers, heads, experts, per_token)
    return Architecture(
        family=family,
        layers=layers,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        kv_dim_per_layer=mla,
        experts=experts,
        experts_per_token=per_token,
        sliding_window_layers=window_layers,
        sliding_window=window,
        params_b=None if params is None else params[0] / 1e9,
        active_params_b=None if params is None or experts is None else params[1] / 1e9,
    )


def _text_config(config: Mapping) -> Mapping:
    """The language model's part: ``text_config`` of a multimodal config without layers."""
    inner = config.get("text_config")
    if "num_hidden_layers" not in config and isinstance(inner, Mapping):
        return inner
    return config


def _count(c: Mapping, key: str, *, default: int | None = None, zero: bool = False) -> int:
    """``c[key]`` as a positive integer (or ``default`` when absent or null)."""
    value = c.get(key)
    if value is None:
        if default is None:
            raise ConfigError("is required (a positive integer)", key)
        return default
    low = 0 if zero else 1
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        kind = "a non-negative" if zero else "a positive"
        raise ConfigError(f"must be {kind} integer, got {value!r}", key)
    return value


def _head_dim(c: Mapping, heads: int) -> int:
    if c.get("head_dim") is not None:
        return _count(c, "head_dim")
    hidden = _count(c, "hidden_size")
    if hidden % heads:
        raise ConfigError(
            f"no head_dim, and hidden_size {hidden} is not a multiple of num_attention_heads "
            f"{heads}",
            "head_dim",
        )
    return hidden // heads


def _mla_width(c: Mapping) -> int | None:
    """Cached values per token and layer of multi-head latent attention, None without it."""
    if c.get("kv_lora_rank") is None:
        return None
    return _count(c, "kv_lora_rank") + _count(c, "qk_rope_head_dim")


def _experts(c: Mapping) -> tuple[int | None, int | None]:
    """(routed experts, experts per token), both None for a dense model."""
    for key in ("num_local_experts", "num_experts", "n_routed_experts"):
        if c.get(key):
            experts = _count(c, key)
            top_key = "num_experts_per_tok" if "num_experts_per_tok" in c else "experts_per_token"
            top = _count(c, top_key)
            if top > experts:
                raise ConfigError(f"must be <= {key} ({experts}), got {top}", top_key)
            return experts, top
    return None, None


def _sliding(c: Mapping, family: str, layers: int) -> tuple[int | None, int | None]:
    """(layers attending to a window only, the window [tokens]), or (None, None)."""
    window = c.get("sliding_window")
    if window is None or c.get("use_sliding_window") is False:
        return None, None
    window = _count(c, "sliding_window")
    kinds = c.get("layer_types")
    if isinstance(kinds, list) and kinds:
        count = sum(1 for k in kinds if k == "sliding_attention")
    elif family == "gemma2":  # even layers slide (transformers' Gemma2 attention)
        count = (layers + 1) // 2
    elif c.get("sliding_window_pattern"):  # Gemma 3: every pattern-th layer is global
        count = layers - layers // _count(c, "sliding_window_pattern")
    elif family.startswith("qwen"):  # layers from max_window_layers on slide
        count = layers - min(layers, _count(c, "max_window_layers", default=layers, zero=True))
    else:
        count = layers
    return (count, window) if count else (None, None)


def _params(
    c: Mapping, family: str, layers: int, heads: int, experts: int | None, per_token: int | None
) -> tuple[int, int] | None:
    """(total, active) parameters [-] by the rule of the module docstring, or None for a
    family it does not count."""
    if family not in COUNTED_FAMILIES:
        return None
    h, vocab = _count(c, "hidden_size"), _count(c, "vocab_size")
    d, kv = _head_dim(c, heads), _count(c, "num_key_value_heads", default=heads)
    tied = c.get("tie_word_embeddings", False)  # each counted family's default: untied
    embeddings = vocab * h * (1 if tied else 2)
    attention = 2 * h * heads * d + 2 * h * kv * d
    dense = 3 * h * _count(c, "intermediate_size")
    moe = _moe_layers(c, layers) if experts else set()
    total = active = embeddings + layers * attention + (layers - len(moe)) * dense
    if moe:
        f_e = _count(c, "intermediate_size" if family == "mixtral" else "moe_intermediate_size")
        shared = 3 * h * _count(c, "shared_expert_intermediate_size", default=0, zero=True)
        total += len(moe) * (3 * h * f_e * experts + shared)
        active += len(moe) * (3 * h * f_e * per_token + shared)
    return total, active


def _moe_layers(c: Mapping, layers: int) -> set[int]:
    """Indices of the layers whose MLP is a mixture of experts (Qwen's ``mlp_only_layers`` and
    ``decoder_sparse_step`` keep some dense; Mixtral has neither)."""
    dense = c.get("mlp_only_layers") or []
    if not isinstance(dense, list) or not all(isinstance(i, int) for i in dense):
        raise ConfigError(f"must be a list of layer indices, got {dense!r}", "mlp_only_layers")
    step = _count(c, "decoder_sparse_step", default=1)
    return {i for i in range(layers) if i not in dense and (i + 1) % step == 0}
