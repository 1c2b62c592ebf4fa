"""Runs too long to answer at once: stored as jobs, run in processes of their own (or on a Dask
cluster) by whichever server process claims them, and polled at the run's URL.

``POST /v1/runs`` stores a job (:func:`queue_run`) rather than evaluating the body when its work
exceeds ``COSTMODEL_MAX_WORK`` (up to ``COSTMODEL_MAX_JOB_WORK``), or when the client sent
``Prefer: respond-async``, and answers 202 with ``Location: /v1/runs/<id>``. Each server process
has one :class:`JobRunner`: a thread, started with the process's first job or its first look at
an unfinished run, that

* claims queued jobs from the run store, at most ``COSTMODEL_JOB_WORKERS`` at a time and only
  while fewer than ``COSTMODEL_JOB_CONCURRENCY`` jobs run on its server (every process of the
  machine, counted in the store); a claim is a transaction, so each job runs once however many
  processes and servers share the store;
* runs each in a process of its own (:class:`scenarios.executor.Workers`), or on the Dask
  cluster at ``COSTMODEL_DASK_SCHEDULER``, writes its progress to the run at most every
  :data:`PROGRESS_EVERY_S` and stores its result: the document, seed, samples and catalog a
  synchronous run would have stored, and the same result;
* renews the heartbeat of its jobs every third of ``COSTMODEL_JOB_LEASE``, and takes back the
  jobs of processes that stopped without a word (no heartbeat for a lease: a crash, a kill, a
  restart): each is queued again, and failed (503 in the error shape) once it has been claimed
  :data:`ATTEMPTS` times. A process that exits normally puts its running jobs back in the queue
  at once, without counting the attempt.

A job is admitted only while its API key (on an open service, its client's address) has fewer
than ``COSTMODEL_MAX_QUEUED_JOBS`` jobs queued or running; beyond, ``POST /v1/runs`` is
answered 429 with ``Retry-After`` (:data:`QUEUE_RETRY_AFTER_S`).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import queue
import secrets
import socket
import threading
import time
from concurrent.futures import Future
from typing import Any, NoReturn

from flask import Flask, current_app
from flask import request as flask_request
from flask_smorest import abort

from scenarios import Plan, Scenario
from scenarios.executor import BatchError, Done, Job, JobError, Workers, one_line
from scenarios.store import Claim, QueueFull, RunRecord, StoreError

from ..errors import error_body, unexpected_error
from ..jsonio import parse_json_body, request_body
from ..limits import check_document
from ..service import get_store

__all__ = [
    "ATTEMPTS",
    "PROGRESS_EVERY_S",
    "QUEUE_RETRY_AFTER_S",
    "JobRunner",
    "job_runner",
    "queue_run",
    "server_name",
]

_log = logging.getLogger("api")

#: How many times a job is claimed before a process that stops while running it fails it.
ATTEMPTS = 2
#: The least time between two writes of a job's progress [s].
PROGRESS_EVERY_S = 0.5
#: How often an idle runner looks for queued jobs that no process has taken [s].
POLL_S = 1.0
#: How long a client whose queue is full is asked to wait before it sends a job again [s].
QUEUE_RETRY_AFTER_S = 10
#: The source name of a request's document in messages.
_SOURCE = "<request>"


def job_runner(app: Flask | None = None) -> JobRunner:
    """The app's :class:`JobRunner` (one per process)."""
    app = app or current_app._get_current_object()  # type: ignore[attr-defined]
    return app.extensions["costmodel"]["jobs"]


def server_name() -> str:
    """This machine's name in the claims of its processes: the jobs running on one server are
    those claimed under it."""
    return socket.gethostname() + ":"


def _inputs(document: Scenario | Plan) -> Any:
    return document.inputs if isinstance(document, Plan) else document.resolved.inputs


def queue_run(
    document: Scenario | Plan,
    samples: int | None,
    seed: int | None,
    owner: str | None,
    idempotency_key: str | None,
    request_hash: str | None,
) -> RunRecord:
    """Store the request's ``document`` as a queued job (422 beyond the limits of a job) and
    wake this process's runner; the run returned is ``queued``, or the run stored first under
    ``idempotency_key``."""
    check_document(document, samples, job=True)
    inputs = _inputs(document)
    request = {
        "document": parse_json_body(request_body()),
        "samples": samples,
        "seed": seed,
        "key": document.key(samples, seed),
    }
    name = document.document.get("name")
    try:
        record = get_store().add_job(
            request=request,
            name=name if isinstance(name, str) else None,
            seed=inputs.seed if seed is None else seed,
            samples=samples or inputs.samples,
            catalog_version=document.catalog.version,
            owner=owner,
            idempotency_key=idempotency_key,
            request_hash=request_hash,
            client=flask_request.remote_addr,
            max_unfinished=current_app.config["MAX_QUEUED_JOBS"],
        )
    except QueueFull as exc:
        _queue_full(exc, owner)
    job_runner().wake()
    return record


def _queue_full(exc: QueueFull, owner: str | None) -> NoReturn:
    """429: the key (or the address) already has as many unfinished jobs as it may."""
    whose = "this API key" if owner is not None else "this client address"
    message = (
        f"{whose} already has {exc.unfinished} jobs queued or running, the most "
        f"COSTMODEL_MAX_QUEUED_JOBS ({exc.limit}) allows; poll them at their Location and send "
        f"this one again once one is done (in {QUEUE_RETRY_AFTER_S} s, Retry-After)"
    )
    abort(
        429,
        message=message,
        errors=[{"path": "", "message": message}],
        headers={"Retry-After": str(QUEUE_RETRY_AFTER_S)},
    )


class JobRunner:
    """Runs this process's share of the queued jobs of ``app``'s run store (see the module).

    Inert while ``COSTMODEL_JOB_WORKERS`` is 0. The thread is started by :meth:`wake`, again in
    a process forked after it started, and stopped by :meth:`close` or when the process exits.
    """

    def __init__(self, app: Flask) -> None:
        self._app = app
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid: int | None = None
        self._events: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self._exit_registered = False

    @property
    def enabled(self) -> bool:
        """Whether this server runs jobs at all."""
        return self._app.config["JOB_WORKERS"] > 0

    def wake(self) -> None:
        """Make sure this process's thread runs, and have it look for queued jobs now."""
        if not self.enabled:
            return
        with self._lock:
            alive = self._thread is not None and self._thread.is_alive()
            if not alive or self._pid != os.getpid():
                self._events = queue.Queue()
                self._pid = os.getpid()
                loop = _Loop(self._app, self._events)
                self._thread = threading.Thread(target=loop.run, name="costmodel-jobs", daemon=True)
                self._thread.start()
                if not self._exit_registered:
                    atexit.register(self.close)
                    self._exit_registered = True
        self._events.put(("wake",))

    def close(self, timeout: float = 10.0) -> None:
        """Stop the thread: the jobs it runs are ended and put back in the queue."""
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is None or self._pid != os.getpid():
                return
            self._events.put(("stop",))
        thread.join(timeout)


class _Loop:
    """The state of one runner thread: what it claimed, the processes running it, the progress
    not yet written and when to renew the heartbeat."""

    def __init__(self, app: Flask, events: queue.Queue[tuple[Any, ...]]) -> None:
        self.app = app
        self.events = events
        self.server = server_name()
        self.worker = f"{self.server}{os.getpid()}:{secrets.token_hex(4)}"
        self.capacity = app.config["JOB_WORKERS"]
        self.concurrency = app.config["JOB_CONCURRENCY"]
        self.lease = app.config["JOB_LEASE"]
        self.workers: Workers | None = None
        self.running: dict[str, Claim] = {}
        self.progress: dict[str, tuple[float, float]] = {}  # run id: (share, last written)
        self.next_beat = 0.0

    def run(self) -> None:
        """Handle events and claim jobs until told to stop; never raises."""
        wait = min(POLL_S, self.lease / 3)  # the heartbeat is never late
        while True:
            try:
                event = self.events.get(timeout=wait)
            except queue.Empty:
                event = ("tick",)
            if event[0] == "stop":
                break
            try:
                self._handle(event)
                self._tick()
            except StoreError as exc:  # the store is down: try again at the next tick
                _log.error("job runner %s: the run store is unavailable: %s", self.worker, exc)
            except Exception:
                _log.exception("job runner %s: unexpected error", self.worker)
        self._stop()

    def _handle(self, event: tuple[Any, ...]) -> None:
        kind = event[0]
        if kind == "progress":
            self._progress(event[1], event[2])
        elif kind == "done":
            self._settle(event[1], event[2])

    def _tick(self) -> None:
        """Renew the heartbeat and take back stopped jobs when due; claim what there is room
        for."""
        store = get_store(self.app)
        now = time.monotonic()
        if now >= self.next_beat:
            if self.running:
                store.heartbeat(self.worker, list(self.running))
            queued, failed = store.recover(self.lease, ATTEMPTS, _stopped_error())
            if queued or failed:
                _log.warning(
                    "job runner %s took back %d jobs of stopped processes (%d failed)",
                    self.worker,
                    queued + failed,
                    failed,
                )
            self.next_beat = now + self.lease / 3
        while len(self.running) < self.capacity:
            claim = store.claim_job(self.worker, self.server, self.concurrency)
            if claim is None:
                break
            self._start(claim)

    def _start(self, claim: Claim) -> None:
        """Run a claimed job in a process of its own (or on the Dask cluster)."""
        request = claim.request
        job = Job(
            key=request["key"],
            document=(request["document"], _SOURCE, {}),
            result=None,
            samples=request["samples"],
            seed=request["seed"],
            render=("json",),
            prices=self.app.extensions["costmodel"]["prices"],
            serving=self.app.extensions["costmodel"]["serving"],
        )
        try:
            if self.workers is None:
                self.workers = Workers(self.app.config["DASK_SCHEDULER"])
        except BatchError as exc:  # no Dask scheduler: say so on the run
            error = error_body(503, f"the job cannot be started: {exc}")
            get_store(self.app).fail_job(claim.run_id, self.worker, error)
            return
        run_id = claim.run_id
        self.running[run_id] = claim
        future = self.workers.submit(
            job, lambda share: self.events.put(("progress", run_id, share))
        )
        future.add_done_callback(lambda f: self.events.put(("done", run_id, f)))

    def _progress(self, run_id: str, share: float) -> None:
        """Write a job's progress unless it was written less than PROGRESS_EVERY_S ago."""
        if run_id not in self.running:
            return
        last = self.progress.get(run_id, (0.0, -PROGRESS_EVERY_S))[1]
        now = time.monotonic()
        if now - last >= PROGRESS_EVERY_S:
            get_store(self.app).set_progress(run_id, self.worker, share)
            self.progress[run_id] = (share, now)

    def _settle(self, run_id: str, future: Future[Done]) -> None:
        """Store the outcome of a job: its result, or its failure in the error shape. The job
        is no longer heartbeated from here on, so that if the store fails to take the outcome
        its lease runs out and another process runs it again."""
        claim = self.running.pop(run_id, None)
        self.progress.pop(run_id, None)
        if claim is None:
            return
        try:
            done = future.result()
        except JobError as exc:
            self._failed(claim, exc)
            return
        if done.report_error:
            self._failed(claim, JobError(done.report_error, "failed"))
            return
        result = json.loads(dict(done.rendered)["json"])
        kept = get_store(self.app).finish_job(
            run_id,
            self.worker,
            scenario=result["scenario"],
            result=result,
            seed=result["seed"],
            samples=result["samples"],
            catalog_version=result["catalog"]["version"],
        )
        if not kept:
            _log.warning("job %s was taken over by another process; its result here is dropped",
                         run_id)  # fmt: skip

    def _failed(self, claim: Claim, exc: JobError) -> None:
        """A job that gave no result: queued again when its process stopped and it has
        attempts left, else failed with the error the client is shown."""
        store = get_store(self.app)
        if exc.kind == "stopped" and claim.attempts < ATTEMPTS:
            _log.warning("job %s stopped (%s); it is queued again", claim.run_id, exc)
            store.requeue_job(claim.run_id, self.worker)
            return
        if exc.kind == "invalid":
            message = f"the run could not be evaluated: {exc.message}"
            error = error_body(422, message, [{"path": "", "message": exc.message}])
        elif exc.kind == "stopped":
            error = _stopped_error(str(exc))
        else:
            error = unexpected_error(f"job {claim.run_id}", detail=exc.detail or exc.message)
        store.fail_job(claim.run_id, self.worker, error)

    def _stop(self) -> None:
        """End the jobs still running here and put them back in the queue at once (the
        attempt is not counted: this process ended them)."""
        if self.workers is not None:
            self.workers.close()
        try:
            store = get_store(self.app)
            for run_id in list(self.running):
                store.requeue_job(run_id, self.worker, refund=True)
        except StoreError as exc:
            _log.error("job runner %s could not put its jobs back: %s", self.worker, one_line(exc))
        self.running.clear()


def _stopped_error(cause: str = "") -> dict[str, Any]:
    """The error of a job whose process stopped every time it was claimed."""
    message = (
        f"the job was not completed: the process running it stopped {ATTEMPTS} times"
        + (f" ({cause})" if cause else "")
        + "; send the request again with a new Idempotency-Key, or ask for less work"
    )
    return error_body(503, message)
