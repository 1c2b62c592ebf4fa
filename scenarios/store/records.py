"""What the run store holds: :class:`RunRecord`, and the checks every value passes before it is
written.

Conventions: timestamps are ISO-8601 UTC strings with microseconds
(``2026-11-29T17:50:00.123456+00:00``), so text order is time order; scenario and result are
stored as compact, strict JSON text (no NaN or Infinity); ``seed`` and ``samples`` [count] are
64-bit signed integers. A run is ``done`` when stored with its result; a job (a run evaluated
after it was stored) is ``queued``, then ``running``, then ``done`` or ``failed``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "COLUMNS",
    "INT64_MIN",
    "SELECTED",
    "NewRun",
    "STATUSES",
    "RunRecord",
    "check_int",
    "check_opt_str",
    "dumps",
]

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

#: The columns of the ``runs`` table in the order of :class:`RunRecord`'s fields.
COLUMNS = (
    "id, owner, name, cache_key, scenario_json, result_json, seed, samples, "
    "catalog_version, created_at, updated_at"
)
#: What a query reads of a run: :data:`COLUMNS`, then its status, progress and error.
SELECTED = f"{COLUMNS}, status, progress, error_json"
#: The states of a run, in the order a job passes through them.
STATUSES = ("queued", "running", "done", "failed")


@dataclass(frozen=True)
class RunRecord:
    """One stored run.

    ``scenario`` is the resolved scenario mapping and ``result`` the result's JSON form; both
    are fresh dicts decoded from the database, ``None`` until a job is done. ``created_at`` and
    ``updated_at`` are ISO-8601 UTC timestamps with microseconds. ``status`` is one of
    :data:`STATUSES`, ``progress`` the share of a job's work done [-] (1 once done) and
    ``error`` a failed job's error in the HTTP API's shape (``code``, ``status``, ``message``,
    ``errors``).
    """

    id: str
    owner: str | None
    name: str | None
    cache_key: str | None
    scenario: dict[str, Any] | None = field(hash=False, repr=False)
    result: dict[str, Any] | None = field(hash=False, repr=False)
    seed: int
    samples: int
    catalog_version: str
    created_at: str
    updated_at: str
    status: str = "done"
    progress: float = 1.0
    error: dict[str, Any] | None = field(default=None, hash=False, repr=False)

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> RunRecord:
        """The record of a row of :data:`SELECTED` (JSON columns as text)."""
        run_id, owner, name, cache_key, scenario_json, result_json, *rest = row
        seed, samples, catalog_version, created_at, updated_at, status, progress, error = rest
        return cls(
            id=run_id,
            owner=owner,
            name=name,
            cache_key=cache_key,
            scenario=json.loads(scenario_json),
            result=json.loads(result_json),
            seed=seed,
            samples=samples,
            catalog_version=catalog_version,
            created_at=created_at,
            updated_at=updated_at,
            status=status,
            progress=float(progress),
            error=None if error is None else json.loads(error),
        )

    def summary(self) -> dict[str, Any]:
        """Return a small JSON-able listing entry without the (large) result.

        Keys: ``id``, ``name``, ``seed``, ``samples``, ``catalog_version``, ``created_at`` and,
        when the result has it, ``breakeven_p50`` (median break-even utilisation [-], ``None``
        meaning "never").
        """
        out: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "seed": self.seed,
            "samples": self.samples,
            "catalog_version": self.catalog_version,
            "created_at": self.created_at,
        }
        breakeven = (self.result or {}).get("breakeven_utilisation")
        if isinstance(breakeven, Mapping) and "p50" in breakeven:
            out["breakeven_p50"] = breakeven["p50"]
        return out


@dataclass(frozen=True)
class NewRun:
    """What every new run is stored with, checked by :meth:`checked`."""

    name: str | None
    seed: int
    samples: int
    catalog_version: str
    owner: str | None
    idempotency_key: str | None
    request_hash: str | None

    @classmethod
    def checked(
        cls,
        name: Any,
        seed: Any,
        samples: Any,
        catalog_version: Any,
        owner: Any,
        idempotency_key: Any,
        request_hash: Any,
    ) -> NewRun:
        """The fields, or ``ValueError`` naming the first that is invalid."""
        if name is not None and not isinstance(name, str):
            raise ValueError(f"name must be a string or None, got {name!r}")
        if not isinstance(catalog_version, str) or not catalog_version:
            raise ValueError(f"catalog_version must be a non-empty string, got {catalog_version!r}")
        if (request_hash is None) != (idempotency_key is None):
            raise ValueError("idempotency_key and request_hash go together")
        return cls(
            name,
            check_int(seed, "seed", INT64_MIN),
            check_int(samples, "samples", 1),
            catalog_version,
            check_opt_str(owner, "owner"),
            check_opt_str(idempotency_key, "idempotency_key"),
            check_opt_str(request_hash, "request_hash"),
        )


def dumps(value: Any, what: str) -> str:
    """Serialise to compact, strict JSON; NaN/Infinity or non-JSON types are a ValueError."""
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":"))
    except ValueError as exc:  # NaN / Infinity (also circular references)
        raise ValueError(
            f"{what} is not valid JSON (NaN or Infinity are not allowed): {exc}"
        ) from exc
    except TypeError as exc:
        raise ValueError(f"{what} is not JSON-serialisable: {exc}") from exc


def check_int(value: Any, what: str, minimum: int) -> int:
    """``value`` if it is an int (not a bool) in ``[minimum, INT64_MAX]``, else a ValueError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an integer, got {value!r}")
    if not minimum <= value <= INT64_MAX:
        raise ValueError(f"{what} must be in [{minimum}, {INT64_MAX}], got {value}")
    return value


def check_opt_str(value: Any, what: str) -> str | None:
    """``value`` if it is ``None`` or a non-empty string, else a ValueError."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string or None, got {value!r}")
    return value
