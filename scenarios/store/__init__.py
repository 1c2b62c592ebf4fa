"""The run store: evaluated runs kept in SQLite (the default) or PostgreSQL.

The REST API uses it for ``POST /v1/runs`` and ``GET /v1/runs/<id>``; the batch runner uses
:meth:`RunStore.find` to skip scenarios whose cache key already has a stored result.

Storage rules:

* The location comes from the argument, else the ``COSTMODEL_DB`` environment variable, else
  ``<platformdirs user data dir>/costmodel/runs.sqlite3``: a file path or ``sqlite:///PATH``
  (SQLite), or ``postgresql://user@host/db`` (PostgreSQL, with
  ``pip install "gpu-costmodel[postgres]"``). Any other URL scheme is a :class:`StoreError`
  before anything is opened (:func:`parse_location`).
* SQLite: one connection per thread and process, WAL journaling, ``BEGIN IMMEDIATE`` writes.
  PostgreSQL: one connection pool per process (made on first use, so forked gunicorn workers
  never share connections), at most ``pool_size`` connections each.
* Both hold one schema, versioned and migrated in order (:data:`MIGRATIONS`); opening an older
  database upgrades it, opening a newer one raises :class:`StoreError`.
* Runs with a cache key are unique per ``(owner, cache_key)``: concurrent writers of one key
  store one row (``INSERT ... ON CONFLICT DO NOTHING``) and all receive it. Runs stored with an
  idempotency key (the HTTP API's ``Idempotency-Key``) are unique per ``(owner, key)`` in the
  same way, and keep the hash of the request that stored them: the same key with another
  request raises :class:`KeyReused`.
* :meth:`RunStore.add` returns only after the row is committed and read back through another
  connection; every database failure is a :class:`StoreError`.
* Timestamps are ISO-8601 UTC strings with microseconds (``2026-11-29T17:50:00.123456+00:00``),
  so text order is time order; ids and timestamps compare byte by byte on both backends.
* Every import of prices (``costmodel prices import`` and ``pull``) is kept in the table
  ``price_history`` (:meth:`RunStore.add_prices`, :meth:`RunStore.price_history`), so that
  ``costmodel prices history`` can show how a price moved.
* A run may be stored before it is evaluated, as a job (:mod:`.jobs`): ``queued``, claimed by
  one process (``running``, with its progress and a heartbeat), then ``done`` or ``failed``.
  Runs stored evaluated are ``done`` from the start.
* Owners are opaque strings (the API passes a hash of the API key, never the key). A run stored
  with an owner is visible only to that owner; a run stored without one only to ``owner=None``.
"""

from .jobs import Claim, QueueFull
from .location import MaybeStored, StoreError, parse_location
from .pricehistory import PriceObservation
from .records import STATUSES, RunRecord
from .runstore import DEFAULT_POOL_SIZE, MIGRATIONS, KeyReused, RunStore

__all__ = [
    "DEFAULT_POOL_SIZE",
    "Claim",
    "KeyReused",
    "MIGRATIONS",
    "MaybeStored",
    "STATUSES",
    "PriceObservation",
    "QueueFull",
    "RunRecord",
    "RunStore",
    "StoreError",
    "parse_location",
]
