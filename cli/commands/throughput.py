"""``costmodel throughput``: how many tokens per second each GPU serves of a model, measured
where the catalog measures it and estimated from the architecture and the GPU's specifications
elsewhere, with the estimate's error; ``--calibration`` shows the estimate's calibration."""

from __future__ import annotations

import argparse
import json
import sys

from cli.common import UsageError, catalog, print_rendered
from cli.options import SERVING_FLAGS, add_format, add_serving, add_serving_request, command

__all__ = ["add_parser", "execute"]

#: The option that sets each key of a question, to name it in an error.
_FLAGS = {
    **SERVING_FLAGS,
    "concurrency": "--concurrency",
    "gpus": "--gpus",
    "params_b": "--params-b",
}


def add_parser(sub) -> None:
    p = command(
        sub,
        "throughput",
        help="tokens/s per GPU of a model on every GPU, measured or estimated with its error",
        description="Serving throughput of a catalog model on each GPU (or those named) at "
        "each of its catalog builds (or --gpus N): a catalog measurement where one holds "
        "(same request shape, a replica size dividing N), else an estimate from the model's "
        "architecture and the GPU's memory, bandwidth and tensor rate, calibrated on the "
        "catalog's measurements, with P10-P90 from its leave-one-out error. Each option shows "
        "the replica size G and batch chosen (the most tokens/s per GPU meeting the targets), "
        "the per-user speed, the time to first token and per output token, and whether a "
        "decode step is memory- or compute-bound. Builds that cannot hold the model or meet "
        "the targets are left out and listed. See docs/model.md (serving estimate).",
        examples=(
            "costmodel throughput llama-3.3-70b --precision fp8",
            "costmodel throughput llama-3.1-8b --gpu l40s --gpus 1 --min-tokens-per-s-per-user 30",
            "costmodel throughput deepseek-r1 --gpu h200-sxm-141gb --gpus 8 --max-tpot-ms 50",
            "costmodel throughput llama-3.3-70b --gpu h100-sxm5-80gb --format json",
            "costmodel throughput --calibration",
        ),
    )
    p.add_argument("model", nargs="?", metavar="MODEL", help="a catalog model id")
    p.add_argument(
        "--calibration",
        action="store_true",
        help="show the estimate's calibration and each measured row's error",
    )
    p.add_argument("--gpu", action="append", metavar="ID", help="a catalog GPU id (repeatable)")
    p.add_argument("--gpus", type=int, metavar="N", help="GPUs per build (default: each tier)")
    p.add_argument("--precision", metavar="P", help="fp16, fp8 or fp4 (default: the catalog's)")
    add_serving_request(
        p,
        shape="{side} tokens per request (default 1,000)",
        floor="serve each request at least S output tokens/s",
        ceiling="time {what} ceiling",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        metavar="C",
        help="requests in flight on the whole build (default: as many as fit)",
    )
    p.add_argument(
        "--params-b",
        type=float,
        metavar="P",
        help="parameters [billions] in place of the catalog's count",
    )
    p.add_argument(
        "--estimate",
        action="store_true",
        help="estimate every build, also where a catalog measurement holds",
    )
    p.add_argument(
        "--chart",
        metavar="FILE",
        help="also draw tokens/s per GPU against per-user speed, one curve per GPU (.png, .svg)",
    )
    add_serving(p)
    add_format(p, ("table", "json"), "table for people (default) or json", default="table")
    p.set_defaults(func=execute)


def _question(args: argparse.Namespace):
    from pricing.estimate import Targets
    from pricing.serving_options import Question

    if not args.model:
        raise UsageError("name a MODEL (a catalog model id), or ask for --calibration")
    targets = Targets(args.min_tokens_per_s_per_user, args.max_tpot_ms, args.max_ttft_ms)
    given = {
        "precision": args.precision and args.precision.strip().casefold(),
        "input_tokens": args.input_tokens,
        "output_tokens": args.output_tokens,
        "gpu_count": args.gpus,
        "concurrency": args.concurrency,
        "params_b": args.params_b,
    }
    return Question(
        model=args.model.strip(),
        gpus=tuple(g.strip() for g in args.gpu or ()),
        targets=targets,
        estimate_only=args.estimate,
        **{k: v for k, v in given.items() if v is not None},
    )


def execute(args: argparse.Namespace) -> int:
    from pricing import CatalogError
    from pricing.calibration import published
    from pricing.serving_options import answer, calibration_report, to_dict

    if args.calibration:
        fit = published()
        if args.format == "json":
            _write(calibration_report(fit))
        else:
            print_rendered(lambda console: _print_calibration(fit, console))
        return 0
    try:
        market = catalog(None, args.serving)
        result = answer(_question(args), market)
    except CatalogError as exc:
        key = str(exc).split(" ", 1)[0]
        raise UsageError(
            _FLAGS[key] + str(exc)[len(key) :] if key in _FLAGS else str(exc)
        ) from None
    if not result.options:
        reasons = "; ".join(f"{x.gpu} x{x.gpus}: {_left(x)}" for x in result.left_out)
        raise UsageError(f"no GPU can serve {result.model} as asked: {reasons}")
    if args.chart:
        _chart(args, result, market)
    if args.format == "json":
        _write(to_dict(result))
    else:
        print_rendered(lambda console: _print_answer(result, console))
    return 0


def _write(doc: dict) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, allow_nan=False) + "\n")


def _left(x) -> str:
    """Why a build is left out, with the best it can do."""
    if x.best is None:
        return x.reason
    b = x.best
    return (
        f"{x.reason} (best: {b.tokens_per_s_per_user:.1f} tokens/s per user, TTFT "
        f"{b.ttft_ms:.0f} ms, TPOT {b.tpot_ms:.1f} ms at G = {b.gpus_per_replica})"
    )


def _cell(x, spec: str) -> str:
    return "—" if x is None else format(x, spec)


def _print_answer(a, console) -> None:
    from cli.tables import Column, fitted_table

    o = a.options
    console.print(
        f"{a.model} at {a.precision}, {a.input_tokens:,} input / {a.output_tokens:,} "
        "output tokens per request: tokens/s per GPU",
        style="bold",
        highlight=False,
    )
    columns = [
        Column("GPU", [x.gpu for x in o], numeric=False),
        Column("N", [str(x.gpus) for x in o]),
        Column("P50", [f"{x.p50:,.0f}" for x in o]),
        Column("P10–P90", [f"{x.p10:,.0f}–{x.p90:,.0f}" for x in o], priority=1),
        Column("origin", [x.origin for x in o], numeric=False),
        Column("per user", [_cell(x.tokens_per_s_per_user, ".1f") for x in o], priority=1),
        Column("TTFT ms", [_cell(x.ttft_ms, ",.0f") for x in o], priority=2),
        Column("TPOT ms", [_cell(x.tpot_ms, ".1f") for x in o], priority=2),
        Column("G", [_cell(x.gpus_per_replica, "d") for x in o], priority=1),
        Column("batch", [_cell(x.batch, ",.4g") for x in o], priority=3),
        Column("bound", [x.bound or "—" for x in o], numeric=False, priority=3),
        Column("row", [x.row_id or "" for x in o], numeric=False, priority=4),
    ]
    console.print(fitted_table(columns, console))
    c = a.calibration
    console.print(
        f"estimated: calibrated roofline, leave-one-out median error "
        f"{c.loo_median_pct:.0f} % on {len(c.row_ids)} measured rows; P10-P90 from "
        f"sigma {a.sigma:.2f} (costmodel throughput --calibration)",
        highlight=False,
    )
    for x in a.left_out:
        console.print(f"left out: {x.gpu} x{x.gpus}: {_left(x)}", highlight=False)


def _print_calibration(fit, console) -> None:
    from cli.tables import Column, fitted_table

    c = fit.calibration
    console.print(
        f"serving estimate calibration ({fit.as_of}, {len(fit.row_ids)} measured rows, terms: "
        f"{', '.join(c.terms) or 'none'}): eta_B {c.eta_b:.3f}, eta_F {c.eta_f:.3f}, "
        f"o_dec {c.o_dec_s * 1e3:.2f} ms, o_pre {c.o_pre_s * 1e3:.1f} ms, "
        f"eta_moe {c.eta_moe:.3f}, "
        f"o_tp {c.o_tp_s * 1e3:.2f} ms per layer",
        style="bold",
        highlight=False,
    )
    columns = [
        Column("row", list(fit.row_ids), numeric=False),
        Column("fit", [f"{v:.2f}" for v in fit.in_sample]),
        Column("LOO", [f"{v:.2f}" for v in fit.loo]),
    ]
    console.print(fitted_table(columns, console))
    groups = ", ".join(
        f"{name} {value:.2f}"
        for name, value in (("dense", fit.sigma_dense), ("MoE", fit.sigma_moe))
        if value is not None
    )
    console.print(
        "predicted / measured, by the fit on every row (fit) and without the row (LOO). "
        f"Leave-one-out median error {fit.loo_median_pct:.1f} %, "
        f"sigma of ln ratios {fit.sigma:.3f} ({groups})",
        highlight=False,
    )


def _chart(args: argparse.Namespace, result, market) -> None:
    from pathlib import Path

    from cli.common import check_output
    from pricing.serving_chart import write_throughput_chart

    if Path(args.chart).suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"{args.chart}: a chart is written as .png or .svg")
    check_output(args.chart, Path(args.chart).suffix.lstrip("."))
    try:
        written = write_throughput_chart(args.chart, result, market, args.params_b)
    except OSError as exc:
        raise UsageError(f"{args.chart}: cannot write the chart: {exc.strerror or exc}") from None
    print(written, file=sys.stderr)
