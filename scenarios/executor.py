"""Where the jobs of a batch run: in this process, in ``spawn``-ed worker processes, or on an
existing Dask distributed cluster (the ``distributed`` extra).

A job is exactly ``scenarios.evaluate(scenario, samples, seed)`` followed by the reports it was
asked for, so a result does not depend on where, in which order or beside what it ran. A plan
(``kind: plan``) is a job like a scenario and gives a plan result. The scenario travels as its
parsed YAML document (plain picklable data); the worker resolves it against its own shipped
catalog, with the user's prices of the job laid over it, and refuses to run when that gives a
different cache key.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from costmodel.plan_result import PlanResult
from costmodel.result import Result
from pricing import PriceEntry, apply_prices, load_catalog

from .errors import ScenarioError
from .scenario import evaluate, load_document

__all__ = ["BatchError", "Done", "Job", "one_line", "run_jobs", "write_reports"]

#: How to install what ``--dask-scheduler`` needs.
DASK_EXTRA = 'pip install "gpu-costmodel[distributed]"'


class BatchError(ValueError):
    """The batch as a whole cannot run: no scenario files, bad options, unreachable scheduler."""


@dataclass(frozen=True)
class Job:
    """Work for one cache key: evaluate a scenario or a plan (or reuse a stored result), then
    reports.

    ``document`` is ``(data, source, lines)`` of the scenario or plan, or ``None`` with
    ``result`` set for a stored result whose reports are missing. ``write`` lists ``(format,
    path)`` the worker writes (same filesystem); ``render`` the formats it returns as bytes
    (Dask). ``prices`` are the user's prices the scenario is resolved with.
    """

    key: str
    document: tuple[Any, str, dict[str, int]] | None
    result: Result | PlanResult | None
    samples: int | None
    seed: int | None
    write: tuple[tuple[str, str], ...] = ()
    render: tuple[str, ...] = ()
    prices: tuple[PriceEntry, ...] = ()


@dataclass(frozen=True)
class Done:
    """A finished job: the result, the files written, the reports rendered, a report error."""

    result: Result | PlanResult
    written: tuple[str, ...] = ()
    rendered: tuple[tuple[str, bytes], ...] = ()
    report_error: str = ""


def one_line(exc: BaseException) -> str:
    """An exception as one line: the scenario error's own text, else ``Type: message``."""
    text = str(exc) if isinstance(exc, ScenarioError) else f"{type(exc).__name__}: {exc}"
    return "; ".join(line.strip() for line in text.splitlines() if line.strip()) or repr(exc)


def write_reports(result: Result | PlanResult, reports: Iterable[tuple[str, str]]) -> Done:
    """Write each ``(format, path)`` report; a failure is recorded, the result is kept."""
    from costmodel.present.reports import write

    written: list[str] = []
    try:
        for fmt, path in reports:
            written += [str(p) for p in write(result, fmt, path)]
    except Exception as exc:  # a report failure must not lose the computed result
        return Done(result, tuple(written), (), f"report: {one_line(exc)}")
    return Done(result, tuple(written))


def _execute(job: Job) -> Done:
    """Worker entry point: evaluate (or take the stored result), then write and render reports."""
    result = job.result
    if job.document is not None:
        data, source, lines = job.document
        catalog = apply_prices(load_catalog(), job.prices) if job.prices else None
        scenario = load_document(data, source, lines, catalog)
        if scenario.key(job.samples, job.seed) != job.key:
            raise BatchError(
                f"{source}: the worker resolved the scenario differently "
                f"(its catalog is {scenario.catalog.version})"
            )
        result = evaluate(scenario, samples=job.samples, seed=job.seed)
    done = write_reports(result, job.write)
    if done.report_error or not job.render:
        return done
    from costmodel.present.reports import render

    try:
        rendered = tuple((fmt, render(result, fmt)) for fmt in job.render)
    except Exception as exc:
        return Done(result, done.written, (), f"report: {one_line(exc)}")
    return Done(result, done.written, rendered)


def run_jobs(
    jobs: Sequence[Job], workers: int, scheduler: str | None
) -> Iterator[tuple[Job, Done | BaseException]]:
    """Yield each job with its outcome (or the exception it raised) as jobs finish.

    ``scheduler`` is a Dask scheduler address (``tcp://host:8786``); else ``workers`` local
    processes, and ``1`` runs in this process.
    """
    if not jobs:
        return
    if scheduler is not None:
        yield from _run_dask(jobs, scheduler)
    elif workers == 1:
        for job in jobs:
            try:
                yield job, _execute(job)
            except Exception as exc:
                yield job, exc
    else:
        yield from _run_pool(jobs, workers)


def _exit_with_parent(parent: int) -> None:
    """Worker initializer: end this worker when the batch process dies (e.g. ``kill -9``).

    Workers of a killed :class:`ProcessPoolExecutor` would otherwise run on as orphans.
    """
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _run_pool(jobs: Sequence[Job], workers: int) -> Iterator[tuple[Job, Done | BaseException]]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(jobs)),
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_exit_with_parent,
        initargs=(os.getpid(),),
    )
    try:
        futures = {pool.submit(_execute, job): job for job in jobs}
        for future in as_completed(futures):
            try:
                yield futures[future], future.result()
            except Exception as exc:
                yield futures[future], exc
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _run_dask(jobs: Sequence[Job], address: str) -> Iterator[tuple[Job, Done | BaseException]]:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise BatchError(
            f"--dask-scheduler needs the 'distributed' package; install it with: {DASK_EXTRA}"
        ) from None
    try:
        # Connect timeout: dask config distributed.comm.timeouts.connect (30 s by default).
        client = Client(address, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise BatchError(f"cannot connect to the Dask scheduler at {address}: {exc}") from exc
    futures: dict[Any, Job] = {}
    try:
        for job in jobs:
            futures[client.submit(_execute, job, pure=False, key=f"costmodel-{job.key}")] = job
        for future in as_completed(list(futures), loop=client.loop):
            try:
                yield futures[future], future.result()
            except Exception as exc:
                yield futures[future], exc
    finally:
        client.cancel(list(futures))
        client.close()
