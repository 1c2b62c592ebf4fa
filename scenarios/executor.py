"""Where jobs run: in this process, in ``spawn``-ed worker processes, or on an existing Dask
distributed cluster (the ``distributed`` extra).

A job is exactly ``scenarios.evaluate(scenario, samples, seed)`` followed by the reports it was
asked for, so a result does not depend on where, in which order or beside what it ran. A plan
(``kind: plan``) is a job like a scenario and gives a plan result. The scenario travels as its
parsed YAML document (plain picklable data); the worker resolves it against its own shipped
catalog, with the user's prices of the job laid over it, and refuses to run when that gives a
different cache key.

A batch hands over all its jobs at once (:func:`run_jobs`). A server hands them over one at a
time as they arrive (:class:`Workers`): each runs in a process of its own, started for it and
ended with it (or on the Dask cluster), and reports the share of its draws done as it goes.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import secrets
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from costmodel.threads import pin_threads
from present.answer import Answer
from pricing import PriceEntry, ServingPoint, apply_prices, apply_serving, load_catalog

from .errors import ScenarioError
from .scenario import evaluate, load_document

__all__ = [
    "BatchError",
    "Done",
    "Job",
    "JobError",
    "Workers",
    "one_line",
    "run_jobs",
    "write_error",
    "write_reports",
]

#: How to install what ``--dask-scheduler`` needs.
DASK_EXTRA = 'pip install "gpu-costmodel[distributed]"'


class BatchError(ValueError):
    """The batch as a whole cannot run: no scenario files, bad options, unreachable scheduler."""


class JobError(Exception):
    """Why a job given to :class:`Workers` gave no result. ``kind`` is ``invalid`` (the
    document cannot be run: a scenario error, a number out of the model's range, a catalog that
    resolves it differently), ``failed`` (an unexpected error; ``detail`` holds its traceback)
    or ``stopped`` (its process or Dask worker ended without an answer: killed, out of memory).
    """

    def __init__(self, message: str, kind: str = "failed", detail: str = "") -> None:
        super().__init__(message, kind, detail)  # the arguments it is pickled with
        self.message, self.kind, self.detail = message, kind, detail

    def __str__(self) -> str:
        return self.message


def _job_error(exc: Exception) -> JobError:
    """``exc``, raised by a job, as the :class:`JobError` its submitter receives."""
    if isinstance(exc, ScenarioError | BatchError):
        return JobError("; ".join(filter(None, map(str.strip, str(exc).splitlines()))), "invalid")
    if isinstance(exc, ArithmeticError):
        return JobError(f"a number is out of the range the model handles: {exc}", "invalid")
    return JobError(one_line(exc), "failed", traceback.format_exc())


@dataclass(frozen=True)
class Job:
    """Work for one cache key: evaluate a scenario or a plan (or reuse a stored result), then
    reports.

    ``document`` is ``(data, source, lines)`` of the scenario or plan, or ``None`` with
    ``result`` set for a stored result whose reports are missing. ``write`` lists ``(format,
    path)`` the worker writes (same filesystem); ``render`` the formats it returns as bytes
    (Dask). ``prices`` are the user's prices and ``serving`` the user's serving measurements
    the scenario is resolved with.
    """

    key: str
    document: tuple[Any, str, dict[str, int]] | None
    result: Answer | None
    samples: int | None
    seed: int | None
    write: tuple[tuple[str, str], ...] = ()
    render: tuple[str, ...] = ()
    prices: tuple[PriceEntry, ...] = ()
    serving: tuple[ServingPoint, ...] = ()


@dataclass(frozen=True)
class Done:
    """A finished job: the result, the files written, the reports rendered, a report error."""

    result: Answer
    written: tuple[str, ...] = ()
    rendered: tuple[tuple[str, bytes], ...] = ()
    report_error: str = ""


def one_line(exc: BaseException) -> str:
    """An exception as one line: the scenario error's own text, else ``Type: message``."""
    text = str(exc) if isinstance(exc, ScenarioError) else f"{type(exc).__name__}: {exc}"
    return "; ".join(line.strip() for line in text.splitlines() if line.strip()) or repr(exc)


def write_error(exc: OSError) -> str:
    """A file that could not be written, as one line: ``cannot write PATH: reason``."""
    return f"cannot write {exc.filename}: {exc.strerror or exc}"


def write_reports(result: Answer, reports: Iterable[tuple[str, str]]) -> Done:
    """Write each ``(format, path)`` report; a failure is recorded, the result is kept."""
    from present.reports import write

    written: list[str] = []
    try:
        for fmt, path in reports:
            written += [str(p) for p in write(result, fmt, path)]
    except OSError as exc:  # a folder where the report goes, a full disk, no permission
        return Done(result, tuple(written), (), f"report: {write_error(exc)}")
    except Exception as exc:  # a report failure must not lose the computed result
        return Done(result, tuple(written), (), f"report: {one_line(exc)}")
    return Done(result, tuple(written))


def _execute(job: Job, progress: Callable[[float], None] | None = None) -> Done:
    """Worker entry point: evaluate (or take the stored result), then write and render reports;
    ``progress`` is given the share of the draws evaluated, from 0 to 1."""
    result = job.result
    if job.document is not None:
        data, source, lines = job.document
        catalog = None
        if job.prices or job.serving:
            catalog = apply_serving(apply_prices(load_catalog(), job.prices), job.serving)
        scenario = load_document(data, source, lines, catalog)
        if scenario.key(job.samples, job.seed) != job.key:
            raise BatchError(
                f"{source}: the worker resolved the scenario differently "
                f"(its catalog is {scenario.catalog.version})"
            )
        result = evaluate(scenario, samples=job.samples, seed=job.seed, progress=progress)
    done = write_reports(result, job.write)
    if done.report_error or not job.render:
        return done
    from present.reports import render

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


#: ``prctl`` option (linux/prctl.h): the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> bool:
    """Have the kernel kill this process when the thread that started it dies (Linux
    ``prctl(PR_SET_PDEATHSIG, SIGKILL)``); whether it took the setting."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _job_process(parent: int) -> None:
    """What a process that runs jobs does first (a batch's worker, a job's own process): end
    with its ``parent`` and hold its native thread pools to one thread (it runs beside other
    jobs and requests)."""
    _exit_with_parent(parent)
    pin_threads()


def _exit_with_parent(parent: int) -> None:
    """End this worker when the batch process dies (e.g. ``kill -9``).

    Workers of a killed :class:`ProcessPoolExecutor` would otherwise run on as orphans. On
    Linux the kernel kills the worker with its parent, whatever the worker is doing; elsewhere
    (and for a parent that died before the setting was made) a thread looks every half second,
    which a worker holding the GIL in one long C call does not let run.
    """
    import threading
    import time

    _die_with_parent()
    if os.getppid() != parent:  # died before the kernel was told
        os._exit(1)

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
        initializer=_job_process,
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


def _dask_client(address: str) -> Any:
    """A client of the Dask scheduler at ``address``, or :class:`BatchError` saying why not."""
    try:
        from distributed import Client
    except ImportError:
        raise BatchError(
            f"a Dask scheduler needs the 'distributed' package; install it with: {DASK_EXTRA}"
        ) from None
    try:
        # Connect timeout: dask config distributed.comm.timeouts.connect (30 s by default).
        return Client(address, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise BatchError(f"cannot connect to the Dask scheduler at {address}: {exc}") from exc


def _run_dask(jobs: Sequence[Job], address: str) -> Iterator[tuple[Job, Done | BaseException]]:
    client = _dask_client(address)  # says how to install distributed when it is missing
    from distributed import as_completed

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


Progress = Callable[[float], None]


def _run_alone(job: Job, conn: Connection, parent: int) -> None:
    """Entry point of a job's own process: run ``job``, sending ``("progress", share)`` as it
    goes and then ``("done", Done)`` or ``("error", JobError)`` to ``conn``."""
    _job_process(parent)
    try:
        outcome: tuple[str, Any] = ("done", _execute(job, lambda s: conn.send(("progress", s))))
    except Exception as exc:
        outcome = ("error", _job_error(exc))
    conn.send(outcome)
    conn.close()


def _run_on_dask(job: Job, topic: str) -> Done:
    """Entry point of a job on a Dask worker: its progress goes to the events of ``topic``."""
    from distributed import get_worker

    worker = get_worker()
    try:
        return _execute(job, lambda share: worker.log_event(topic, share))
    except Exception as exc:
        raise _job_error(exc) from None


class Workers:
    """Runs jobs as they are submitted, each in a ``spawn``-ed process of its own (ended with
    this process, or when :meth:`close` is called), or on the Dask cluster at ``scheduler``.

    :meth:`submit` returns a future of the job's :class:`Done`, or of a :class:`JobError`, and
    calls ``progress`` (in another thread) with the share of its draws done. Raises
    :class:`BatchError` when the Dask scheduler cannot be reached.
    """

    def __init__(self, scheduler: str | None = None) -> None:
        self._client = _dask_client(scheduler) if scheduler else None
        self._context = multiprocessing.get_context("spawn")
        self._processes: set[Any] = set()
        self._lock = threading.Lock()

    def submit(self, job: Job, progress: Progress | None = None) -> Future[Done]:
        """Start ``job``; its outcome arrives in the future returned."""
        future: Future[Done] = Future()
        future.set_running_or_notify_cancel()
        if self._client is not None:
            self._submit_to_dask(job, progress, future)
            return future
        reader, writer = self._context.Pipe(duplex=False)
        process = self._context.Process(
            target=_run_alone, args=(job, writer, os.getpid()), name="costmodel-job", daemon=True
        )
        with self._lock:
            process.start()
            self._processes.add(process)
        writer.close()  # the child's end: reading sees EOF once the child has gone
        threading.Thread(
            target=self._follow, args=(process, reader, progress, future), daemon=True
        ).start()
        return future

    def _follow(
        self, process: Any, reader: Connection, progress: Progress | None, future: Future[Done]
    ) -> None:
        """Relay a job's progress, then settle its future with its outcome."""
        outcome = None
        try:
            while outcome is None:
                kind, value = reader.recv()
                if kind != "progress":
                    outcome = (kind, value)
                elif progress is not None:
                    progress(value)
        except (EOFError, OSError):
            pass  # the process ended without an answer
        finally:
            reader.close()
        process.join()
        with self._lock:
            self._processes.discard(process)
        if outcome is None:
            message = f"the job's process ended without an answer (exit code {process.exitcode})"
            future.set_exception(JobError(message, "stopped"))
        elif outcome[0] == "done":
            future.set_result(outcome[1])
        else:
            future.set_exception(outcome[1])

    def _submit_to_dask(self, job: Job, progress: Progress | None, future: Future[Done]) -> None:
        client = self._client
        token = secrets.token_hex(8)
        topic = f"costmodel-progress-{token}"
        if progress is not None:
            client.subscribe_topic(topic, lambda event: progress(event[1]))

        def settle(task: Any) -> None:
            if progress is not None:
                client.unsubscribe_topic(topic)
            try:
                future.set_result(task.result())
            except JobError as exc:
                future.set_exception(exc)
            except Exception as exc:  # the worker died, the task was cancelled
                future.set_exception(JobError(one_line(exc), "stopped"))

        task = client.submit(_run_on_dask, job, topic, pure=False, key=f"costmodel-{token}")
        task.add_done_callback(settle)

    def close(self) -> None:
        """End every job still running (its future then holds a ``stopped`` error)."""
        with self._lock:
            running = list(self._processes)
        for process in running:
            process.terminate()
        if self._client is not None:
            self._client.close()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
