"""Engine speed and memory, beside a dense (draws x levels x months) numpy engine.

Runs ``benchmarks/scenario-1m.yaml`` (the worked example over 60 months and 20 utilisation
levels with nine triangular inputs, Latin hypercube) at 10,000, 100,000 and 1,000,000 draws and
prints, per phase, the engine's CPU time and peak traced memory; then, on the same draws in the
same process, a dense engine that builds every (draw, level, month) cash flow, with the ratio
of the two and the largest relative difference of their TCO and payback (they must agree).
``--process`` also times whole ``costmodel run --format json`` processes (CPU, wall and peak
resident memory of the child); ``--against OTHER_CHECKOUT`` runs whole processes of this
checkout and of the other in turn and prints the medians and the median ratio of the pairs
(``--bytecode``: with each module's bytecode written once, as an installed copy runs, instead
of compiled by every process as under PYTHONDONTWRITEBYTECODE, about 0.1 s of each).

Targets on a 2-core machine: 1,000,000 draws at least 15 times faster than the dense engine,
agreeing to 1e-12; the whole process within 400 MiB, with at least 1.8 times less CPU than
f69c217 (before payback and the summary lost their loops over months and repeated work).
Measured on the team's shared machine (load 0.9-3.2): the engine 18.4 times faster than the
dense one at 1M draws, agreeing to 7.2e-14; whole processes 1.60-1.84 s of CPU and 282 MiB
against f69c217's 2.31-2.62 s and 474 MiB, 1.36-1.44 times less (medians of 7-9 pairs in four
runs; the ratio rises with the load). Where a 1M-draw process goes: imports 0.22 s (0.09 s of
it compiling without bytecode), drawing 0.19 s (a permutation per replicate and input, not to
be changed without changing the draws), payback 0.53-0.58 s at that load (200 chunks of draws
x months; some 0.5 ms of each is calls), the summary 0.47-0.49 s at that load, 0.57 s before
its last round (about 100 selections of a million draws, 2 ms each, and the ranks of the ten
series of sensitivity, 11 ms each, 21 ms while ties were looked for in the draws re-read in
sorted order), and 0.1-0.3 s of system time: this machine's first touch of fresh memory costs
about 1 ms per MB, so the paybacks are held as 2-byte codes (``costmodel.stats.Paybacks``) and
freed arrays are kept for the next ones (``costmodel.allocator``).

With payback's loop in C (``costmodel/_payback.c``), load 1.3-2.4: whole processes 1.35-1.54 s
of CPU and 286 MiB against f69c217's 2.50-2.64 s and 474 MiB, 1.73-1.80 times less (medians of
7 pairs in three runs); the payback phase 0.30 s, of it the kernel 0.14-0.18 s where numpy's form
takes 0.34-0.37 s (the rest builds the gap); with ``COSTMODEL_KERNELS=numpy``, alternated in
the same run, a median 1.71 s a process against 1.39 s.

    python benchmarks/bench_engine.py                       # 10k, 100k and 1M draws
    python benchmarks/bench_engine.py --samples 10000 100000 --process
    python benchmarks/bench_engine.py --samples 1000000 --no-dense --against ../main --runs 9
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages

import scenarios  # noqa: E402
from costmodel.cashflows import (  # noqa: E402
    HOURS_PER_MONTH,
    BuyDraws,
    RentDraws,
    depreciation_schedule,
    discount_factors,
    term_end,
    throughput,
)
from costmodel.engine import Phases, draw, simulate, summarise  # noqa: E402
from costmodel.inputs import ModelInputs  # noqa: E402
from pricing import RESERVATION_MONTHS  # noqa: E402

SCENARIO = Path(__file__).with_name("scenario-1m.yaml")
_MIB = 2**20


def _column(x, rows: slice) -> np.ndarray:
    """A per-draw value as a (c, 1, 1) array for broadcasting over (draw, level, month)."""
    return (np.asarray(x)[rows] if np.ndim(x) else np.asarray(x)).reshape(-1, 1, 1)


def _columns(side: object, rows: slice) -> dict[str, np.ndarray]:
    """Each drawn input of ``side`` for ``rows``, as a (rows, 1, 1) column."""
    return {
        f.name: _column(getattr(side, f.name), rows)
        for f in dataclasses.fields(side)
        if isinstance(getattr(side, f.name), float | np.ndarray)
    }


def _buy_flows(b: BuyDraws, c: dict, levels, m, d, schedule, h: int, tau: float):
    """Capex, the discounted monthly buy flows, the salvage and the owned throughput."""
    n = b.gpu_count
    hw = n * c["gpu_price_usd"] + c["platform_price_usd"]
    capex = hw + c["setup_usd"]
    if b.powered_when_idle:
        kw = (
            n * (levels * c["gpu_power_w"] + (1 - levels) * c["gpu_idle_w"]) + c["platform_power_w"]
        ) / 1000
    else:
        kw = levels * (n * c["gpu_power_w"] + c["platform_power_w"]) / 1000
    peak = (n * c["gpu_power_w"] + c["platform_power_w"]) / 1000
    energy = (
        kw
        * HOURS_PER_MONTH
        * c["pue"]
        * c["electricity_usd_per_kwh"]
        * (1 + c["electricity_annual_change"]) ** ((m - 1) / 12)
    )
    opex = energy + (
        c["hosting_usd_per_kw_month"] * peak
        + c["maintenance_rate"] * hw / 12
        + c["gpu_annual_failure_rate"] * n * c["gpu_price_usd"] / 12
        + c["admin_usd_per_month"]
    )
    buy_flow = (opex * (1 - tau) - tau * capex * schedule) * d
    resale = hw * (1 - c["resale_annual_decay"]) ** (h / 12)
    book = capex * (1 - schedule.sum())
    salvage = (resale - tau * (resale - book)) * d[..., -1:]
    t_own = throughput(n, c["relative_throughput"], c["scaling_efficiency"], c["thermal_derate"])
    return capex, buy_flow, salvage, t_own


def _rent_flows(r: RentDraws, rc: dict, t_own, levels, m, d, inputs: ModelInputs):
    """The discounted monthly rent flows and the reservation's months past the horizon."""
    h, tau = inputs.horizon_months, inputs.tax_rate
    t_inst = throughput(r.gpu_count, rc["relative_throughput"], rc["scaling_efficiency"])
    hours = levels * HOURS_PER_MONTH * t_own / t_inst
    if r.pricing == "spot":
        hours = hours * (1 + rc["spot_interruption_overhead"])
    grow = (1 + rc["price_annual_change"]) ** ((m - 1) / 12)
    extras = rc["storage_usd_per_month"] + rc["egress_usd_per_month"] + rc["admin_usd_per_month"]
    tail = 0.0
    if r.pricing in RESERVATION_MONTHS:
        k = (
            np.ceil(t_own / t_inst - 1e-9)
            if r.committed_instances is None
            else float(r.committed_instances)
        )
        reserved = k * HOURS_PER_MONTH * rc["price_usd_per_hour"]
        over = np.maximum(0, hours - k * HOURS_PER_MONTH) * rc["on_demand_price_usd_per_hour"]
        rent_m = (reserved + over) * grow + extras
        end = term_end(RESERVATION_MONTHS[r.pricing], h)
        later = np.arange(h + 1, end + 1).reshape(1, 1, -1)
        tail = (
            reserved
            * (1 + rc["price_annual_change"]) ** ((later - 1) / 12)
            * (1 + inputs.discount_rate) ** (-later / 12)
        ).sum(-1) * (1 - tau)
    else:
        rent_m = hours * rc["price_usd_per_hour"] * grow + extras
    return rent_m * (1 - tau) * d, tail


def _payback(capex, buy_flow, rent_flow) -> np.ndarray:
    """The fractional month the cumulative buy cost first meets the rent cost (inf: never)."""
    f = capex + np.cumsum(buy_flow - rent_flow, axis=-1)
    month = np.argmax(f <= 0, axis=-1)
    here = np.take_along_axis(f, month[..., None], -1)[..., 0]
    prev = np.where(
        month == 0,
        capex[..., 0],
        np.take_along_axis(f, np.maximum(month - 1, 0)[..., None], -1)[..., 0],
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(here <= 0, month + prev / (prev - here), np.inf)
    return np.where(capex[..., 0] <= 0, 0.0, t)


def dense(inputs: ModelInputs, values: dict, chunk: int = 4000) -> dict[str, np.ndarray]:
    """TCO and payback of every draw at every level from every month's cash flows.

    The straightforward vectorisation: arrays of shape (draws, levels, months), in chunks of
    draws, with the equations written month by month. Returns ``buy_tco``, ``rent_tco`` and
    ``payback`` of shape (S, U).
    """
    s, h, tau = inputs.samples, inputs.horizon_months, inputs.tax_rate
    levels = np.asarray(inputs.utilisation).reshape(1, -1, 1)
    b = BuyDraws.sampled(inputs.buy, values)
    r = RentDraws.sampled(inputs.rent, values)
    m = np.arange(1, h + 1).reshape(1, 1, -1)
    d = discount_factors(inputs.discount_rate, h).reshape(1, 1, -1)
    schedule = depreciation_schedule(b.depreciation, b.depreciation_years, h).reshape(1, 1, -1)
    out = {k: np.empty((s, levels.size)) for k in ("buy_tco", "rent_tco", "payback")}
    for start in range(0, s, chunk):
        rows = slice(start, min(s, start + chunk))
        capex, buy_flow, salvage, t_own = _buy_flows(
            b, _columns(b, rows), levels, m, d, schedule, h, tau
        )
        rent_flow, tail = _rent_flows(r, _columns(r, rows), t_own, levels, m, d, inputs)
        out["buy_tco"][rows] = (capex + buy_flow.sum(-1, keepdims=True) - salvage)[..., 0]
        out["rent_tco"][rows] = (rent_flow.sum(-1) + tail).reshape(-1, levels.size)
        out["payback"][rows] = _payback(capex, buy_flow, rent_flow)
    return out


def _dense_summary(arrays: dict[str, np.ndarray]) -> None:
    """The same per-level summaries as the engine's: mean and sorted percentiles per level."""
    for a in arrays.values():
        for j in range(a.shape[1]):
            column = np.array(a[:, j])
            column.mean()
            column.sort()


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    finite = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(np.isfinite(a), np.isfinite(b)):
        return float("inf")
    scale = np.maximum(np.abs(a[finite]), 1e-300)
    return float(np.max(np.abs(a[finite] - b[finite]) / scale, initial=0.0))


def _engine(inputs: ModelInputs) -> float:
    summarise(simulate(inputs))  # warm-up: the process's first touch of this much memory
    phases = Phases()
    summarise(simulate(inputs, phases=phases), phases)
    memory = Phases()
    tracemalloc.start()
    summarise(simulate(inputs, phases=memory), memory)
    tracemalloc.stop()
    total = sum(phases.seconds.values())
    for name, seconds in phases.seconds.items():
        peak = memory.peak_bytes.get(name, 0) / _MIB
        print(f"  {name:10} {seconds:9.3f} s {peak:9.0f} MiB")
    print(f"  {'engine':10} {total:9.3f} s")
    return total


def _compare(inputs: ModelInputs, engine_s: float) -> None:
    values, _ = draw(inputs)
    start = time.process_time()
    got = dense(inputs, values)
    _dense_summary(got)
    dense_s = time.process_time() - start
    sim = simulate(inputs)
    levels = inputs.utilisation
    buy = np.column_stack([sim.buy_tco(u) for u in levels])
    rent = np.column_stack([sim.rent_tco(u) for u in levels])
    diff = max(
        _relative(got["buy_tco"], buy),
        _relative(got["rent_tco"], rent),
        _relative(got["payback"], sim.payback.T),
    )
    print(
        f"  {'dense':10} {dense_s:9.3f} s   engine is {dense_s / engine_s:.1f}x faster; "
        f"largest relative difference {diff:.1e}"
    )


#: Runs a command and prints its CPU seconds and peak resident memory [KiB]. A small process
#: forks the command, so the figure is the command's own, not inflated by this big one.
_RUSAGE = (
    "import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); "
    "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(u.ru_utime + u.ru_stime, u.ru_maxrss, code)"
)


#: The environment of the timed processes; ``--bytecode`` drops PYTHONDONTWRITEBYTECODE from it.
_ENV = dict(os.environ)


def _run(samples: int, checkout: Path) -> tuple[float, float, float, str]:
    """One whole ``costmodel run --format json`` process of ``checkout``'s code on this
    checkout's scenario: CPU seconds, wall seconds, peak resident memory [MiB] and exit status."""
    cmd = [sys.executable, "-m", "cli", "run", str(SCENARIO), "--samples", str(samples)]
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _RUSAGE, *cmd, "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=checkout,  # ``python -m`` imports the packages of the folder it runs in
        env=_ENV,
    ).stdout.split("\n")[-2]  # the last line; the command's JSON went to this pipe too
    wall = time.perf_counter() - start
    cpu, rss, status = out.split()
    return float(cpu), wall, int(rss) / 1024, status


def _process(samples: int) -> None:
    cpu, wall, rss, status = _run(samples, ROOT)
    print(
        f"  {'process':10} {cpu:9.3f} s CPU, {wall:.3f} s wall, {rss:.0f} MiB peak resident"
        + ("" if status == "0" else f" (exit status {status})")
    )


def _paired(samples: int, other: Path, runs: int) -> None:
    """Whole processes of this checkout (A) and of ``other`` (B) in turn, A B A B ..., after
    one of each not counted: the median CPU and peak memory of each and the median of the
    ratios B/A of each pair (how many times less A takes), so that a drift of the machine's
    speed during the runs hits both sides of a pair alike."""
    _run(samples, ROOT), _run(samples, other)
    pairs = [(_run(samples, ROOT), _run(samples, other)) for _ in range(runs)]
    for name, side in (("A (this)", 0), (f"B ({other.name})", 1)):
        cpu = np.median([p[side][0] for p in pairs])
        rss = np.median([p[side][2] for p in pairs])
        print(f"  {name:20} {cpu:7.3f} s CPU {rss:7.0f} MiB peak resident (medians)")
    cpu_ratio = np.median([b[0] / a[0] for a, b in pairs])
    rss_ratio = np.median([b[2] / a[2] for a, b in pairs])
    print(f"  B/A {cpu_ratio:.2f}x the CPU, {rss_ratio:.2f}x the peak (medians of {runs} pairs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--no-dense", action="store_true", help="skip the dense engine")
    parser.add_argument("--process", action="store_true", help="time whole CLI processes too")
    parser.add_argument(
        "--against", type=Path, help="another checkout whose whole processes pair with these"
    )
    parser.add_argument("--runs", type=int, default=9, help="pairs of runs with --against")
    parser.add_argument(
        "--bytecode",
        action="store_true",
        help="time processes as an installed package runs: each module's bytecode written "
        "once beside it (by the first run, not counted), not compiled by every process as "
        "with PYTHONDONTWRITEBYTECODE set",
    )
    args = parser.parse_args()
    if args.bytecode:
        _ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    scenario = scenarios.load_file(SCENARIO)
    print(
        f"{SCENARIO.name}: {len(scenario.resolved.inputs.utilisation)} levels x "
        f"{scenario.resolved.inputs.horizon_months} months; CPU seconds, peak traced memory"
    )
    for n in args.samples:
        inputs = dataclasses.replace(scenario.resolved.inputs, samples=n)
        print(f"{n:,} draws")
        engine_s = _engine(inputs)
        if not args.no_dense:
            _compare(inputs, engine_s)
        if args.process:
            _process(n)
        if args.against:
            _paired(n, args.against.resolve(), args.runs)
    print(
        f"(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB "
        "peak resident)"
    )


if __name__ == "__main__":
    main()
