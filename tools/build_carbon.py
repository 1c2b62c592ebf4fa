"""Build the grid carbon-intensity catalog from the reference table.

Usage::

    python tools/build_carbon.py [--reference DIR] [--out DIR] [--check]

Reads the team's sourced table ``tools/reference/carbon_grid.csv`` (countries, US eGRID
subregions and cloud regions, each with its year, basis and source), kept in the repository so
the build is reproducible from it alone, and writes ``grid_carbon.csv`` into ``pricing/data``.
``--check`` writes nothing and fails when the committed file differs.

Each reference basis is mapped to ``lifecycle`` or ``operational`` by :data:`BASES`; a basis not
listed stops the build, so a new source is classified on purpose. A figure the reference derives
(its note says ``DERIVED``) or maps to a place by its compiler's own judgement (``mapping is
mine``) is named in ``estimated_fields``. The year keeps its first four digits; what followed
them goes into the note. ``embodied_carbon.csv`` and ``cloud_regions.csv`` are written by hand
(data/NOTES.md gives every derivation). ``tests/test_carbon_catalog.py`` re-runs the build and
compares.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

from pricing.catalog import file_columns

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REFERENCE = REPO_ROOT / "tools" / "reference"
DEFAULT_OUT = REPO_ROOT / "pricing" / "data"
FILE = "grid_carbon.csv"

#: Reference basis (its first words) -> catalog basis.
BASES: dict[str, str] = {
    "lifecycle (Ember": "lifecycle",
    "lifecycle (Electricity Maps": "lifecycle",
    "location-based operational grid average (Google": "operational",
    "location-based operational (combustion; eGRID": "operational",
}
#: Words of a reference note that mark the figure as this catalog's derivation or mapping.
_ESTIMATED = ("DERIVED", "mapping is mine")


def _basis(text: str) -> str:
    for head, basis in BASES.items():
        if text.startswith(head):
            return basis
    raise SystemExit(f"build_carbon: unmapped basis {text!r}; add it to BASES")


def _row(rec: dict[str, str]) -> dict[str, str]:
    year = rec["year"].strip()
    notes = [rec["notes"].strip()]
    if year[4:].strip():
        notes.append(f"Year as the source gives it: {year}.")
    return {
        "id": rec["id"].strip(),
        "kind": rec["kind"].strip(),
        "name": rec["name"].strip(),
        "g_co2e_per_kwh": rec["g_co2e_per_kwh"].strip(),
        "year": year[:4],
        "basis": _basis(rec["basis"].strip()),
        "estimated_fields": "g_co2e_per_kwh" if any(w in rec["notes"] for w in _ESTIMATED) else "",
        "source": rec["source"].strip(),
        "note": " ".join(n for n in notes if n),
    }


def build(reference: Path) -> str:
    """The CSV text of ``grid_carbon.csv`` from ``reference/carbon_grid.csv``."""
    with (reference / "carbon_grid.csv").open(encoding="utf-8", newline="") as fh:
        rows = [_row(rec) for rec in csv.DictReader(fh)]
    ids = [r["id"].casefold() for r in rows]
    if len(set(ids)) != len(ids):
        raise SystemExit("build_carbon: duplicate grid ids")
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=file_columns("grid_carbon"), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="fail when the file differs")
    args = parser.parse_args(argv)
    text, target = build(args.reference), args.out / FILE
    if args.check:
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            print(f"out of date: {FILE} (run tools/build_carbon.py)", file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
