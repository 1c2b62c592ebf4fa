"""Make a new catalog version from public price files: the importers of ``costmodel prices
import``, applied to the catalog itself.

Usage::

    python tools/refresh_catalog.py --from FORMAT PATH... [--region R|cheapest]
        [--provider P] [--version V] [--data DIR] [--check]

Reads the files as ``costmodel prices import`` does (same importers, same matching and region
rule), checks every price against the catalog's ranges, then rewrites in ``instances.csv`` only
the price cells the files give and, of those rows, ``as_of`` (when the on-demand price was
imported: it is that price's date) and ``source``; every other row, column and byte stays. It
sets ``version`` and ``as_of`` in ``catalog.json`` (``--version``, default today) and adds a
section to ``CHANGES.md`` listing each price that moved (old -> new, relative change, source,
date), the prices confirmed unchanged and the rows that could not be mapped. The new files are
loaded as a catalog before any is replaced. ``--check`` prints that section and writes nothing.
An importer error, a price outside the catalog's ranges or a version not after the current one
stops with exit status 2 and writes nothing. ``tests/test_refresh_catalog.py`` runs it.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import os
import re
import shutil
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from pricing import CatalogError, apply_prices, read_catalog
from pricing.importers import CHEAPEST, FORMATS, Imported, files, match
from pricing.prices import PriceEntry

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO_ROOT / "pricing" / "data"
_PRICINGS = ("on_demand", "reserved_1y", "reserved_3y", "spot")
_VERSION = re.compile(r"^\d{4}\.\d{2}\.\d{2}$")
# The prefix a refresh gives the source of a row whose other prices it did not import.
_PREFIX = re.compile(r"^(?P<pricings>[a-z_0-9]+(?:, [a-z_0-9]+)*) \(\d{4}-\d{2}-\d{2}\): .*?; "
                     r"other prices: ")  # fmt: skip


@dataclass(frozen=True)
class Moved:
    """One imported price: ``id``, ``pricing``, the catalog's ``old`` cell text (``""`` when
    it had none) and the ``entry`` now written."""

    id: str
    pricing: str
    old: str
    entry: PriceEntry

    @property
    def changed(self) -> bool:
        """Whether the price differs from the catalog's."""
        return not self.old or float(self.old) != self.entry.value


class Refused(Exception):
    """The refresh cannot be made; nothing was written."""


def _source(old: str, entries: list[PriceEntry], priced: set[str], date: str) -> str:
    """A row's new ``source``: the import's source when it gave every price the row has,
    else that source for the imported prices before the older text (a previous refresh's
    prefix is dropped when this one re-imports all the prices it named)."""
    new = "; ".join(dict.fromkeys(e.source for e in entries))
    imported = [p for p in _PRICINGS if p in {e.pricing for e in entries}]
    if priced <= set(imported):
        return new
    earlier = _PREFIX.match(old)
    if earlier and set(earlier["pricings"].split(", ")) <= set(imported):
        old = old[earlier.end() :]
    return f"{', '.join(imported)} ({date}): {new}; other prices: {old}"


def _canonical(cells: list[str], terminator: str) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator=terminator).writerow(cells)
    return out.getvalue()


def _rewrite_row(cells: dict[str, str], entries: list[PriceEntry]) -> list[Moved]:
    """Lay ``entries`` onto one row's ``cells`` (in place); the prices imported."""
    moved = []
    for e in entries:
        column = f"{e.pricing}_usd_per_hour"
        old = cells[column]
        moved.append(Moved(e.id, e.pricing, old, e))
        if moved[-1].changed:
            cells[column] = repr(e.value)
        if e.pricing == "on_demand":
            cells["as_of"] = e.as_of
    priced = {p for p in _PRICINGS if cells[f"{p}_usd_per_hour"]}
    cells["source"] = _source(cells["source"], entries, priced, entries[0].as_of)
    return moved


def rewrite_instances(text: str, entries: tuple[PriceEntry, ...]) -> tuple[str, list[Moved]]:
    """``instances.csv`` with the prices of ``entries`` in place (only the lines of the rows
    they price are rewritten), and the prices imported in file order.

    Raises:
        Refused: a row to rewrite is not in the writer's own form (rewriting it would change
            more than its prices), or spans several lines.
    """
    by_id: dict[str, list[PriceEntry]] = defaultdict(list)
    for e in entries:
        by_id[e.id].append(e)
    lines = text.splitlines(keepends=True)
    header = next(csv.reader(lines[:1]))
    moved: list[Moved] = []
    for i, line in enumerate(lines[1:], start=1):
        row = next(csv.reader([line]), None)
        if not row or row[0] not in by_id:
            continue
        terminator = line[len(line.rstrip("\r\n")) :] or "\n"
        if len(row) != len(header) or _canonical(row, terminator) != line:
            raise Refused(f"instances.csv line {i + 1} ({row[0]}) is not one canonical CSV line")
        cells = dict(zip(header, row, strict=True))
        moved += _rewrite_row(cells, by_id[row[0]])
        lines[i] = _canonical([cells[h] for h in header], terminator)
    return "".join(lines), moved


def _meta(text: str, version: str) -> str:
    """``catalog.json`` with the new ``version`` and ``as_of`` (no other byte changed)."""
    for key, value in (("version", version), ("as_of", version.replace(".", "-"))):
        text, n = re.subn(rf'("{key}"\s*:\s*)"[^"]*"', rf'\g<1>"{value}"', text, count=1)
        if n != 1:
            raise Refused(f"catalog.json has no {key!r} to set")
    return text


def _price_table(moved: list[Moved]) -> list[str]:
    rows = ["  | instance | pricing | old -> new [USD/h] | change | source | as of |",
            "  |---|---|---|---|---|---|"]  # fmt: skip
    for m in moved:
        change = f"{m.entry.value / float(m.old) - 1:+.1%}" if m.old else "new price"
        rows.append(f"  | {m.id} | {m.pricing} | {m.old or '(none)'} -> {m.entry.value!r} | "
                    f"{change} | {m.entry.source} | {m.entry.as_of} |")  # fmt: skip
    return rows


def changelog_section(version: str, command: str, moved: list[Moved], imported: Imported) -> str:
    """The ``CHANGES.md`` section of a refresh: what moved, what was confirmed, what was not
    mapped."""
    changed = [m for m in moved if m.changed]
    same = [m for m in moved if not m.changed]
    moved_line = f"- **Prices that moved** ({len(changed)}):" if changed else "- No price moved."
    out = [f"## {version} — prices refreshed from public price files", "",
           f"Made by `{command}`.", "", moved_line]  # fmt: skip
    if changed:
        out += ["", *_price_table(changed), ""]
    if same:
        listed = ", ".join(f"{m.id} {m.pricing}" for m in same)
        out.append(f"- **Confirmed unchanged** ({len(same)}; `as_of`/`source` updated): {listed}.")
    if imported.unmapped:
        out.append(f"- **Not mapped** ({len(imported.unmapped)} rows of the files):")
        for u in imported.unmapped:
            more = f" and {u.rows - 1} more" if u.rows > 1 else ""
            out.append(f"  - `{u.file}`, row '{u.row}'{more}: {u.reason}")
    if imported.skipped:
        out.append(f"- {imported.skipped} rows of the files price no GPU instance (skipped).")
    return "\n".join(out) + "\n"


def _with_section(changes: str, section: str) -> str:
    """``CHANGES.md`` with ``section`` before its first version section."""
    at = changes.find("\n## ")
    if at < 0:
        return changes.rstrip("\n") + "\n\n" + section
    return changes[: at + 1] + section + "\n" + changes[at + 1 :]


def _check_version(version: str, current: str) -> None:
    try:
        valid = bool(_VERSION.match(version)) and dt.date.fromisoformat(version.replace(".", "-"))
    except ValueError:
        valid = False
    if not valid:
        raise Refused(f"--version {version!r} is not a date 'YYYY.MM.DD'")
    if version <= current:
        raise Refused(f"--version {version} is not after the catalog's version {current}")


def _replace(data: Path, texts: dict[str, str]) -> None:
    """Check that ``data`` with ``texts`` in place loads as a catalog, then replace the files
    (each one whole)."""
    with tempfile.TemporaryDirectory() as staged:
        shutil.copytree(data, staged, dirs_exist_ok=True)
        for name, text in texts.items():
            Path(staged, name).write_text(text, encoding="utf-8", newline="")
        read_catalog(staged)
    for name, text in texts.items():
        temp = data / f".{name}.refresh"
        temp.write_text(text, encoding="utf-8", newline="")
        os.replace(temp, data / name)


def refresh(args: argparse.Namespace) -> str:
    """Run the refresh; the changelog section (written unless ``args.check``).

    Raises:
        CatalogError: an importer's error, or a price outside the catalog's ranges.
        Refused: no catalog price in the files, or a bad version.
    """
    data = Path(args.data)
    catalog = read_catalog(data)
    version = args.version or dt.datetime.now(dt.UTC).date().strftime("%Y.%m.%d")
    _check_version(version, catalog.version)
    providers = {i.provider for i in catalog.instances.values()}
    batches = [files.read(args.format, p, providers=providers, provider=args.provider)
               for p in args.paths]  # fmt: skip
    region = args.region.strip() if args.region else None
    region = CHEAPEST if region and region.casefold() == CHEAPEST else region
    imported = match(catalog, batches, region=region)
    if not imported.entries:
        raise Refused(f"no price of a catalog instance in {', '.join(args.paths)}")
    apply_prices(catalog, imported.entries)  # the catalog's ranges, before anything is written
    names = catalog.files["instances"], "catalog.json", "CHANGES.md"
    old = {n: (data / n).read_text(encoding="utf-8") for n in names}
    instances, moved = rewrite_instances(old[names[0]], imported.entries)
    command = f"tools/refresh_catalog.py --from {args.format}" + (
        f" --region {region}" if region else ""
    )
    section = changelog_section(version, command, moved, imported)
    if not args.check:
        new = (instances, _meta(old[names[1]], version), _with_section(old[names[2]], section))
        _replace(data, dict(zip(names, new, strict=True)))
    return section


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="format", required=True, choices=sorted(FORMATS))
    parser.add_argument("paths", nargs="+", metavar="PATH", help="the public price files")
    parser.add_argument("--region", metavar="R", help="a region name or 'cheapest' "
                        "(default: each catalog row's own region)")  # fmt: skip
    parser.add_argument("--provider", metavar="P", help="with --from skypilot: every file's")
    parser.add_argument("--version", metavar="V", help="the new version YYYY.MM.DD (today)")
    parser.add_argument("--data", default=DEFAULT_DATA, help="the catalog directory")
    parser.add_argument("--check", action="store_true", help="print the changes, write nothing")
    args = parser.parse_args(argv)
    try:
        section = refresh(args)
    except (CatalogError, Refused) as exc:
        print(f"error: {exc}; nothing was written", file=sys.stderr)
        return 2
    print(section, end="")
    print("(--check: nothing was written)" if args.check else f"wrote {args.data}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
