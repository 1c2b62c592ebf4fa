"""Saved results of serving benchmarks turned into serving rows (:mod:`pricing.userserving`).

Three tools, each one run per operating point (one load on one server):

- ``vllm``: the JSON that vLLM's serving benchmark (``benchmarks/benchmark_serving.py`` or
  ``vllm bench serve``) writes with ``--save-result``: one run per file;
- ``guidellm``: GuideLLM's report (``benchmarks.json``): one run per entry of ``benchmarks``;
- ``genai-perf``: NVIDIA GenAI-Perf's ``profile_export_genai_perf.json``: one run per file.

From each run (means over the successful requests, as each tool reports them):

- the request shape: the mean input and output tokens per request, rounded to whole tokens;
- total throughput T [tokens/s, input + output, the whole server]: vLLM's
  ``total_token_throughput``; GuideLLM's requests per second (``requests_per_second``, mean)
  and GenAI-Perf's ``request_throughput`` (avg) times the mean tokens per request;
  ``tokens_per_s_per_gpu = T / gpus``, the server's GPUs (one replica of that many GPUs);
- latency: the median time to first token and per output token [ms] (vLLM's
  ``median_ttft_ms``/``median_tpot_ms``; GuideLLM's ``time_to_first_token_ms`` and
  ``time_per_output_token_ms``; GenAI-Perf's ``time_to_first_token`` and
  ``inter_token_latency`` p50), and the speed per user ``1000 / TPOT`` [tokens/s], as the
  catalog derives it (marked derived);
- the load: a fixed number of requests in flight (vLLM ``max_concurrency``, GuideLLM
  ``synchronous`` = 1 and ``concurrent`` streams, GenAI-Perf ``concurrency``), or ``offline``
  for every request sent at once (vLLM at an infinite rate without a cap, GuideLLM
  ``throughput``); a request rate leaves the concurrency not stated;
- the date of the run where the file holds one (vLLM ``date``, GuideLLM ``start_time``), else
  the file's modification date (the row's note says so);
- the model and the serving software where the file names them (``--model``, ``--framework``
  otherwise).

Every problem is a :class:`~pricing.errors.CatalogError` naming the file and the key path.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .catalog import Catalog
from .errors import CatalogError
from .importers import jsondoc
from .models import ServingPoint
from .suggest import closest, closest_hint
from .userserving import row_id
from .vocabulary import SERVING_PRECISIONS

__all__ = ["TOOLS", "Run", "parse", "serving_rows"]

#: The tools whose saved results :func:`parse` reads, and their names.
TOOLS: Mapping[str, str] = {
    "vllm": "vLLM benchmark_serving",
    "guidellm": "GuideLLM",
    "genai-perf": "GenAI-Perf",
}
#: Serving software as the tools name their backend, in the catalog's words.
_FRAMEWORKS = {
    "vllm": "vLLM",
    "tensorrtllm": "TensorRT-LLM",
    "tensorrt-llm": "TensorRT-LLM",
    "trtllm": "TensorRT-LLM",
    "sglang": "SGLang",
    "tgi": "TGI",
    "lmdeploy": "LMDeploy",
    "deepspeed-mii": "DeepSpeed-MII",
}
#: The time units GenAI-Perf has written its latencies in, to milliseconds.
_TO_MS = {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}


@dataclass(frozen=True)
class Run:
    """One benchmark run, in a serving row's terms.

    Attributes:
        where: the run's place in its file (``""`` for a file of one run, ``benchmarks[2]``).
        input_tokens, output_tokens: mean tokens per request [tokens].
        tokens_per_s: total throughput of the server [tokens/s, input + output].
        concurrency: requests in flight [requests], None when not fixed. offline: every
            request sent at once. load: the load in words.
        ttft_ms, tpot_ms: median time to first token and per output token [ms], or None.
        as_of: ISO date of the run, None when the file has none.
        model, framework: as the file names them, or None.
    """

    where: str
    input_tokens: float
    output_tokens: float
    tokens_per_s: float
    concurrency: int | None
    offline: bool
    load: str
    ttft_ms: float | None
    tpot_ms: float | None
    as_of: str | None
    model: str | None
    framework: str | None


class _Doc:
    """A decoded JSON document with located lookups."""

    def __init__(self, data: Any, file: str, tool: str) -> None:
        self.data, self.file, self.tool = data, file, tool

    def error(self, where: str, problem: str) -> CatalogError:
        return CatalogError(problem, file=self.file, row_id=where or None)

    def get(self, node: Any, path: str, where: str = "") -> Any:
        """The value at the dotted ``path`` below ``node`` (``where`` is the node's place);
        None when a key is missing."""
        for key in path.split("."):
            if not isinstance(node, Mapping) or key not in node:
                return None
            node = node[key]
        return node

    def number(self, node: Any, path: str, where: str = "", required: bool = True) -> float | None:
        """The finite number at ``path`` (positive when ``required``), else an error naming
        the key path and the tool."""
        value = self.get(node, path)
        at = f"{where}.{path}" if where else path
        if value is None and not required:
            return None
        if value is None:
            raise self.error(at, f"missing; is this a {TOOLS[self.tool]} result?")
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise self.error(at, f"expected a number, got {value!r}")
        if required and value <= 0:
            raise self.error(at, f"expected a positive number, got {value!r}")
        return float(value)


def _load(doc: _Doc) -> Mapping[str, Any]:
    return jsondoc.mapping(doc.data, doc.file, "top level", f"a {TOOLS[doc.tool]} result")


def _framework(name: Any) -> str | None:
    if not isinstance(name, str) or not name:
        return None
    return _FRAMEWORKS.get(name.lower())


def _vllm(doc: _Doc) -> list[Run]:
    d = _load(doc)
    completed = doc.number(d, "completed")
    total = doc.number(d, "total_token_throughput", required=False)
    if total is None:  # results saved before the key existed
        tokens = doc.number(d, "total_input_tokens") + doc.number(d, "total_output_tokens")
        total = tokens / doc.number(d, "duration")
    cap, rate = d.get("max_concurrency"), d.get("request_rate", "inf")
    if cap is not None:
        concurrency, offline = int(doc.number(d, "max_concurrency")), False
        load = f"max concurrency {concurrency}"
    else:
        concurrency, offline = None, rate in ("inf", math.inf, None)
        load = "every request at once (request rate inf)" if offline else f"{rate} requests/s"
    stamp = d.get("date")
    day = re.fullmatch(r"(\d{4})(\d{2})(\d{2})-\d{6}", stamp) if isinstance(stamp, str) else None
    return [
        Run(
            where="",
            input_tokens=doc.number(d, "total_input_tokens") / completed,
            output_tokens=doc.number(d, "total_output_tokens") / completed,
            tokens_per_s=total,
            concurrency=concurrency,
            offline=offline,
            load=load,
            ttft_ms=doc.number(d, "median_ttft_ms", required=False),
            tpot_ms=doc.number(d, "median_tpot_ms", required=False),
            as_of="-".join(day.groups()) if day else None,
            model=d.get("model_id") if isinstance(d.get("model_id"), str) else None,
            framework=_framework(d.get("backend")),
        )
    ]


def _guidellm_load(doc: _Doc, b: Mapping, where: str) -> tuple[int | None, bool, str]:
    """(concurrency, offline, load in words) of one GuideLLM benchmark's strategy."""
    strategy = doc.get(b, "config.strategy") or doc.get(b, "args.strategy") or {}
    kind = strategy.get("type_") if isinstance(strategy, Mapping) else None
    if kind == "synchronous":
        return 1, False, "synchronous (one request at a time)"
    if kind == "concurrent":
        streams = int(doc.number(strategy, "streams", f"{where}.strategy"))
        return streams, False, f"{streams} concurrent streams"
    if kind == "throughput":
        return None, True, "throughput (every request at once)"
    rate = strategy.get("rate") if isinstance(strategy, Mapping) else None
    return (
        None,
        False,
        f"{kind or 'unknown'} strategy"
        + (f" at {rate:g} requests/s" if isinstance(rate, int | float) else ""),
    )


def _guidellm_run(doc: _Doc, b: Mapping, where: str, model: Any) -> Run:
    def stat(name: str, s: str, required: bool = True) -> float | None:
        return doc.number(b, f"metrics.{name}.successful.{s}", where, required)

    concurrency, offline, load = _guidellm_load(doc, b, where)
    start = doc.number(b, "start_time", where, required=False)
    inputs, outputs = stat("prompt_token_count", "mean"), stat("output_token_count", "mean")
    day = dt.datetime.fromtimestamp(start, dt.UTC).date().isoformat() if start else None
    return Run(
        where=where,
        input_tokens=inputs,
        output_tokens=outputs,
        tokens_per_s=stat("requests_per_second", "mean") * (inputs + outputs),
        concurrency=concurrency,
        offline=offline,
        load=load,
        ttft_ms=stat("time_to_first_token_ms", "median", False),
        tpot_ms=stat("time_per_output_token_ms", "median", False),
        as_of=day,
        model=model or doc.get(b, "worker.backend_model"),
        framework=None,
    )


def _guidellm(doc: _Doc) -> list[Run]:
    d = _load(doc)
    benchmarks = d.get("benchmarks")
    if not isinstance(benchmarks, list) or not benchmarks:
        raise doc.error("benchmarks", "missing or empty; is this a GuideLLM report?")
    model = doc.get(d, "config.model")
    return [
        _guidellm_run(
            doc,
            jsondoc.mapping(b, doc.file, f"benchmarks[{i}]", "a benchmark"),
            f"benchmarks[{i}]",
            model,
        )
        for i, b in enumerate(benchmarks)
    ]


def _latency_ms(doc: _Doc, d: Mapping, name: str) -> float | None:
    """GenAI-Perf's p50 of ``name`` in milliseconds, from the unit the file states."""
    if d.get(name) is None:
        return None
    unit = doc.get(d, f"{name}.unit")
    if unit not in _TO_MS:
        raise doc.error(
            f"{name}.unit", f"unknown time unit {unit!r}; expected one of {', '.join(_TO_MS)}"
        )
    return doc.number(d, f"{name}.p50") * _TO_MS[unit]


def _genai_perf(doc: _Doc) -> list[Run]:
    d = _load(doc)
    config = doc.get(d, "input_config") or {}
    inputs = doc.number(d, "input_sequence_length.avg")
    outputs = doc.number(d, "output_sequence_length.avg")
    fixed = doc.get(config, "concurrency") or doc.get(config, "perf_analyzer.stimulus.concurrency")
    rate = doc.get(config, "request_rate") or doc.get(config, "perf_analyzer.stimulus.request_rate")
    concurrency = int(fixed) if isinstance(fixed, int) and not rate else None
    names = doc.get(config, "model") or doc.get(config, "model_names") or []
    backend = doc.get(config, "backend") or doc.get(config, "endpoint.backend")
    return [
        Run(
            where="",
            input_tokens=inputs,
            output_tokens=outputs,
            tokens_per_s=doc.number(d, "request_throughput.avg") * (inputs + outputs),
            concurrency=concurrency,
            offline=False,
            load=f"concurrency {concurrency}" if concurrency else f"request rate {rate}",
            ttft_ms=_latency_ms(doc, d, "time_to_first_token"),
            tpot_ms=_latency_ms(doc, d, "inter_token_latency"),
            as_of=None,
            model=names[0] if isinstance(names, list) and names else None,
            framework=_framework(backend),
        )
    ]


_PARSERS = {"vllm": _vllm, "guidellm": _guidellm, "genai-perf": _genai_perf}


def parse(tool: str, text: str, file: str) -> list[Run]:
    """The runs of one saved result of ``tool`` (a key of :data:`TOOLS`), from its ``text``.

    Raises:
        CatalogError: invalid JSON, or a key the tool writes missing or malformed (the file and
            the key path named).
    """
    return _PARSERS[tool](_Doc(jsondoc.load(text, file), file, tool))


@dataclass(frozen=True)
class _Setting:
    """What the user says of the runs: the catalog ids, the server's GPUs, the framework."""

    model: str
    precision: str
    gpu: str
    gpus: int
    framework: str | None


#: Words of a model's name that are no part of its catalog id.
_SUFFIXES = re.compile(r"-(instruct|chat|it|hf|fp8|fp4|nvfp4|fp16|bf16|dynamic|static)(?=-|$)")
#: Words of a model's name that say its precision.
_PRECISION_WORDS = {"fp8": "fp8", "fp4": "fp4", "nvfp4": "fp4", "fp16": "fp16", "bf16": "fp16"}


def _model_id(name: str | None, catalog: Catalog, where: str, file: str) -> str:
    """The catalog id of a model as a benchmark names it (``meta-llama/Llama-3.1-8B-Instruct``
    is ``llama-3.1-8b``): the name's last part, lowercased, without the words that are no part
    of an id (instruct, chat, a precision); an error naming the closest ids otherwise."""
    if not name:
        raise CatalogError("the file does not name the model; give --model", file=file)
    slug = _SUFFIXES.sub("", name.rsplit("/", 1)[-1].lower())
    if slug in catalog.models:
        return slug
    hint = closest_hint(closest(slug, sorted(catalog.models)))
    raise CatalogError(
        f"names the model {name!r}, which is no catalog model id{hint}; give --model",
        file=file,
        row_id=where or None,
    )


def _precision(name: str | None, file: str) -> str:
    """The precision a model's name states (``...-FP8``), else an error asking for it."""
    words = re.split(r"[^a-z0-9]+", (name or "").lower())
    found = {_PRECISION_WORDS[w] for w in words if w in _PRECISION_WORDS}
    if len(found) != 1:
        raise CatalogError(
            "the file does not say the precision the model was served at; give --precision "
            "fp16, fp8 or fp4",
            file=file,
        )
    return found.pop()


def _row(run: Run, tool: str, file: str, s: _Setting, modified: str) -> ServingPoint:
    """The serving row of one run, with the model and precision the file or ``s`` names."""
    shape = (round(run.input_tokens), max(1, round(run.output_tokens)))
    framework = s.framework or run.framework or f"not stated (measured with {TOOLS[tool]})"
    load = "offline" if run.offline else f"c{run.concurrency}" if run.concurrency else "rate"
    named = s.framework or run.framework or "unknown"
    setup = f"{tool}-{named}-{s.gpus}gpu-{load}{run.where and '-' + run.where}"
    derived = run.tpot_ms is not None
    note = (
        f"imported from {Path(file).name}{run.where and ' ' + run.where} ({TOOLS[tool]}): "
        f"{run.load}; mean {run.input_tokens:.1f} input / {run.output_tokens:.1f} output tokens "
        f"per request; {run.tokens_per_s:.1f} tokens/s on {s.gpus} GPU(s)"
        + ("; tokens/s per user = 1000 / median TPOT" if derived else "")
        + ("" if run.as_of else f"; dated by the file's modification date {modified}")
    )
    return ServingPoint(
        id=row_id(s.model, s.precision, s.gpu, shape, setup),
        model=s.model,
        precision=s.precision,
        gpu=s.gpu,
        gpus_per_replica=s.gpus,
        framework=framework,
        input_tokens=shape[0],
        output_tokens=shape[1],
        concurrency=run.concurrency,
        offline=run.offline,
        tokens_per_s_per_gpu=round(run.tokens_per_s / s.gpus, 6),
        tokens_per_s_per_user=round(1000 / run.tpot_ms, 6) if derived else None,
        as_of=run.as_of or modified,
        source=f"{Path(file).name} ({TOOLS[tool]} result)",
        note=note,
        estimated_fields=("tokens_per_s_per_user",) if derived else (),
        ttft_ms=run.ttft_ms,
        tpot_ms=run.tpot_ms,
    )


def _read(path: str | os.PathLike[str]) -> tuple[str, str, str]:
    """(file, text, modification date) of a saved result."""
    file = os.fspath(path)
    try:
        text = Path(file).read_text(encoding="utf-8-sig")
        return file, text, dt.date.fromtimestamp(os.stat(file).st_mtime).isoformat()
    except FileNotFoundError:
        raise CatalogError("file not found", file=file) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"cannot read the file: {exc}", file=file) from None


def serving_rows(
    tool: str,
    files: Sequence[str | os.PathLike[str]],
    catalog: Catalog,
    *,
    gpu: str,
    gpus: int,
    model: str | None = None,
    precision: str | None = None,
    framework: str | None = None,
) -> tuple[ServingPoint, ...]:
    """The serving rows of the saved results ``files`` of ``tool``, each run measured on a
    server of ``gpus`` ``gpu`` GPUs (one replica) serving catalog ``model`` at ``precision``
    (default: as each file names them, :func:`_model_id` and :func:`_precision`).

    Raises:
        CatalogError: an unknown GPU or model id (the closest named), a file that cannot be read
            or parsed, a model or precision neither given nor named, or a row out of the
            catalog's ranges (the file and the place named).
    """
    gpu_id = catalog.gpu(gpu).id
    model_id = model and catalog.model(model).id
    if precision is not None and precision not in SERVING_PRECISIONS:
        raise CatalogError(
            f"unknown precision {precision!r}; valid: {', '.join(SERVING_PRECISIONS)}"
        )
    rows: list[ServingPoint] = []
    for path in files:
        file, text, modified = _read(path)
        for run in parse(tool, text, file):
            setting = _Setting(
                model_id or _model_id(run.model, catalog, run.where, file),
                precision or _precision(run.model, file),
                gpu_id,
                gpus,
                framework,
            )
            try:
                row = _row(run, tool, file, setting, modified)
            except CatalogError as exc:
                raise exc.located(file=file, row_id=run.where or None) from None
            taken = {r.id for r in rows}
            base, n = row.id, 2
            while row.id in taken:  # the same operating point measured again: keep both
                row, n = dataclasses.replace(row, id=f"{base}-{n}"), n + 1
            rows.append(row)
    return tuple(rows)
