"""``costmodel plan``: evaluate a fleet plan and print the best mix and every candidate."""

from __future__ import annotations

import argparse
import functools

from cli.common import UsageError, evaluate, load, show_evaluation
from cli.options import add_evaluation
from pricing.text import counted

__all__ = ["TOP", "add_parser", "execute"]

#: Candidates the table shows by default: the best by the objective (and the frontier).
TOP = 20
#: The bound on what one evaluation may hold when ``COSTMODEL_MAX_MEMORY`` is not set [byte]:
#: the service's default.
_MEMORY = 1024**3
_MEMORY_ENV = "COSTMODEL_MAX_MEMORY"


def add_parser(sub) -> None:
    p = add_evaluation(
        sub,
        "plan",
        execute,
        help="evaluate a fleet plan: how many servers to own, reserve and burst",
        description="Evaluate a plan file (kind: plan): every mix of owned servers and "
        "reserved instances against a growing, uncertain demand, the rest burst to on-demand "
        "or spot instances; prints the best mix, the cost-versus-risk frontier and the best "
        f"candidates' costs. A plan whose evaluation would hold more memory than "
        f"{_MEMORY_ENV} (bytes; 1 GiB unless set) is refused before it starts.",
        examples=(
            "costmodel plan plan-lab-rtx4090-growth",
            "costmodel plan plan.yaml --top 0",
            "costmodel plan plan.yaml --samples 20000 --format json > plan-result.json",
        ),
        document=(
            "plan YAML file (kind: plan), or the name of a shipped example (see 'costmodel "
            "examples')",
            "the plan's simulation block",
        ),
    )
    p.add_argument(
        "--top",
        type=_count,
        default=TOP,
        metavar="N",
        help=f"the table shows the best N candidates by the objective and the frontier "
        f"(default {TOP}; 0: every candidate); the JSON always holds them all",
    )


def _count(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {value!r}")
    return number


def execute(args: argparse.Namespace) -> int:
    from cli.tables import print_plan

    document = load(args.file, "plan", args.prices, args.serving)
    _check_memory(args.file, document, args.samples)
    timings: dict[str, float] = {}
    result = evaluate(document, args, timings)
    draw = functools.partial(print_plan, top=args.top)
    show_evaluation(args, result, draw, timings, counted(len(result.candidates), "candidate"))
    return 0


def _limit() -> int:
    """``COSTMODEL_MAX_MEMORY`` [byte], or the service's default bound."""
    from scenarios.loader import byte_setting

    try:
        return byte_setting(_MEMORY_ENV, _MEMORY)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _size(count: int) -> str:
    """``count`` bytes in GiB to one decimal, or in MiB below 1 GiB."""
    return f"{count / 2**30:.1f} GiB" if count >= 2**30 else f"{count / 2**20:.0f} MiB"


def _check_memory(path: str, plan, samples: int | None) -> None:
    """Refuse, before anything is allocated, a plan whose evaluation would hold more memory
    than the bound (:func:`api.memory.plan_memory` counts it as the service does): the
    candidates' figures grow with their number, whatever the draws."""
    from api.memory import plan_memory

    inputs = plan.inputs
    draws, months = plan.max_draws(samples), inputs.horizon_months
    carbon = inputs.carbon is not None
    need = plan_memory(draws, inputs.candidates, months, carbon=carbon)
    limit = _limit()
    if need <= limit:
        return
    low, high = 0, inputs.candidates  # the most candidates that fit: a bisection
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (
            (mid, high)
            if plan_memory(draws, mid, months, carbon=carbon) <= limit
            else (low, mid - 1)
        )
    most = low
    raise UsageError(
        f"{path}: own.servers: the plan's {inputs.candidates:,} candidates would hold about "
        f"{_size(need)}, more than the {_size(limit)} one evaluation may hold "
        f"({_MEMORY_ENV}); narrow own.servers or reserve.instances (about {most:,} candidates "
        f"fit at {draws:,} draws), or raise {_MEMORY_ENV}"
    )
