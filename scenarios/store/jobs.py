"""Jobs: runs stored before they are evaluated, then claimed, run and finished by whichever
server process claims them first.

* A job is stored ``queued``, with progress 0, no scenario or result yet, and the request it
  stands for (``request_json``, whatever the caller needs to run it).
* A process claims the oldest queued job in one transaction: the row becomes ``running`` under
  the claimant's name (``claimed_by``) with a heartbeat (``heartbeat_at``) and one more of its
  ``attempts``. However many processes poll, each job is claimed by one of them (SQLite
  serialises the transactions; PostgreSQL re-checks ``status = 'queued'`` on the locked row).
* The claimant renews the heartbeat of its jobs while they run, writes their progress, and ends
  each as ``done`` (the scenario and result take the request's place) or ``failed`` (with an
  error in the HTTP API's shape). Each of these writes names the claimant and changes nothing
  once the job is no longer its own, so a process that lost a job cannot overwrite the outcome
  of the one that took it over.
* A job whose heartbeat is older than a lease (its process stopped: a restart, a crash) is put
  back in the queue, or failed once it has used up its attempts (:meth:`JobQueue.recover`).

Two bounds hold across every process sharing the store, each checked inside the transaction
that would break it (SQLite serialises writers; PostgreSQL takes the store's advisory lock):
a job is admitted only while its owner (or, without one, its client's address) has fewer
unfinished jobs than a limit (:class:`QueueFull` otherwise), and claimed only while fewer jobs
than a limit run on the claimant's server (the jobs whose ``claimed_by`` starts with its name).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .records import NewRun, RunRecord, check_int, check_opt_str, dumps

__all__ = ["CLIENT_MIGRATION", "MIGRATION", "Claim", "JobQueue", "QueueFull"]

#: The schema step that adds the state of a run (appended to the store's migrations): every
#: run stored before it is ``done``.
MIGRATION: tuple[str, ...] = (
    "ALTER TABLE runs ADD COLUMN status TEXT NOT NULL DEFAULT 'done'",
    "ALTER TABLE runs ADD COLUMN progress {float} NOT NULL DEFAULT 1",
    "ALTER TABLE runs ADD COLUMN error_json TEXT NULL",
    "ALTER TABLE runs ADD COLUMN request_json TEXT NULL",
    "ALTER TABLE runs ADD COLUMN claimed_by TEXT NULL",
    "ALTER TABLE runs ADD COLUMN heartbeat_at TEXT{key} NULL",
    "ALTER TABLE runs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0",
    "CREATE INDEX runs_status ON runs (status, created_at, id)",
)

#: The schema step that keeps the address of the client that queued a job (an open service
#: bounds the unfinished jobs of each address).
CLIENT_MIGRATION: tuple[str, ...] = ("ALTER TABLE runs ADD COLUMN client TEXT NULL",)

#: Claims tried in a row when other processes take the oldest job first.
_CLAIM_TRIES = 8
_OLDEST = "SELECT id FROM runs WHERE status = 'queued' ORDER BY created_at, id LIMIT 1"
_CLAIM = (
    "UPDATE runs SET status = 'running', claimed_by = ?, heartbeat_at = ?, updated_at = ?, "
    "attempts = attempts + 1 WHERE id = ? AND status = 'queued'"
)
_MINE = "id = ? AND claimed_by = ? AND status = 'running'"
#: What a finished job leaves behind of its claim and request.
_RELEASED = "request_json = NULL, claimed_by = NULL, heartbeat_at = NULL"


class QueueFull(ValueError):
    """A job refused because its owner (or client) already has ``limit`` unfinished jobs."""

    def __init__(self, unfinished: int, limit: int) -> None:
        super().__init__(f"{unfinished} jobs are queued or running, the most allowed is {limit}")
        self.unfinished, self.limit = unfinished, limit


@dataclass(frozen=True)
class Claim:
    """A job claimed by one process: its run id, the request it was stored with and how many
    times it has been claimed, this time included."""

    run_id: str
    request: dict[str, Any]
    attempts: int


def _before(now: str, seconds: float) -> str:
    """The ISO-8601 timestamp ``seconds`` [s] before ``now``, in the same form."""
    then = datetime.fromisoformat(now) - timedelta(seconds=seconds)
    return then.isoformat(timespec="microseconds")


class JobQueue:
    """The job operations of :class:`~scenarios.store.RunStore`, which mixes them in: they use
    its dialect, connections, clock, checked inserts and read-back."""

    _dialect: Any
    _use: Callable[[Any], AbstractContextManager[Any]]
    _execute: Callable[..., Any]
    _now: Callable[[], str]
    _insert: Callable[..., RunRecord]
    _confirm: Callable[[str], None]

    def add_job(
        self,
        *,
        request: Mapping[str, Any],
        seed: int,
        samples: int,
        catalog_version: str,
        name: str | None = None,
        owner: str | None = None,
        idempotency_key: str | None = None,
        request_hash: str | None = None,
        client: str | None = None,
        max_unfinished: int | None = None,
    ) -> RunRecord:
        """Store a queued job and return it once it is committed and read back.

        ``request`` (strict JSON) is what the claimant gets to run it; ``seed``, ``samples``
        [count] and ``catalog_version`` are those asked for, replaced by the result's when the
        job is done. Idempotency keys work as for :meth:`RunStore.add`: a retry returns the run
        stored first, whatever its state. ``client`` is the address that sent the request.
        With ``max_unfinished``, raises :class:`QueueFull` when ``owner`` (or, with no owner,
        ``client``) already has that many jobs queued or running.
        """
        if not isinstance(request, Mapping):
            raise ValueError(f"request must be a mapping, got {type(request).__name__}")
        fields = NewRun.checked(
            name, seed, samples, catalog_version, owner, idempotency_key, request_hash
        )
        client = check_opt_str(client, "client")
        state = ("queued", 0.0, dumps(request, "request"), client)
        admit = None
        if max_unfinished is not None:
            limit = check_int(max_unfinished, "max_unfinished", 1)
            admit = functools.partial(self._admit, owner=fields.owner, client=client, limit=limit)
        return self._insert(fields, None, ("null", "null"), state, admit)

    def _admit(self, conn: Any, *, owner: str | None, client: str | None, limit: int) -> None:
        """:class:`QueueFull` when ``owner`` (else ``client``) has ``limit`` unfinished jobs."""
        if owner is not None:
            whose, params = "owner = ?", (owner,)
        elif client is not None:
            whose, params = "owner IS NULL AND client = ?", (client,)
        else:
            return
        unfinished = self._execute(
            conn,
            f"SELECT COUNT(*) FROM runs WHERE status IN ('queued', 'running') AND {whose}",
            params,
        ).fetchone()[0]
        if unfinished >= limit:
            raise QueueFull(int(unfinished), limit)

    def claim_job(self, worker: str, server: str = "", limit: int | None = None) -> Claim | None:
        """Claim the oldest queued job for ``worker`` (a name unique to the claiming process),
        or ``None`` when no job is queued. With ``limit``, ``None`` also while ``limit`` jobs
        are running on ``server`` (those whose claimant's name starts with it, ``worker``
        included). Looking costs one read; only a claim writes."""
        if limit is not None and not worker.startswith(server):
            raise ValueError(f"worker {worker!r} is not named after its server {server!r}")
        for _ in range(_CLAIM_TRIES):
            with self._use(self._dialect.connection()) as conn:
                row = self._execute(conn, _OLDEST).fetchone()
            if row is None:
                return None
            with self._write(exclusive=limit is not None) as conn:
                if limit is not None and self._running_on(conn, server) >= limit:
                    return None
                now = self._now()
                if self._execute(conn, _CLAIM, (worker, now, now, row[0])).rowcount == 1:
                    request, attempts = self._execute(
                        conn, "SELECT request_json, attempts FROM runs WHERE id = ?", (row[0],)
                    ).fetchone()
                    return Claim(row[0], json.loads(request), int(attempts))
            # another process claimed it first: look again
        return None

    def _running_on(self, conn: Any, server: str) -> int:
        """How many jobs run on ``server`` (claimed by a name starting with it)."""
        return int(
            self._execute(
                conn,
                "SELECT COUNT(*) FROM runs WHERE status = 'running' "
                "AND substr(claimed_by, 1, ?) = ?",
                (len(server), server),
            ).fetchone()[0]
        )

    def queue_position(self, run_id: str) -> int | None:
        """Where the queued job ``run_id`` stands in the queue (1: the next to be claimed), or
        ``None`` when it is not queued."""
        with self._use(self._dialect.connection()) as conn:
            row = self._execute(
                conn,
                "SELECT COUNT(*) FROM runs q JOIN runs r ON r.id = ? AND r.status = 'queued' "
                "WHERE q.status = 'queued' AND (q.created_at < r.created_at "
                "OR (q.created_at = r.created_at AND q.id <= r.id))",
                (run_id,),
            ).fetchone()
        return int(row[0]) or None

    def heartbeat(self, worker: str, run_ids: Sequence[str]) -> int:
        """Renew the heartbeat of ``worker``'s jobs ``run_ids`` (those still its own); returns
        how many were renewed."""
        if not run_ids:
            return 0
        marks = ", ".join("?" * len(run_ids))
        return self._update(
            "UPDATE runs SET heartbeat_at = ? WHERE claimed_by = ? AND status = 'running' "
            f"AND id IN ({marks})",
            (self._now(), worker, *run_ids),
        )

    def set_progress(self, run_id: str, worker: str, progress: float) -> bool:
        """Record that ``progress`` [-] (in [0, 1]) of ``worker``'s job ``run_id`` is done; a
        value below the one recorded is ignored. Returns whether the row changed."""
        if not (isinstance(progress, int | float) and math.isfinite(progress)):
            raise ValueError(f"progress must be a finite number, got {progress!r}")
        share = min(1.0, max(0.0, float(progress)))
        now = self._now()
        changed = self._update(
            f"UPDATE runs SET progress = ?, updated_at = ?, heartbeat_at = ? WHERE {_MINE} "
            "AND progress < ?",
            (share, now, now, run_id, worker, share),
        )
        return changed == 1

    def finish_job(
        self,
        run_id: str,
        worker: str,
        *,
        scenario: Mapping[str, Any],
        result: Mapping[str, Any],
        seed: int,
        samples: int,
        catalog_version: str,
    ) -> bool:
        """Store the outcome of ``worker``'s job ``run_id``: it becomes ``done`` with its
        scenario, result, seed, samples [count] and catalog version. Returns ``False`` when the
        job is no longer ``worker``'s (nothing is written), ``True`` once the row is committed
        and read back."""
        fields = NewRun.checked(None, seed, samples, catalog_version, None, None, None)
        stored = (dumps(scenario, "scenario"), dumps(result, "result"))
        changed = self._update(
            "UPDATE runs SET status = 'done', progress = 1, scenario_json = ?, result_json = ?, "
            f"seed = ?, samples = ?, catalog_version = ?, updated_at = ?, {_RELEASED} "
            f"WHERE {_MINE}",
            (
                *stored,
                fields.seed,
                fields.samples,
                fields.catalog_version,
                self._now(),
                run_id,
                worker,
            ),  # fmt: skip
        )
        if changed == 1:
            self._confirm(run_id)
        return changed == 1

    def fail_job(self, run_id: str, worker: str, error: Mapping[str, Any]) -> bool:
        """End ``worker``'s job ``run_id`` as ``failed`` with ``error`` (the HTTP API's error
        shape); ``False`` when the job is no longer ``worker``'s."""
        changed = self._update(
            f"UPDATE runs SET status = 'failed', error_json = ?, updated_at = ?, {_RELEASED} "
            f"WHERE {_MINE}",
            (dumps(error, "error"), self._now(), run_id, worker),
        )
        return changed == 1

    def requeue_job(self, run_id: str, worker: str, *, refund: bool = False) -> bool:
        """Put ``worker``'s job ``run_id`` back in the queue (its process stopped before it
        ended); with ``refund`` the claim is not counted as an attempt (``worker`` ended the job
        itself). ``False`` when the job is no longer ``worker``'s."""
        attempts = "attempts - 1" if refund else "attempts"
        changed = self._update(
            f"UPDATE runs SET status = 'queued', progress = 0, attempts = {attempts}, "
            f"claimed_by = NULL, heartbeat_at = NULL, updated_at = ? WHERE {_MINE}",
            (self._now(), run_id, worker),
        )
        return changed == 1

    def recover(self, lease: float, attempts: int, error: Mapping[str, Any]) -> tuple[int, int]:
        """Take back the jobs whose heartbeat is older than ``lease`` [s]: those claimed
        ``attempts`` times already are failed with ``error``, the others queued again. Returns
        ``(queued, failed)``, the counts of each."""
        now = self._now()
        stale = "status = 'running' AND heartbeat_at < ?"
        cutoff = _before(now, lease)
        with self._use(self._dialect.connection()) as conn:
            found = self._execute(conn, f"SELECT 1 FROM runs WHERE {stale} LIMIT 1", (cutoff,))
            if found.fetchone() is None:
                return 0, 0
        with self._write() as conn:
            failed = self._execute(
                conn,
                f"UPDATE runs SET status = 'failed', error_json = ?, updated_at = ?, {_RELEASED} "
                f"WHERE {stale} AND attempts >= ?",
                (dumps(error, "error"), now, cutoff, attempts),
            ).rowcount
            queued = self._execute(
                conn,
                "UPDATE runs SET status = 'queued', progress = 0, claimed_by = NULL, "
                f"heartbeat_at = NULL, updated_at = ? WHERE {stale}",
                (now, cutoff),
            ).rowcount
        return queued, failed

    # ------------------------------------------------------------------ plumbing

    @contextlib.contextmanager
    def _write(self, exclusive: bool = False) -> Iterator[Any]:
        """A connection inside a write transaction (``exclusive``: serialised with the other
        exclusive ones), committed when the block ends."""
        dialect = self._dialect
        with (
            self._use(dialect.connection()) as conn,
            dialect.transaction(conn, exclusive=exclusive),
        ):
            yield conn

    def _update(self, query: str, params: tuple[Any, ...]) -> int:
        """Run one write ``query`` in its own transaction; the rows it changed."""
        with self._write() as conn:
            return int(self._execute(conn, query, params).rowcount)
