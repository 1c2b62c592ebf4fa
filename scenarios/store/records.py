"""What the run store holds: :class:`RunRecord`, and the checks every value passes before it is
written.

Conventions: timestamps are ISO-8601 UTC strings with microseconds
(``2026-11-29T17:50:00.123456+00:00``), so text order is time order; scenario and result are
stored as compact, strict JSON text (no NaN or Infinity); ``seed`` and ``samples`` [count] are
64-bit signed integers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["COLUMNS", "INT64_MIN", "RunRecord", "check_int", "check_opt_str", "dumps"]

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

#: The columns of the ``runs`` table in the order of :class:`RunRecord`'s fields.
COLUMNS = (
    "id, owner, name, cache_key, scenario_json, result_json, seed, samples, "
    "catalog_version, created_at, updated_at"
)


@dataclass(frozen=True)
class RunRecord:
    """One stored, evaluated run.

    ``scenario`` is the resolved scenario mapping and ``result`` the result's JSON form; both
    are fresh dicts decoded from the database. ``created_at`` and ``updated_at`` are ISO-8601
    UTC timestamps with microseconds.
    """

    id: str
    owner: str | None
    name: str | None
    cache_key: str | None
    scenario: dict[str, Any] = field(hash=False, repr=False)
    result: dict[str, Any] = field(hash=False, repr=False)
    seed: int
    samples: int
    catalog_version: str
    created_at: str
    updated_at: str

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> RunRecord:
        """The record of a row of :data:`COLUMNS` (JSON columns as text)."""
        run_id, owner, name, cache_key, scenario_json, result_json, *rest = row
        seed, samples, catalog_version, created_at, updated_at = rest
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
        breakeven = self.result.get("breakeven_utilisation")
        if isinstance(breakeven, Mapping) and "p50" in breakeven:
            out["breakeven_p50"] = breakeven["p50"]
        return out


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
