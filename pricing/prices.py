"""The user's own prices: a CSV or YAML file of negotiated or current prices laid over a catalog.

A prices file holds two kinds of rows, told apart by which id they name:

- an instance price: ``instance, pricing, usd_per_hour, as_of, source`` (``pricing`` one of
  ``on_demand``, ``spot``, ``reserved_1y``, ``reserved_3y``) [USD/h] per instance;
- a GPU purchase price: ``gpu, usd, as_of, source`` [USD] per GPU.

``as_of`` is the ISO date the price was quoted or observed; ``source`` says who quoted it (it
becomes the origin of the value in a result's assumptions); an optional ``note`` column is kept
for the reader. A CSV file has a header with these column names (a column that no row uses may
be left out); a YAML file is a list of mappings with the same keys.

:func:`read_prices` reads and checks a file on its own (columns, numbers, dates, duplicates);
:func:`apply_prices` lays the prices over a :class:`~pricing.catalog.Catalog` and returns a new
catalog value, leaving the given one untouched. Every problem raises
:class:`~pricing.errors.CatalogError` naming the file, the row (``line N``) and the column;
unknown ids list the closest valid ones.

>>> import datetime as dt
>>> months_after(dt.date(2024, 2, 29), 12)
datetime.date(2025, 2, 28)
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import io
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .catalog import Catalog
from .errors import CatalogError
from .suggest import closest, closest_hint, closest_instances, did_you_mean
from .text import text_problem
from .vocabulary import PRICING_MODELS
from .wholefile import write_whole

__all__ = [
    "MAX_PRICES_BYTES",
    "PURCHASE",
    "STALE_AFTER_MONTHS",
    "PriceEntry",
    "apply_prices",
    "months_after",
    "read_prices",
    "write_prices",
]

#: The ``pricing`` of a GPU row: the price of buying one GPU.
PURCHASE = "purchase"
#: A price quoted more than this many months before today is stale [month].
STALE_AFTER_MONTHS = 12
#: The largest prices file :func:`read_prices` reads [byte]; a larger one is refused unread.
MAX_PRICES_BYTES = 16 * 2**20

_INSTANCE_COLUMNS = ("instance", "pricing", "usd_per_hour")
_GPU_COLUMNS = ("gpu", "usd")
_COMMON = ("as_of", "source", "note")
_COLUMNS = (*_INSTANCE_COLUMNS, *_GPU_COLUMNS, *_COMMON)
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SUFFIXES = {".csv": "csv", ".yaml": "yaml", ".yml": "yaml"}


def months_after(day: dt.date, months: int) -> dt.date:
    """The same day of the month ``months`` calendar months later; the last day of the month
    where that month is shorter (29 February + 12 months is 28 February)."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    month += 1
    following = dt.date(year + (month == 12), month % 12 + 1, 1)
    last = (following - dt.timedelta(days=1)).day
    return dt.date(year, month, min(day.day, last))


@dataclass(frozen=True)
class PriceEntry:
    """One price of a prices file.

    Attributes:
        kind: ``"gpu"`` (a purchase price) or ``"instance"``.
        id: catalog id, lowercase (``"rtx-4090"``, ``"aws/p3.2xlarge"``).
        pricing: ``"purchase"`` for a GPU; ``"on_demand" | "spot" | "reserved_1y" |
            "reserved_3y"`` for an instance.
        value: price [USD] per GPU, or [USD/h] per instance.
        as_of: ISO date ``YYYY-MM-DD`` the price was quoted or observed.
        source: who quoted it, as the file says.
        file: the file as it was given (path). row: where in it (``"line 3"``).
        note: free text.
    """

    kind: str
    id: str
    pricing: str
    value: float
    as_of: str
    source: str
    file: str
    row: str
    note: str = ""

    @property
    def origin(self) -> str:
        """Where the value came from, for a result's assumptions:
        ``"prices.csv: <source> (as of <as_of>)"``."""
        return f"{Path(self.file).name}: {self.source} (as of {self.as_of})"

    @property
    def date(self) -> dt.date:
        """``as_of`` as a date."""
        return dt.date.fromisoformat(self.as_of)

    def stale(self, today: dt.date) -> bool:
        """True when the price was quoted more than :data:`STALE_AFTER_MONTHS` calendar
        months before ``today`` (exactly 12 months is not yet stale; one day more is)."""
        # a date after today is not stale (and 9999-12-31 has no date 12 months later)
        return self.date < today and months_after(self.date, STALE_AFTER_MONTHS) < today

    def error(self, column: str | None, problem: str) -> CatalogError:
        """A :class:`CatalogError` at this entry's file, row and ``column``."""
        return CatalogError(problem, file=self.file, row_id=self.row, column=column)


# ---------------------------------------------------------------------------------------------
# reading


class _Cells:
    """One row of a prices file as text cells, with located, typed accessors."""

    def __init__(self, file: str, row: str, cells: Mapping[str, str]) -> None:
        self.file, self.row, self.cells = file, row, cells

    def error(self, column: str | None, problem: str) -> CatalogError:
        return CatalogError(problem, file=self.file, row_id=self.row, column=column)

    def get(self, column: str) -> str:
        return self.cells.get(column, "")

    def required(self, column: str, why: str = "") -> str:
        value = self.get(column)
        if not value:
            raise self.error(column, f"is required{why}")
        return value

    def absent(self, column: str, kind: str) -> None:
        if self.get(column):
            raise self.error(column, f"does not apply to a {kind} row; leave it empty")

    def number(self, column: str, why: str) -> float:
        text = self.required(column, why)
        try:
            value = float(text)
        except ValueError:
            raise self.error(column, f"{text!r} is not a number") from None
        if not math.isfinite(value):
            raise self.error(column, f"{text!r} is not finite")
        return value

    def date(self, column: str) -> str:
        text = self.required(column)
        problem = f"{text!r} is not an ISO date (YYYY-MM-DD)"
        if not _ISO_DATE.match(text):
            raise self.error(column, problem)
        try:
            dt.date.fromisoformat(text)
        except ValueError:
            raise self.error(column, problem) from None
        return text


def _entry(c: _Cells) -> PriceEntry:
    for column, text in c.cells.items():
        problem = text_problem(text, "text")
        if problem is not None:
            raise c.error(column, problem)
    instance, gpu = c.get("instance"), c.get("gpu")
    if instance and gpu:
        raise c.error("gpu", "a row prices either an instance or a GPU, not both")
    common = {
        "as_of": c.date("as_of"),
        "source": c.required("source", " (who quoted the price: it is shown as its origin)"),
        "file": c.file,
        "row": c.row,
        "note": c.get("note"),
    }
    if instance:
        c.absent("usd", "instance")
        pricing = c.required("pricing", f" for an instance ({', '.join(PRICING_MODELS)})")
        if pricing not in PRICING_MODELS:
            hint = did_you_mean(pricing, PRICING_MODELS)
            raise c.error(
                "pricing",
                f"unknown pricing {pricing!r}; valid: {', '.join(PRICING_MODELS)}{hint}",
            )
        value = c.number("usd_per_hour", " for an instance [USD/h]")
        return PriceEntry("instance", instance.casefold(), pricing, value, **common)
    if gpu:
        for column in ("pricing", "usd_per_hour"):
            c.absent(column, "GPU")
        value = c.number("usd", " for a GPU (its purchase price [USD])")
        return PriceEntry("gpu", gpu.casefold(), PURCHASE, value, **common)
    column = "instance" if "instance" in c.cells else "gpu"
    raise c.error(column, "names no instance and no GPU; give one of them")


def _check_header(file: str, header: Sequence[str]) -> None:
    if len(set(header)) != len(header):
        raise CatalogError("duplicate column names in the header", file=file)
    unknown = [h for h in header if h not in _COLUMNS]
    if unknown:
        raise CatalogError(
            f"unexpected column(s): {', '.join(unknown)}; valid: {', '.join(_COLUMNS)}", file=file
        )
    missing = [h for h in ("as_of", "source") if h not in header]
    if missing:
        raise CatalogError(f"missing column(s): {', '.join(missing)}", file=file)
    if "instance" not in header and "gpu" not in header:
        raise CatalogError("needs an 'instance' or a 'gpu' column", file=file)


def _csv_cells(file: str, text: str) -> list[_Cells]:
    reader = csv.DictReader(text.splitlines())
    header = [h.strip() for h in reader.fieldnames or []]
    if not header:
        raise CatalogError("the file is empty; expected a header row", file=file)
    _check_header(file, header)
    rows = []
    for rec in reader:
        line = f"line {reader.line_num}"
        if None in rec or any(v is None for v in rec.values()):
            raise CatalogError("has extra or missing fields", file=file, row_id=line)
        cells = {k.strip(): v.strip() for k, v in rec.items()}
        if any(cells.values()):  # a blank line is skipped
            rows.append(_Cells(file, line, cells))
    return rows


def _yaml_text(value: Any) -> str:
    """A YAML scalar as the text a CSV cell would hold."""
    if value is None:
        return ""
    if isinstance(value, dt.date):  # tagged !!timestamp (a plain 2025-01-31 stays text)
        return value.isoformat()
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return value.strip()
    raise TypeError(type(value).__name__)


def _yaml_loader(text: str):
    """PyYAML's safe loader of ``text`` that keeps dates as the text written: ``as_of`` is
    checked as text, so that ``2026-02-30`` is no ISO date rather than YAML's ValueError."""
    import yaml

    class Loader(yaml.SafeLoader):
        yaml_implicit_resolvers = {
            first: [(tag, regexp) for tag, regexp in resolvers if not tag.endswith(":timestamp")]
            for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
        }

    return Loader(text)


def _duplicate_key(node) -> tuple[str, str] | None:
    """``(row, key)`` of a key given twice in one price's mapping (at the line of the second),
    as written: before YAML merges (``<<``) are applied."""
    import yaml

    for item in node.value if isinstance(node, yaml.SequenceNode) else ():
        keys = [k for k, _ in item.value] if isinstance(item, yaml.MappingNode) else []
        seen: set[str] = set()
        for key in (k for k in keys if isinstance(k, yaml.ScalarNode)):
            if key.value in seen:
                return f"line {key.start_mark.line + 1}", key.value
            seen.add(key.value)
    return None


def _yaml_cells(file: str, text: str) -> list[_Cells]:
    import yaml

    try:
        loader = _yaml_loader(text)  # its reader refuses a control character at once
        try:
            node = loader.get_single_node()
            duplicate = _duplicate_key(node)
            data = None if node is None or duplicate else loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise CatalogError(f"invalid YAML: {exc}".replace("\n", " "), file=file) from None
    except ValueError as exc:  # an integer of over 4,300 digits, an explicit !!timestamp
        reason = str(exc).split(";")[0]  # not Python's advice on sys.set_int_max_str_digits
        raise CatalogError(f"invalid YAML: a value cannot be read: {reason}", file=file) from None
    if duplicate is not None:
        raise CatalogError("duplicate key", file=file, row_id=duplicate[0], column=duplicate[1])
    if not isinstance(data, list):
        raise CatalogError(
            "expected a list of prices (one mapping per price, keys as the CSV columns)",
            file=file,
        )
    rows = []
    for item, value in zip(node.value, data, strict=True):
        line = f"line {item.start_mark.line + 1}"
        if not isinstance(value, dict):
            raise CatalogError("expected a mapping", file=file, row_id=line)
        unknown = [str(k) for k in value if k not in _COLUMNS]
        if unknown:
            raise CatalogError(
                f"unexpected key(s): {', '.join(unknown)}; valid: {', '.join(_COLUMNS)}",
                file=file,
                row_id=line,
            )
        cells = {}
        for key, cell in value.items():
            try:
                cells[key] = _yaml_text(cell)
            except TypeError as exc:
                raise CatalogError(
                    f"expected a number or text, got a {exc}", file=file, row_id=line, column=key
                ) from None
        rows.append(_Cells(file, line, cells))
    return rows


def read_prices(path: str | os.PathLike[str]) -> tuple[PriceEntry, ...]:
    """Read and check a prices file (``.csv``, ``.yaml`` or ``.yml``).

    Checks each row on its own (an id, a known pricing, a finite number, an ISO date, a source,
    text without control characters, in YAML each key once) and that no price is given twice;
    ids are checked against a catalog by :func:`apply_prices`.

    Raises:
        CatalogError: the file cannot be read or is larger than :data:`MAX_PRICES_BYTES`, or a
            row is invalid (file, row and column named).
    """
    file = os.fspath(path)
    kind = _SUFFIXES.get(Path(file).suffix.lower())
    if kind is None:
        raise CatalogError(
            f"cannot tell the format: a prices file ends in {', '.join(_SUFFIXES)}", file=file
        )
    try:
        with open(file, "rb") as f:
            raw = f.read(MAX_PRICES_BYTES + 1)
    except FileNotFoundError:
        raise CatalogError("file not found", file=file) from None
    except OSError as exc:
        raise CatalogError(f"cannot read the file: {exc}", file=file) from None
    if len(raw) > MAX_PRICES_BYTES:
        raise CatalogError(
            f"the file is larger than {MAX_PRICES_BYTES:,} bytes; a prices file holds one row "
            "per catalog price (all of them take some 100 kB)",
            file=file,
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CatalogError(f"cannot read the file: {exc}", file=file) from None
    rows = _csv_cells(file, text) if kind == "csv" else _yaml_cells(file, text)
    entries: list[PriceEntry] = []
    seen: dict[tuple[str, str], PriceEntry] = {}
    for cells in rows:
        entry = _entry(cells)
        earlier = seen.get((entry.id, entry.pricing))
        if earlier is not None:
            column = "instance" if entry.kind == "instance" else "gpu"
            what = f"{entry.pricing} price of" if entry.kind == "instance" else "price of GPU"
            raise entry.error(column, f"a second {what} {entry.id!r} (first at {earlier.row})")
        seen[(entry.id, entry.pricing)] = entry
        entries.append(entry)
    if not entries:
        raise CatalogError("holds no prices", file=file)
    return tuple(entries)


# ---------------------------------------------------------------------------------------------
# writing


def write_prices(path: str | os.PathLike[str], entries: Iterable[PriceEntry]) -> None:
    """Write ``entries`` as a prices CSV file at ``path``, whole or not at all: the text goes to
    a temporary file beside it, renamed over ``path`` only once complete (a folder that does not
    exist is made).

    Raises:
        OSError: the file cannot be written (``path`` is then unchanged).
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(_COLUMNS)
    for e in entries:
        instance = (e.id, e.pricing, repr(e.value), "", "") if e.kind == "instance" else None
        cells = instance or ("", "", "", e.id, repr(e.value))
        writer.writerow((*cells, e.as_of, e.source, e.note))
    write_whole(path, out.getvalue())


# ---------------------------------------------------------------------------------------------
# laying prices over a catalog


def _unknown(entry: PriceEntry, valid: Mapping[str, Any]) -> CatalogError:
    label = "instance id" if entry.kind == "instance" else "GPU id"
    if entry.kind == "instance":
        close = closest_instances(entry.id, {i.id: i.gpu for i in valid.values()})
    else:
        close = closest(entry.id, sorted(valid))
    hint = closest_hint(close)
    listing = "instances" if entry.kind == "instance" else "gpus"
    return entry.error(
        entry.kind,
        f"unknown {label} {entry.id!r}{hint} (see 'costmodel catalog {listing}')",
    )


def _replaced(entry: PriceEntry, record: Any, column: str) -> Any:
    """``record`` with ``column`` set to the entry's value and no longer marked estimated;
    a value the record refuses is an error at the entry's row."""
    changes: dict[str, Any] = {
        column: entry.value,
        "estimated_fields": tuple(f for f in record.estimated_fields if f != column),
    }
    if entry.kind == "gpu":
        changes["price_estimated"] = False
    try:
        return dataclasses.replace(record, **changes)
    except CatalogError as exc:
        source = "usd" if entry.kind == "gpu" else "usd_per_hour"
        raise entry.error(source, exc.problem) from None


def apply_prices(catalog: Catalog, entries: Iterable[PriceEntry]) -> Catalog:
    """A new catalog value: ``catalog`` with the prices of ``entries`` in place of its own.

    Each overlaid price is remembered in :attr:`Catalog.overlay` under ``(id, pricing)``
    (``pricing`` ``"purchase"`` for a GPU), so that resolution can name its origin and the
    advice can tell its age. ``catalog`` itself is not changed. A later file's entry replaces
    an earlier one of the same price.

    Raises:
        CatalogError: an id is not in the catalog (with the closest ids), or a price is outside
            the range the catalog allows (an on-demand price must be positive).
    """
    entries = tuple(entries)
    if not entries:
        return catalog
    gpus = dict(catalog.gpus)
    instances = dict(catalog.instances)
    overlay = dict(catalog.overlay)
    for entry in entries:
        if entry.kind == "gpu":
            if entry.id not in gpus:
                raise _unknown(entry, gpus)
            gpus[entry.id] = _replaced(entry, gpus[entry.id], "price_usd")
        else:
            if entry.id not in instances:
                raise _unknown(entry, instances)
            column = f"{entry.pricing}_usd_per_hour"
            instances[entry.id] = _replaced(entry, instances[entry.id], column)
        overlay[(entry.id, entry.pricing)] = entry
    return dataclasses.replace(
        catalog,
        gpus=MappingProxyType(gpus),
        instances=MappingProxyType(instances),
        overlay=MappingProxyType(overlay),
    )
