"""Build the inference catalogs (models, serving throughput, API prices) from the reference tables.

Usage::

    python tools/build_serving.py [--reference DIR] [--out DIR] [--check]

Reads the team's sourced tables ``tools/reference/serving.csv`` (measured operating points) and
``tools/reference/api_prices.csv`` (hosted API prices), kept in the repository so the build is
reproducible from it alone, and writes ``models.csv``, ``serving.csv`` and ``api_offers.csv``
into ``pricing/data``. ``--check`` writes nothing and fails when the committed files differ.

The mapping is explicit: every model, precision, GPU, framework and provider name of the
reference tables is listed below; a name not listed stops the build, so a new reference row is
mapped on purpose. Rows whose GPU is not in the catalog, or whose precision is not a serving
precision, are left out and printed. Derived columns (the reference notes say ``DERIVED``) are
named in ``estimated_fields``; undated sources get the dates of ``UNDATED`` (data/NOTES.md).
``tests/test_serving_catalog.py`` re-runs the build and compares.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from pathlib import Path

from pricing.catalog import file_columns
from pricing.vocabulary import SERVING_PRECISIONS

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REFERENCE = REPO_ROOT / "tools" / "reference"
DEFAULT_OUT = REPO_ROOT / "pricing" / "data"

# Reference model name -> catalog model id. Llama-3-70B is measured only as a Q4_K_M GGUF, which
# is not a serving precision, so it has no rows and no model.
MODEL_IDS: dict[str, str] = {
    "Llama-3.3-70B-Instruct": "llama-3.3-70b",
    "Llama-3.1-70B-Instruct": "llama-3.1-70b",
    "Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "Llama-3-8B": "llama-3-8b",
    "Llama-3-70B": "llama-3-70b",
    "DeepSeek-R1-0528": "deepseek-r1",
    "gpt-oss-120b": "gpt-oss-120b",
    "Qwen3-235B-A22B": "qwen3-235b",
}
_HF = "https://huggingface.co/"
_PARAMS = "params_b and active_params_b as arch_source gives them"
# Catalog model id -> (layers attending to a window only, the window [tokens], source); the
# reference architecture table counts every layer as full attention.
SLIDING: dict[str, tuple[int, int, str]] = {
    "gpt-oss-120b": (
        18,
        128,
        "sliding window: alternate layers attend to the last 128 tokens (config.json "
        "layer_types, sliding_window 128): https://huggingface.co/openai/gpt-oss-120b",
    ),
}
# Catalog model id -> (name, active parameters [billions] or None, source, note).
MODELS: dict[str, tuple[str, float | None, str, str]] = {
    "llama-3.3-70b": (
        "Llama 3.3 70B Instruct",
        None,
        f"{_HF}meta-llama/Llama-3.3-70B-Instruct",
        "",
    ),
    "llama-3.1-70b": (
        "Llama 3.1 70B Instruct",
        None,
        f"{_HF}meta-llama/Llama-3.1-70B-Instruct",
        "same architecture and size as llama-3.3-70b, so its rows say what that model would do "
        "on these GPUs; kept apart because the measurements name 3.1",
    ),
    "llama-3.1-8b": ("Llama 3.1 8B Instruct", None, f"{_HF}meta-llama/Llama-3.1-8B-Instruct", ""),
    "llama-3-8b": (
        "Llama 3 8B",
        None,
        f"{_HF}meta-llama/Meta-Llama-3-8B",
        "measured only by llama.cpp at batch 1 (single stream): far below what batched serving "
        "does on the same GPU",
    ),
    "deepseek-r1": (
        "DeepSeek-R1-0528",
        37,
        f"{_HF}deepseek-ai/DeepSeek-R1-0528",
        "mixture of experts: 671B parameters, 37B active per token",
    ),
    "gpt-oss-120b": (
        "gpt-oss-120b",
        5.1,
        f"{_HF}openai/gpt-oss-120b",
        "mixture of experts: 117B parameters, 5.1B active per token; MXFP4 weights",
    ),
    "qwen3-235b": (
        "Qwen3-235B-A22B",
        22,
        f"{_HF}Qwen/Qwen3-235B-A22B",
        "mixture of experts: 235B parameters, 22B active per token",
    ),
}

# Reference precision -> serving precision; None leaves the row out.
PRECISIONS: dict[str, str | None] = {
    "FP16": "fp16",
    "F16": "fp16",
    "FP8": "fp8",
    "FP8 (doc label)": "fp8",
    "FP4": "fp4",
    "FP4 (MXFP4 weights)": "fp4",
    "Q4_K_M (4-bit GGUF)": None,  # llama.cpp's 4-bit integer k-quant, not FP4
}

# Reference GPU name -> catalog GPU id; None: the catalog (and the reference GPU table) lacks it.
# "H100" is the SXM part: the TensorRT-LLM tables name "H100 SXM 80GB (DGX H100)" and InferenceX
# runs HGX/DGX nodes.
GPUS: dict[str, str | None] = {
    "B200": "b200",
    "H200": "h200-sxm-141gb",
    "H100": "h100-sxm5-80gb",
    "MI300X": "mi300x",
    "A100-SXM4-80GB": "a100-sxm4-80gb",
    "L40S": "l40s",
    "RTX 4090 24GB": "rtx-4090",
    "RTX 3090 24GB": "rtx-3090",
    "MI355X": None,
    "MI325X": None,
    "RTX PRO 6000 Blackwell Server Edition": None,
}

# Reference framework -> the setup part of a serving row's id.
FRAMEWORKS: dict[str, str] = {
    "TensorRT-LLM": "trtllm",
    "vLLM": "vllm",
    "SGLang": "sglang",
    "Dynamo+TensorRT-LLM (disagg)": "dynamo-trtllm",
    "SGLang+MoRI (disagg)": "sglang-mori",
    "TensorRT-LLM (PyTorch backend)": "trtllm-pytorch",
    "TensorRT-LLM 0.17 (engine build)": "trtllm-0.17",
    "llama.cpp": "llama.cpp",
    "llama.cpp (layer split across 2 GPUs)": "llama.cpp-split",
}

# Reference as_of text of an undated source -> (ISO date, why, estimated).
UNDATED: dict[str, tuple[str, str, bool]] = {
    "undated doc revision (TRT-LLM 1.x); commit 03e27c7": (
        "2025-08-05",
        "as_of estimated: the doc revision is undated; the date is the earliest it can be, the "
        "day gpt-oss-120b (one of its models) was published "
        "(https://openai.com/index/introducing-gpt-oss/)",
        True,
    ),
    "undated doc revision (v1.0-era); commit 00f3768": (
        "2025-06-18",
        "as_of estimated: the doc revision is undated and marks its tables 'NEW for v1.0'; the "
        "date is the earliest it can be, the day v1.0 development began on main after the 0.21 "
        "branch was cut (https://github.com/NVIDIA/TensorRT-LLM/pull/5312)",
        True,
    ),
    "TRT-LLM v0.17 (early 2025)": (
        "2025-01-30",
        "as_of estimated: the doc revision is undated and says its data come from version 0.17; "
        "the date is that release's (https://github.com/NVIDIA/TensorRT-LLM/pull/2725)",
        True,
    ),
    "2024-05": (
        "2024-05-10",
        "as_of is the day of the commit that evidences it",
        False,
    ),
}

# Reference provider -> provider key of the API offer ids.
PROVIDERS: dict[str, str] = {
    "Anthropic": "anthropic",
    "OpenAI": "openai",
    "Google": "google",
    "DeepSeek (first-party)": "deepseek",
    "Together AI": "together",
    "Fireworks AI": "fireworks",
    "DeepInfra": "deepinfra",
    "Groq": "groq",
    "Cerebras": "cerebras",
    "Nebius": "nebius",
    "SambaNova": "sambanova",
    "Novita": "novita",
}

# Reference API model name -> catalog model id ("" when the serving rows do not measure it).
# Qwen3-235B-A22B-Instruct-2507 is a later checkpoint of the same architecture and size.
# DeepSeek-V3.2 is of the R1 family but adds sparse attention, so its throughput is not R1's.
API_MODELS: dict[str, str] = {
    "Claude Opus 4.6": "",
    "Claude Sonnet 4.6": "",
    "Claude Haiku 4.5": "",
    "Claude Opus 5": "",
    "GPT-5": "",
    "GPT-5 mini": "",
    "GPT-5.5": "",
    "Gemini 2.5 Flash": "",
    "DeepSeek-V3.2 (deepseek-chat)": "",
    "DeepSeek V4 Flash": "",
    "Llama-3.3-70B-Instruct-Turbo": "llama-3.3-70b",
    "Llama-3.3-70B-Instruct": "llama-3.3-70b",
    "Llama-3.3-70B-Instruct-Turbo (FP8)": "llama-3.3-70b",
    "Llama-3.3-70B-Instruct (BF16)": "llama-3.3-70b",
    "llama-3.3-70b-versatile": "llama-3.3-70b",
    "llama-3.3-70b": "llama-3.3-70b",
    "Meta-Llama-3.3-70B-Instruct": "llama-3.3-70b",
    "Meta-Llama-3.1-8B-Instruct-Turbo": "llama-3.1-8b",
    "Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "Meta-Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "llama-3.1-8b-instant": "llama-3.1-8b",
    "DeepSeek-R1-0528 (tput endpoint)": "deepseek-r1",
    "DeepSeek-R1-0528": "deepseek-r1",
    "Qwen3-235B-A22B": "qwen3-235b",
    "Qwen3-235B-A22B-Instruct-2507": "qwen3-235b",
    "Qwen3-235B-A22B-fp8-tput": "qwen3-235b",
    "openai/gpt-oss-120b": "gpt-oss-120b",
    "gpt-oss-120b": "gpt-oss-120b",
}
# The model slug of an offer is the last part of its LiteLLM key ("key ..." in the source); the
# one row sourced from a provider's page alone takes the key its note names.
SLUGS: dict[tuple[str, str], str] = {
    ("Fireworks AI", "Llama-3.1-8B-Instruct"): "llama-v3p1-8b-instruct"
}
# The API table's collection date, for prices whose source is an undated page snapshot.
API_COLLECTED = "2026-07-24"

_GITHUB_FILE = re.compile(
    r"\b([\w.-]+/[\w.-]+) ([\w./-]+\.(?:mdx|md|py|json|csv)) @([0-9a-f]{7,40})"
)
_LITELLM = re.compile(
    r"BerriAI/litellm model_prices_and_context_window\.json as mirrored in "
    r"RoCry/llm-api-price @([0-9a-f]{40})"
)
_BARE_DOMAIN = re.compile(r"(?<![/\w.])((?:platform\.claude\.com|fireworks\.ai)/[\w./-]*\w)")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")


def _lookup(table: dict, key: str, what: str):
    if key not in table:
        raise SystemExit(
            f"build_serving: unmapped {what} {key!r}; add it to the tables of {__file__}"
        )
    return table[key]


def cite(text: str) -> str:
    """The reference's source text with each cited file or page written as a URL."""
    text = _LITELLM.sub(
        r"https://github.com/RoCry/llm-api-price/blob/\1/model_prices_and_context_window.json "
        r"(BerriAI/litellm's price table, mirrored)",
        text,
    )
    text = _GITHUB_FILE.sub(r"https://github.com/\1/blob/\3/\2", text)
    return _BARE_DOMAIN.sub(r"https://\1", text)


def _read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [{k: (v or "").strip() for k, v in rec.items()} for rec in csv.DictReader(fh)]


def _number(text: str) -> str:
    """A number cell as written, without a trailing ``.0``."""
    return f"{float(text):g}" if text else ""


def _serving_dates(text: str) -> tuple[str, str, bool]:
    """(ISO date, note, estimated) for the reference's as_of text of a serving row."""
    if text in UNDATED:
        date, why, estimated = UNDATED[text]
        return date, f"{why} (dates before ISO conversion: {text})", estimated
    match = _ISO.match(text)
    if not match:
        raise SystemExit(f"build_serving: undated serving row {text!r}; add it to UNDATED")
    return match.group(), "" if text == match.group() else f"as_of: {text}", False


def _derived(rec: dict[str, str], total: str) -> list[str]:
    """Columns the reference says are derived, or that this build derives."""
    notes = rec["notes"]
    fields = []
    if "total_tokens_per_s_per_gpu DERIVED" in notes or "DERIVED per GPU" in notes or not total:
        fields.append("tokens_per_s_per_gpu")
    if "interactivity DERIVED" in notes and rec["interactivity_tok_s_per_user"]:
        fields.append("tokens_per_s_per_user")
    return fields


def _serving_row(rec: dict[str, str]) -> tuple[dict[str, str] | None, str]:
    """One catalog serving row, or None and why it is left out."""
    model = _lookup(MODEL_IDS, rec["model"], "model")
    precision = _lookup(PRECISIONS, rec["precision"], "precision")
    gpu = _lookup(GPUS, rec["gpu"], "GPU")
    setup = _lookup(FRAMEWORKS, rec["framework"], "framework")
    if gpu is None:
        return None, f"GPU {rec['gpu']!r} is not in the catalog nor the reference GPU table"
    if precision is None:
        return None, f"precision {rec['precision']!r} is not a serving precision"
    total, notes = rec["total_tokens_per_s_per_gpu"], [rec["notes"]]
    if not total:  # llama-bench 'tg' runs: an empty prompt, so every token is an output token
        if rec["input_tokens"] != "0":
            raise SystemExit(f"build_serving: no total throughput for {rec}")
        total = rec["output_tokens_per_s_per_gpu"]
        notes.append("tokens_per_s_per_gpu DERIVED = output tokens/s (input_tokens = 0).")
    as_of, date_note, estimated = _serving_dates(rec["as_of"])
    fields = _derived(rec, rec["total_tokens_per_s_per_gpu"]) + (["as_of"] if estimated else [])
    if rec["precision"].lower() not in SERVING_PRECISIONS:
        notes.append(f"precision as the source labels it: {rec['precision']}.")
    replica = rec["gpus_per_replica"]
    concurrency = rec["concurrency"]
    if concurrency == "max (offline)":
        concurrency = "offline"
    shape = f"{rec['input_tokens']}x{rec['output_tokens']}"
    setup += f"-{replica}gpu" if replica else ""
    row = {
        "id": f"{model}/{precision}/{gpu}/{shape}/{setup}",
        "model": model,
        "precision": precision,
        "gpu": gpu,
        "gpus_per_replica": replica,
        "framework": rec["framework"],
        "input_tokens": rec["input_tokens"],
        "output_tokens": rec["output_tokens"],
        "concurrency": concurrency,
        "tokens_per_s_per_gpu": _number(total),
        "tokens_per_s_per_user": _number(rec["interactivity_tok_s_per_user"]),
        "as_of": as_of,
        "estimated_fields": ";".join(fields),
        "source": cite(rec["source"]),
        "note": " ".join(n.strip() for n in [*notes, date_note] if n.strip()),
    }
    return row, ""


def build_serving(records: list[dict[str, str]]) -> tuple[list[dict], list[tuple[int, str]]]:
    """(serving rows, [(reference line, why left out)])."""
    rows, left_out = [], []
    for line, rec in enumerate(records, start=2):
        row, why = _serving_row(rec)
        if row is None:
            left_out.append((line, f"{rec['model']} {rec['precision']} on {rec['gpu']}: {why}"))
        else:
            rows.append(row)
    ids = [r["id"] for r in rows]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise SystemExit(f"build_serving: duplicate serving ids {duplicates}")
    return rows, left_out


def _architecture(arch: dict[str, str], model_id: str) -> dict[str, str]:
    """The architecture columns of one model from its reference row (and ``SLIDING``)."""
    mla = arch["mla_kv_dim"] not in ("", "0")
    window, size, why = SLIDING.get(model_id, (0, 0, ""))
    dense = arch["params_active_b"] == arch["params_total_b"]
    return {
        "params_b": _number(arch["params_total_b"]),
        "active_params_b": "" if dense else _number(arch["params_active_b"]),
        "layers": arch["layers"],
        "kv_heads": "" if mla else arch["kv_heads"],
        "head_dim": "" if mla else arch["head_dim"],
        "kv_dim_per_layer": arch["mla_kv_dim"] if mla else "",
        "sliding_window_layers": str(window) if window else "",
        "sliding_window": str(size) if window else "",
        "arch_source": "; ".join(t for t in (cite(arch["source"]), why) if t),
    }


def build_models(arches: list[dict[str, str]], serving: list[dict]) -> list[dict]:
    """One row per model the serving rows measure, in the order of ``MODELS``."""
    by_id = {r["model"]: r for r in arches}
    out = []
    for model_id, (name, active, source, note) in MODELS.items():
        served = {r["precision"] for r in serving if r["model"] == model_id}
        if not served:
            continue
        arch = _architecture(_lookup(by_id, model_id, "model architecture"), model_id)
        if arch["active_params_b"] != (_number(str(active)) if active is not None else ""):
            raise SystemExit(f"build_serving: {model_id}'s active parameters disagree")
        out.append(
            {
                "id": model_id,
                "name": name,
                "precisions": ";".join(p for p in SERVING_PRECISIONS if p in served),
                "source": f"{source} (model card); {_PARAMS}",
                "note": note,
                **arch,
            }
        )
    return out


def _slug(rec: dict[str, str]) -> str:
    override = SLUGS.get((rec["provider"], rec["model"]))
    if override:
        return override
    match = re.search(r"; key ([^\s;]+)", rec["source"])
    if not match:
        raise SystemExit(f"build_serving: no LiteLLM key in the source of {rec['model']!r}")
    return match.group(1).rsplit("/", 1)[-1].lower()


def _api_row(rec: dict[str, str]) -> dict[str, str]:
    provider = _lookup(PROVIDERS, rec["provider"], "provider")
    model = _lookup(API_MODELS, rec["model"], "API model")
    text = rec["as_of"]
    match = _ISO.search(text)
    as_of = match.group() if match else API_COLLECTED
    notes = [rec["notes"]]
    if rec["batch_discount"]:
        notes.append(f"Batch: {rec['batch_discount']}.")
    if not match:
        notes.append(
            f"as_of estimated: the page snapshot is undated; {as_of} is the date of the dated "
            f"price table the other rows come from (dates before ISO conversion: {text})"
        )
    elif text != as_of:
        notes.append(f"as_of: {text}")
    return {
        "id": f"{provider}/{_slug(rec)}",
        "provider": provider,
        "name": rec["model"],
        "model": model,
        "input_usd_per_mtok": _number(rec["input_usd_per_mtok"]),
        "cached_input_usd_per_mtok": _number(rec["cached_input_usd_per_mtok"]),
        "output_usd_per_mtok": _number(rec["output_usd_per_mtok"]),
        "as_of": as_of,
        "estimated_fields": "" if match else "as_of",
        "source": cite(rec["source"]),
        "note": " ".join(n.strip() for n in notes if n.strip()),
    }


def build(reference: Path) -> tuple[dict[str, str], list[tuple[int, str]]]:
    """file name -> CSV text of the three catalog files, and the serving rows left out."""
    serving_ref = _read(reference / "serving.csv")
    serving, left_out = build_serving(serving_ref)
    models = build_models(_read(reference / "model_arch.csv"), serving)
    offers = [_api_row(r) for r in _read(reference / "api_prices.csv")]
    ids = [o["id"] for o in offers]
    if len(set(ids)) != len(ids):
        raise SystemExit(f"build_serving: duplicate API offer ids in {ids}")
    tables = {"models": models, "serving": serving, "api_offers": offers}
    return {
        f"{role}.csv": _csv(file_columns(role), rows) for role, rows in tables.items()
    }, left_out


def _csv(columns: tuple[str, ...], rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _committed(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="fail when the files differ")
    args = parser.parse_args(argv)
    files, left_out = build(args.reference)
    for line, why in left_out:
        print(f"left out: serving.csv line {line}: {why}")
    if args.check:
        stale = [n for n, text in files.items() if _committed(args.out / n) != text]
        if stale:
            print(f"out of date: {', '.join(stale)} (run tools/build_serving.py)", file=sys.stderr)
            return 1
        return 0
    for name, text in files.items():
        (args.out / name).write_text(text, encoding="utf-8")
        print(f"wrote {args.out / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
