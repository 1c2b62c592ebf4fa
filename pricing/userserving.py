"""The user's own serving measurements: a serving file laid over the catalog's rows.

A serving file is a CSV file in the catalog's ``serving.csv`` format (``costmodel serving
import`` writes one from the saved results of a benchmark tool, :mod:`pricing.benchmarks`), with
two more columns a benchmark measures: ``ttft_ms`` and ``tpot_ms``, the median time to first
token and per output token [ms]. Each row is one measured operating point:

- required: ``model``, ``precision``, ``gpu`` (catalog ids), ``framework``, ``input_tokens``,
  ``output_tokens`` [tokens per request], ``tokens_per_s_per_gpu`` [tokens/s per GPU, input +
  output], ``as_of`` (ISO date), ``source``;
- optional: ``id`` (made from the row when empty), ``gpus_per_replica`` [GPU],
  ``concurrency`` (requests in flight, or ``offline``), ``tokens_per_s_per_user`` [output
  tokens/s per request], ``ttft_ms``, ``tpot_ms``, ``estimated_fields``, ``note``.

A column no row uses may be left out of the header. :func:`read_serving` reads and checks a file
on its own; :func:`apply_serving` lays its rows over a catalog, before the catalog's own: where
one of them holds for a GPU and a build's GPU count, the catalog's rows of that GPU are not used
(:func:`pricing.serving.tokens_per_s`). Every problem raises
:class:`~pricing.errors.CatalogError` naming the file, the row (``line N``) and the column.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import re
from collections.abc import Iterable
from pathlib import Path
from types import MappingProxyType

from .catalog import Catalog, file_columns
from .errors import CatalogError
from .models import ServingPoint
from .suggest import closest, closest_hint
from .vocabulary import SERVING_PRECISIONS
from .wholefile import write_whole

__all__ = ["MAX_SERVING_BYTES", "SERVING_COLUMNS", "apply_serving", "read_serving", "write_serving"]

#: The columns of a serving file: the catalog's ``serving.csv`` and the two latencies.
SERVING_COLUMNS: tuple[str, ...] = (*file_columns("serving"), "ttft_ms", "tpot_ms")
#: The largest serving file :func:`read_serving` reads [byte].
MAX_SERVING_BYTES = 16 * 2**20
_REQUIRED = (
    "model",
    "precision",
    "gpu",
    "framework",
    "input_tokens",
    "output_tokens",
    "tokens_per_s_per_gpu",
    "as_of",
    "source",
)
_OFFLINE = "offline"


class _Cells:
    """One row of a serving file with typed, located accessors."""

    def __init__(self, file: str, line: int, cells: dict[str, str]) -> None:
        self.file, self.row, self.cells = file, f"line {line}", cells

    def error(self, column: str | None, problem: str) -> CatalogError:
        return CatalogError(problem, file=self.file, row_id=self.row, column=column)

    def text(self, column: str) -> str:
        value = self.cells.get(column, "")
        if not value and column in _REQUIRED:
            raise self.error(column, "is required")
        return value

    def number(self, column: str, integer: bool = False) -> float | int | None:
        value = self.text(column)
        if not value:
            return None
        pattern = r"[+-]?\d+" if integer else r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?"
        if not re.fullmatch(pattern, value):
            kind = "a whole number" if integer else "a number"
            raise self.error(column, f"{value!r} is not {kind}")
        return int(value) if integer else float(value)

    def concurrency(self) -> tuple[int | None, bool]:
        if self.cells.get("concurrency", "").lower() == _OFFLINE:
            return None, True
        return self.number("concurrency", integer=True), False


def row_id(model: str, precision: str, gpu: str, shape: tuple[int, int], setup: str) -> str:
    """A serving row's id: ``<model>/<precision>/<gpu>/<input>x<output>/<setup>``, the setup
    lowercased with every run of other characters than letters, digits, ``.`` and ``_`` made
    one ``-``."""
    slug = re.sub(r"[^a-z0-9._]+", "-", setup.lower()).strip("-") or "row"
    return f"{model}/{precision}/{gpu}/{shape[0]}x{shape[1]}/{slug}"


def _setup(c: _Cells, gpus: int | None, concurrency: int | None, offline: bool) -> str:
    load = _OFFLINE if offline else f"c{concurrency}" if concurrency else "c-unknown"
    return f"{c.text('framework')}-{gpus or 'n'}gpu-{load}"


def _point(c: _Cells) -> ServingPoint:
    concurrency, offline = c.concurrency()
    gpus = c.number("gpus_per_replica", integer=True)
    model, precision, gpu = (c.text(k).lower() for k in ("model", "precision", "gpu"))
    shape = (c.number("input_tokens", integer=True), c.number("output_tokens", integer=True))
    try:
        return ServingPoint(
            id=c.text("id")
            or row_id(model, precision, gpu, shape, _setup(c, gpus, concurrency, offline)),
            model=model,
            precision=precision,
            gpu=gpu,
            gpus_per_replica=gpus,
            framework=c.text("framework"),
            input_tokens=shape[0],
            output_tokens=shape[1],
            concurrency=concurrency,
            offline=offline,
            tokens_per_s_per_gpu=c.number("tokens_per_s_per_gpu"),
            tokens_per_s_per_user=c.number("tokens_per_s_per_user"),
            as_of=c.text("as_of"),
            source=c.text("source"),
            note=c.text("note"),
            estimated_fields=tuple(
                v.strip() for v in c.text("estimated_fields").split(";") if v.strip()
            ),
            ttft_ms=c.number("ttft_ms"),
            tpot_ms=c.number("tpot_ms"),
            file=c.file,
        )
    except CatalogError as exc:
        raise exc.located(file=c.file, row_id=c.row) from None


def _rows(file: str, text: str) -> list[_Cells]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [h.strip() for h in reader.fieldnames or []]
    if not header:
        raise CatalogError("the file is empty; a serving file starts with a header", file=file)
    unknown = [h for h in header if h not in SERVING_COLUMNS]
    if unknown:
        raise CatalogError(
            f"unknown column(s) {', '.join(map(repr, unknown))}; "
            f"valid: {', '.join(SERVING_COLUMNS)}",
            file=file,
            row_id="line 1",
        )
    missing = [h for h in _REQUIRED if h not in header]
    if missing:
        raise CatalogError(f"missing column(s): {', '.join(missing)}", file=file, row_id="line 1")
    rows = []
    for line, record in enumerate(csv.reader(io.StringIO(text, newline="")), start=1):
        if line == 1 or not any(v.strip() for v in record):
            continue
        if len(record) != len(header):
            raise CatalogError(
                f"has {len(record)} fields, the header {len(header)}",
                file=file,
                row_id=f"line {line}",
            )
        rows.append(_Cells(file, line, {h: v.strip() for h, v in zip(header, record, strict=True)}))
    return rows


def read_serving(path: str | os.PathLike[str]) -> tuple[ServingPoint, ...]:
    """Read and check a serving file (CSV): every row on its own (numbers, ranges, the
    precision, an ISO date, the id's form) and no id twice; model and GPU ids are checked
    against a catalog by :func:`apply_serving`. Each row's ``file`` is ``path``.

    Raises:
        CatalogError: the file cannot be read, is too large, holds no row, or a row is invalid
            (file, row and column named).
    """
    file = os.fspath(path)
    if Path(file).suffix.lower() != ".csv":
        raise CatalogError("a serving file is a .csv file", file=file)
    try:
        with open(file, "rb") as f:
            raw = f.read(MAX_SERVING_BYTES + 1)
        text = raw.decode("utf-8-sig")
    except FileNotFoundError:
        raise CatalogError("file not found", file=file) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"cannot read the file: {exc}", file=file) from None
    if len(raw) > MAX_SERVING_BYTES:
        raise CatalogError(f"the file is larger than {MAX_SERVING_BYTES:,} bytes", file=file)
    points: dict[str, tuple[ServingPoint, str]] = {}
    for cells in _rows(file, text):
        point = _point(cells)
        if point.id in points and not cells.text("id"):  # a made id: told apart by its line
            point = dataclasses.replace(point, id=f"{point.id}-{cells.row.replace(' ', '')}")
        if point.id in points:
            raise cells.error("id", f"a second row {point.id!r} (first at {points[point.id][1]})")
        points[point.id] = (point, cells.row)
    if not points:
        raise CatalogError("holds no serving rows", file=file)
    return tuple(p for p, _ in points.values())


def _cell(value: object) -> str:
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def write_serving(path: str | os.PathLike[str], points: Iterable[ServingPoint]) -> None:
    """Write ``points`` as a serving file at ``path`` (a folder that does not exist is made);
    the file is replaced whole, never left in part.

    Raises:
        OSError: the file cannot be written (``path`` is then unchanged).
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(SERVING_COLUMNS)
    for p in points:
        values = {f.name: getattr(p, f.name) for f in dataclasses.fields(p)}
        values["concurrency"] = _OFFLINE if p.offline else p.concurrency
        values["estimated_fields"] = ";".join(p.estimated_fields)
        writer.writerow(_cell(values[c]) for c in SERVING_COLUMNS)
    write_whole(path, out.getvalue())


def _known(point: ServingPoint, column: str, ids: Iterable[str], listing: str) -> None:
    value = getattr(point, column)
    valid = sorted(ids)
    if value not in valid:
        hint = closest_hint(closest(value, valid))
        raise CatalogError(
            f"unknown {column} id {value!r}{hint} (see 'costmodel catalog {listing}')",
            file=point.file,
            row_id=point.id,
            column=column,
        )


def apply_serving(catalog: Catalog, points: Iterable[ServingPoint]) -> Catalog:
    """A new catalog value: ``catalog`` with ``points`` before its own serving rows, and each
    model's precisions widened to those the points measure. ``catalog`` is not changed.

    Raises:
        CatalogError: a model or GPU id is not in the catalog (the closest ids named).
    """
    points = tuple(points)
    if not points:
        return catalog
    models = dict(catalog.models)
    for p in points:
        _known(p, "model", catalog.models, "models")
        _known(p, "gpu", catalog.gpus, "gpus")
        model = models[p.model]
        if p.precision not in model.precisions:
            wider = tuple(x for x in SERVING_PRECISIONS if x in {*model.precisions, p.precision})
            models[p.model] = dataclasses.replace(model, precisions=wider)
    return dataclasses.replace(
        catalog, serving=points + catalog.serving, models=MappingProxyType(models)
    )
