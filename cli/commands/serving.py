"""``costmodel serving``: your own serving measurements. ``import`` turns the saved results of
a serving benchmark (vLLM, GuideLLM, GenAI-Perf) into a serving file that ``--serving`` lays
over the catalog's measurements."""

from __future__ import annotations

import argparse

from cli.common import check_output
from cli.options import bounded_int, command

__all__ = ["add_parser", "execute"]

#: The tools of ``import --from`` (pricing.benchmarks.TOOLS, kept here so that ``--help``
#: imports nothing; tests/test_serving_import.py checks that the two agree).
IMPORT_TOOLS = ("vllm", "guidellm", "genai-perf")


def _add_import(sub) -> None:
    p = command(
        sub,
        "import",
        help="write a serving file from saved benchmark results",
        description="Read the saved results of a serving benchmark run on one server (vLLM's "
        "benchmark_serving --save-result JSON, GuideLLM's benchmarks.json, GenAI-Perf's "
        "profile_export_genai_perf.json) and write one serving row per run: the request "
        "shape, the concurrency, tokens/s per GPU (the server's total over --gpus), the "
        "median TTFT and TPOT and the speed per user, with the file as source (see "
        "docs/serving-benchmarks.md). Give the result to run, plan or compare with --serving.",
        examples=(
            "costmodel serving import --from vllm r.json --gpu h100-sxm5-80gb --gpus 2 "
            "--precision fp8 -o s.csv",
            "costmodel serving import --from guidellm b.json --gpu l40s --gpus 1 "
            "--model llama-3.1-8b -o s.csv",
            "costmodel compare -u 0.6 --model llama-3.3-70b --serving s.csv",
        ),
    )
    p.add_argument("--from", dest="tool", required=True, choices=IMPORT_TOOLS,
                   help="the tool that saved the files")  # fmt: skip
    p.add_argument("paths", nargs="+", metavar="FILE", help="the saved results to read")
    p.add_argument("--gpu", required=True, metavar="ID", help="catalog GPU id of the server")
    p.add_argument("--gpus", required=True, type=bounded_int("--gpus", 1, 1024), metavar="N",
                   help="GPUs of the server (one replica over N GPUs)")  # fmt: skip
    p.add_argument("--model", metavar="M",
                   help="catalog model id (default: the model the file names)")  # fmt: skip
    p.add_argument("--precision", metavar="P",
                   help="fp16, fp8 or fp4 (default: as the model's name says)")  # fmt: skip
    p.add_argument("--framework", metavar="NAME",
                   help="the serving software (default: as the file names it)")  # fmt: skip
    p.add_argument("-o", "--output", required=True, metavar="SERVING",
                   help="the serving file to write (.csv)")  # fmt: skip


def add_parser(sub) -> None:
    p = command(
        sub,
        "serving",
        help="import your own serving benchmarks",
        description="Your own measurements of serving throughput: 'import' writes a serving "
        "file (--serving) from saved benchmark results. Its rows come before the catalog's.",
        examples=(
            "costmodel serving import --from vllm r.json --gpu h100-sxm5-80gb --gpus 2 -o s.csv",
        ),
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION", help="import")
    _add_import(actions)
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    from cli.common import UsageError
    from pricing import load_catalog
    from pricing.benchmarks import serving_rows
    from pricing.userserving import write_serving

    if not args.output.lower().endswith(".csv"):
        raise UsageError(f"{args.output}: a serving file is a .csv file")
    check_output(args.output, "csv", args.paths)
    rows = serving_rows(
        args.tool,
        args.paths,
        load_catalog(),
        gpu=args.gpu,
        gpus=args.gpus,
        model=args.model,
        precision=args.precision and args.precision.lower(),
        framework=args.framework,
    )
    write_serving(args.output, rows)
    for r in rows:
        user = "" if r.tokens_per_s_per_user is None else f", {r.tokens_per_s_per_user:,.1f}/user"
        print(f"{r.id}: {r.tokens_per_s_per_gpu:,.1f} tokens/s per GPU{user}")
    print(f"wrote {len(rows)} serving row(s) to {args.output}")
    return 0
