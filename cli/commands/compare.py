"""``costmodel compare``: rank every owned and rented option by cost per reference GPU-hour, or
with ``--model`` every owned, rented and API option of serving that model by cost per M tokens."""

from __future__ import annotations

import argparse
import json
import sys

from cli.common import UsageError, catalog, print_rendered
from cli.options import (
    MIN_UTILISATION,
    SERVING_FLAGS,
    add_format,
    add_prices,
    add_samples,
    add_seed,
    add_serving,
    add_serving_request,
    add_tier,
    add_verbose,
    command,
)
from pricing.text import counted

__all__ = ["add_parser", "execute"]

#: The option of ``costmodel compare`` that sets each key of a comparison request.
_FLAGS = {
    "utilisation": "--utilisation",
    "precision": "--precision",
    "horizon_months": "--horizon",
    "min_memory_gb": "--min-memory",
    "tier": "--tier",
    "samples": "--samples",
    "seed": "--seed",
    "model": "--model",
    **SERVING_FLAGS,
    "grid": "--grid",
    "sort": "--sort",
    "model.config": "--model-config",
    "model.params_b": "--params-b",
}


def add_parser(sub) -> None:
    p = command(
        sub,
        "compare",
        help="rank every owned and rented option by cost per reference GPU-hour (or, with "
        "--model, every owned, rented and API option by cost per M tokens)",
        description="Rank every way the catalog offers the compute at one utilisation: each "
        "priced GPU owned at 1, 2, 4 and 8 per server (its catalog platform tier) and each "
        "instance rented on demand, spot or reserved for 1 or 3 years, by cost per reference "
        "GPU-hour, P50 with P10-P90 under a default uncertainty of +-10 % on prices, +-20 % "
        "on electricity and +-25 % on resale decay. Options the buyer's-guide advice rules out "
        "are left out. Also prints the cheapest owned and rented option and the utilisation "
        "at which they break even. With --model, the work is serving that catalog model and "
        "the cost is per M tokens (input + output) of requests of --input-tokens and "
        "--output-tokens: each server or instance serves at the catalog's serving measurement "
        "of the model at --precision where one holds for it, else at the throughput estimated "
        "from the model's architecture and the GPU's specifications (marked, its error drawn "
        "in the cost's P10-P90), the catalog's API offers of the model join the ranking (+-10 "
        "% on their prices), and the options whose server or instance cannot hold the weights "
        "in 90 % of its GPU memory, or that cannot meet --max-tpot-ms or --max-ttft-ms, are "
        "left out and counted. --model-config compares a model the catalog lacks from its "
        "Hugging Face config.json. "
        "Each option's carbon (g CO2e per unit of work at the utilisation) counts an owned "
        "build on --grid with its embodied carbon, and a rented instance on its region's grid "
        "with its share of the host's; an API's is not published. --sort carbon ranks by it.",
        examples=(
            "costmodel compare --utilisation 0.5",
            "costmodel compare --utilisation 0.25 --min-memory 24 --tier neocloud",
            "costmodel compare -u 0.8 --horizon 24 --prices my-prices.csv --format json > c.json",
            "costmodel compare -u 0.5 --model llama-3.3-70b --precision fp8",
            "costmodel compare -u 0.3 --model llama-3.1-8b --input-tokens 5000 --output-tokens 500",
            "costmodel compare -u 0.5 --model llama-3.3-70b --min-tokens-per-s-per-user 20",
            "costmodel compare -u 0.5 --model llama-3.1-8b --max-tpot-ms 25 --max-ttft-ms 500",
            "costmodel compare -u 0.5 --model-config Qwen2.5-7B-Instruct/config.json",
            "costmodel compare -u 0.5 --grid FR --sort carbon",
        ),
    )
    p.add_argument(
        "--utilisation",
        "-u",
        required=True,
        type=float,
        metavar="U",
        help=f"busy share of wall-clock hours, in [{MIN_UTILISATION:g}, 1]",
    )
    p.add_argument(
        "--precision",
        metavar="P",
        help="fp32, fp16 (default) or int8: picks the throughput; with --model fp16, fp8 or "
        "fp4 (default: the first the catalog measures the model at)",
    )
    p.add_argument("--horizon", type=int, metavar="H", help="months owned or rented (default 36)")
    p.add_argument("--min-memory", type=float, metavar="GB", help="leave out GPUs with less memory")
    add_tier(p)
    _add_carbon(p)
    _add_serving(p)
    add_prices(p)
    add_serving(p)
    add_samples(p, "Monte Carlo draws per option (default 2,000)")
    add_seed(p, "random seed (default 0)")
    add_format(
        p,
        ("table", "json", "csv"),
        "table for people (default), json or csv with every option",
        default="table",
    )
    p.add_argument(
        "--top",
        type=int,
        metavar="N",
        help="table: show the N cheapest options (default 30; 0: all)",
    )
    add_verbose(p, "print the time on stderr")
    p.set_defaults(func=execute)


def _add_carbon(p: argparse.ArgumentParser) -> None:
    """The options of the owned options' carbon and of the ranking's order."""
    p.add_argument(
        "--grid",
        metavar="ID",
        help="catalog grid id of the owned options' electricity, for their carbon (default US; "
        "'costmodel catalog grids' lists them)",
    )
    p.add_argument(
        "--sort",
        metavar="BY",
        help="cost (default): cheapest P50 first, or carbon: lowest P50 g CO2e first",
    )


def _add_serving(p: argparse.ArgumentParser) -> None:
    """The options of a comparison by model."""
    p.add_argument(
        "--model",
        metavar="M",
        help="a catalog model id (llama-3.3-70b): rank the ways to serve it by cost per M tokens "
        "(with --model-config: the name of the model read from it)",
    )
    add_serving_request(
        p,
        shape="with --model: {side} tokens per request (default 1,000)",
        floor="with --model: serve each request at least S tokens/s (measurements that do, "
        "estimates at the batch that does)",
        ceiling="with --model: serve each request within T ms {what}, at the estimate's "
        "operating point where no measurement of it holds; options that cannot are left out "
        "and counted, with the best they reach",
    )
    p.add_argument(
        "--model-config",
        metavar="FILE",
        help="a Hugging Face config.json of a model the catalog lacks: compare serving it at "
        "its estimated throughput (--model names it; default: the file's folder)",
    )
    p.add_argument(
        "--params-b",
        type=float,
        metavar="P",
        help="with --model-config: its parameters [billions] where the config's family is not "
        "counted (default: the catalog's for a model of that name, else counted)",
    )


def execute(args: argparse.Namespace) -> int:
    import time

    from scenarios.compare import compare
    from scenarios.errors import ScenarioError

    if args.top is not None and args.top < 0:
        raise UsageError("--top must be 0 (all) or more")
    market = catalog(args.prices, args.serving)
    request = _request(args, market)
    start = time.perf_counter()
    try:
        result = compare(request, market)
    except ScenarioError as exc:
        raise _usage(exc) from None
    elapsed = time.perf_counter() - start
    if args.format == "json":
        from scenarios.compare import ComparisonSchema

        answer = ComparisonSchema().dump(result)
        sys.stdout.write(json.dumps(answer, indent=2, allow_nan=False) + "\n")
    elif args.format == "csv":
        from cli.tables import compare_csv  # the tables' imports (rich) only when drawn

        sys.stdout.write(compare_csv(result))
    else:
        from cli.tables import print_compare

        top = args.top if args.top is not None else 30
        print_rendered(lambda console: print_compare(result, console, top or None))
    if args.verbose:
        t = result.timings
        print(
            f"compare time: {elapsed:.2f} s for {counted(len(result.options), 'option')} x "
            f"{request.samples:,} samples (resolving {t['resolve_s']:.2f} s, engine "
            f"{t['engine_s']:.2f} s)",
            file=sys.stderr,
        )
    return 0


def _model(args: argparse.Namespace, market) -> str | dict | None:
    """The model asked for: a catalog id, or read from ``--model-config``."""
    from scenarios.compare.inline import model_from_config
    from scenarios.errors import ScenarioError

    if args.model_config is None:
        if args.params_b is not None:
            raise UsageError("--params-b: only with --model-config")
        return args.model and args.model.strip()
    name = args.model and args.model.strip()
    try:
        return model_from_config(args.model_config, market, name, args.params_b)
    except ScenarioError as exc:
        raise _usage(exc) from None


def _request(args: argparse.Namespace, market):
    """The comparison request of the options given; a bad value names its option."""
    from scenarios.compare import load_request
    from scenarios.errors import ScenarioError

    given = {
        "utilisation": args.utilisation,
        "precision": args.precision and args.precision.strip().casefold(),
        "horizon_months": args.horizon,
        "min_memory_gb": args.min_memory,
        "tier": args.tier and args.tier.strip().casefold(),
        "samples": args.samples,
        "seed": args.seed,
        "model": _model(args, market),
        "input_tokens": args.input_tokens,
        "output_tokens": args.output_tokens,
        "min_tokens_per_s_per_user": args.min_tokens_per_s_per_user,
        "max_tpot_ms": args.max_tpot_ms,
        "max_ttft_ms": args.max_ttft_ms,
        "grid": args.grid and args.grid.strip(),
        "sort": args.sort and args.sort.strip().casefold(),
    }
    try:
        return load_request({k: v for k, v in given.items() if v is not None})
    except ScenarioError as exc:
        raise _usage(exc) from None


def _usage(exc) -> UsageError:
    """A request's problems, each named by the option that sets its key."""
    return UsageError(
        "; ".join(f"{_FLAGS.get(e['path'], e['path'])}: {e['message']}" for e in exc.errors)
    )
