"""Run many scenario files at once, resumably, and write a result and a report for each.

>>> from scenarios.batch import run_batch
>>> summary = run_batch(["scenarios/examples"], "out", workers=4, formats=("html", "md"))
>>> summary.failed, summary.skipped          # counts
>>> summary.summary_csv                      # out/summary.csv, one row per scenario

How it works:

* :func:`expand_paths` turns folders (recursively, ``*.yaml``/``*.yml``) and globs into files; a
  file may hold one scenario or a list. Each scenario is loaded and validated in the calling
  process; one that cannot be loaded becomes a ``failed`` item and the others still run.
* A plan (``kind: plan``) is run, stored and reported like a scenario; its result is a plan
  result and its ``summary.csv`` row fills the plan columns instead of the scenario ones.
* Every scenario is keyed by :meth:`Scenario.key` (resolved scenario, seed, samples and catalog
  version). A key already in the run store is not recomputed: its stored result is reused and the
  item is ``skipped`` (loaded from the store). New results are stored as soon as they arrive, so a
  batch killed midway and rerun only computes what is missing; the store's unique key index
  keeps it free of duplicates.
* Jobs run in ``spawn``-ed worker processes (``workers`` of them, default ``os.cpu_count()``;
  one worker runs in the calling process) or on an existing Dask distributed cluster. Each job is
  exactly ``scenarios.evaluate(scenario, samples, seed)``, so a result does not depend on where, in
  which order or beside what it ran.
* Every file is written to a temporary name in its folder and moved into place with
  :func:`os.replace`, so no reader ever sees half a file; temporary files left by a killed run
  are removed when the next batch starts in the same folder. Per scenario ``<slug>.json`` (the
  result contract) is written last, after the reports.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from marshmallow import ValidationError

from costmodel.plan_result import PlanResult
from costmodel.result import Result
from present import Answer, from_dict, to_dict, to_json
from present.formatting import slug, text_cell
from present.reports import write_atomic as _write_atomic
from pricing import Catalog, PriceEntry, ServingPoint, apply_prices, apply_serving, load_catalog

from .executor import BatchError, Done, Job, one_line, run_jobs, write_error, write_reports
from .loader import KINDS, load_documents
from .modelconfig import names_config
from .plan import Plan
from .scenario import Scenario, load_document
from .store import RunStore

__all__ = ["BatchError", "BatchItem", "BatchSummary", "expand_paths", "run_batch"]

_SUFFIXES = (".yaml", ".yml")
_SUMMARY = "summary.csv"
_TEMP = re.compile(r"^\..+\.[0-9a-f]{32}\.tmp$")  # ours and present.reports'


@dataclass(frozen=True)
class BatchItem:
    """One scenario or plan of a batch.

    ``file`` is the scenario's source (``path``, or ``path[i]`` for item ``i`` of a list file);
    ``name`` its name (``""`` when unreadable); ``status`` is ``"ok"`` (computed now),
    ``"skipped"`` (result loaded from the run store) or ``"failed"`` (``error`` says why);
    ``outputs`` are the files written or kept for it (result JSON first); ``key`` the cache key.
    """

    file: str
    name: str
    status: str
    error: str = ""
    outputs: tuple[Path, ...] = ()
    key: str = ""


@dataclass(frozen=True)
class BatchSummary:
    """What a batch did: its items in input order and the ``summary.csv`` written."""

    items: tuple[BatchItem, ...]
    out_dir: Path
    summary_csv: Path

    def _count(self, status: str) -> int:
        return sum(item.status == status for item in self.items)

    @property
    def ok(self) -> int:
        """Scenarios computed in this batch [count]."""
        return self._count("ok")

    @property
    def skipped(self) -> int:
        """Scenarios whose result was loaded from the run store [count]."""
        return self._count("skipped")

    @property
    def failed(self) -> int:
        """Scenarios that could not be loaded, run or written [count]."""
        return self._count("failed")


# --------------------------------------------------------------------------- paths and names


def _yaml_files(folder: Path) -> list[Path]:
    """YAML files under ``folder``, recursively, sorted, skipping hidden files and folders."""
    found = [
        p
        for p in folder.rglob("*")
        if p.suffix.lower() in _SUFFIXES
        and p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    ]
    return sorted(found, key=lambda p: p.as_posix())


def expand_paths(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The YAML files named by ``paths``, in argument order, each file once.

    A folder gives its ``*.yaml``/``*.yml`` files recursively (sorted; hidden entries skipped); a
    glob (``*``, ``?``, ``[``; ``**`` recurses) gives its matching YAML files and the YAML files of
    matching folders; any other path is kept as given, even when missing, so that the batch reports
    it as a failed item. A glob matching nothing is kept too, for the same reason.
    """
    out: list[Path] = []
    seen: set[str] = set()

    def add(path: Path) -> None:
        ident = os.path.normcase(os.path.abspath(path))
        if ident not in seen:
            seen.add(ident)
            out.append(path)

    for raw in paths:
        text = os.fspath(raw)
        path = Path(text)
        if path.is_dir():
            for f in _yaml_files(path):
                add(f)
        elif any(c in text for c in "*?["):
            import glob

            matches = sorted(glob.glob(text, recursive=True))
            if not matches:
                add(path)
            for m in map(Path, matches):
                if m.is_dir():
                    for f in _yaml_files(m):
                        add(f)
                elif m.suffix.lower() in _SUFFIXES:
                    add(m)
        else:
            add(path)
    return out


# --------------------------------------------------------------------------- files


def _output_folder(out: Path) -> Path:
    """``out``, made if missing; :class:`BatchError` when it is a file or lies under one, or
    cannot be made."""
    above = next((p for p in (out, *out.parents) if p.exists()), None)
    if above is not None and not above.is_dir():
        which = "" if above == out else f"{above} "
        raise BatchError(f"{out}: {which}is a file, not a folder; the outputs need a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BatchError(f"{out}: cannot make the folder: {exc.strerror or exc}") from None
    return out


def _remove_stale_temps(folder: Path) -> None:
    """Delete temporary files a killed batch left in ``folder``."""
    for p in folder.iterdir():
        if _TEMP.match(p.name) and p.is_file():
            p.unlink(missing_ok=True)


# --------------------------------------------------------------------------- the batch


@dataclass
class _Entry:
    file: str
    name: str
    kind: str = ""  # "scenario" or "plan" as the document says; "" when it cannot tell
    scenario: Scenario | Plan | None = None
    document: tuple[Any, str, dict[str, int]] | None = None
    error: str = ""
    key: str = ""
    slug: str = ""
    status: str = ""
    result: Answer | None = None
    outputs: list[Path] = field(default_factory=list)

    def fail(self, message: str) -> None:
        self.status, self.error = "failed", message


def _load(path: Path, catalog: Catalog | None = None) -> list[_Entry]:
    """One entry per scenario of ``path``, resolved against ``catalog`` (default: the shipped
    one); a file that cannot be read is one failed entry."""
    try:
        docs = load_documents(path)
    except Exception as exc:  # ScenarioError, or a defect: either fails this file alone
        return [_Entry(str(path), "", status="failed", error=one_line(exc))]
    if not docs:
        return [_Entry(str(path), "", status="failed", error=f"{path}: empty list of scenarios")]
    entries = []
    for source, data, lines in docs:
        name = data.get("name") if isinstance(data, dict) else None
        kind = data.get("kind", "scenario") if isinstance(data, dict) else None
        entry = _Entry(source, name if isinstance(name, str) else "")
        entry.kind = kind if kind in KINDS else ""
        try:
            # load_files() does exactly this for every item; per item, a bad one fails alone.
            entry.scenario = load_document(data, source, lines, catalog, path.parent)
            # a worker resolves the document again, where the config file may not be
            portable = entry.scenario.document if names_config(data) else data
            entry.document = (portable, source, lines)
            entry.name = entry.scenario.name
        except Exception as exc:  # ScenarioError, or a defect: either fails this item alone
            entry.fail(one_line(exc))
        entries.append(entry)
    return entries


def _check_formats(formats: Iterable[str]) -> tuple[str, ...]:
    from present.reports import FORMATS

    if isinstance(formats, str):
        formats = (formats,)
    out = tuple(dict.fromkeys(formats))
    bad = [f for f in out if f not in FORMATS]
    if bad:
        raise BatchError(f"unknown report format {bad[0]!r}; valid formats: {', '.join(FORMATS)}")
    return out


#: The source of item i of a file that holds a list of documents: ``path[i]``.
_ITEM = re.compile(r"(.*)\[(\d+)\]")


def _assign_slugs(entries: Iterable[_Entry]) -> None:
    """The slug of each entry's file (``lab.yaml`` -> ``lab``, item i of a list ``many.yaml[i]``
    -> ``many-i``), then ``<slug>-2``, ``-3``... in input order; ``summary`` is reserved."""
    used = {"summary"}
    for entry in entries:
        if entry.scenario is None:
            continue
        item = _ITEM.fullmatch(entry.file)
        name = f"{Path(item[1]).stem}-{item[2]}" if item else Path(entry.file).stem
        base = stem = slug(name)
        n = 2
        while stem in used:
            stem, n = f"{base}-{n}", n + 1
        used.add(stem)
        entry.slug = stem


def _report_paths(out: Path, stem: str, formats: Sequence[str]) -> list[tuple[str, str]]:
    """Reports other than ``json`` (the result JSON itself is the ``json`` report)."""
    return [(fmt, str(out / f"{stem}.{fmt}")) for fmt in formats if fmt != "json"]


def _current(out: Path, entry: _Entry, data: bytes, formats: Sequence[str]) -> bool:
    """Whether the outputs of a stored result are already in ``out`` (result JSON identical)."""
    path = out / f"{entry.slug}.json"
    try:
        if path.read_bytes() != data:
            return False
    except OSError:
        return False
    return all(Path(p).is_file() for _, p in _report_paths(out, entry.slug, formats))


def _kept_outputs(out: Path, entry: _Entry, formats: Sequence[str]) -> list[Path]:
    paths = [out / f"{entry.slug}.json"]
    for fmt, p in _report_paths(out, entry.slug, formats):
        paths.append(Path(p))
        if fmt == "md":
            paths += sorted(out.glob(f"{entry.slug}_*.svg"))
    return paths


def _level(u: float) -> str:
    """Column suffix of a utilisation level: ``0.50``; more digits only when needed."""
    r = round(float(u), 6)
    return f"{r:.2f}" if abs(r * 100 - round(r * 100)) < 1e-6 else f"{r:g}"


def _rounded(value: float, digits: int) -> float:
    return round(float(value), digits)


def _scenario_cells(r: Result) -> dict[str, Any]:
    """A scenario's summary cells: no value is an empty cell with its ``*_never`` flag set."""
    row: dict[str, Any] = {}
    be = r.breakeven_utilisation
    for p in ("p10", "p50", "p90"):
        value = getattr(be, p)
        row[f"breakeven_{p}"] = _rounded(value, 4)
        row[f"breakeven_{p}_never"] = math.isnan(value)
    for j, u in enumerate(r.utilisation):
        row[f"prob_buy_cheaper_u{_level(u)}"] = _rounded(r.prob_buy_cheaper[j], 4)
    for j, u in enumerate(r.utilisation):
        value = r.payback_months.p50[j]
        row[f"payback_p50_u{_level(u)}"] = _rounded(value, 2)
        row[f"payback_p50_u{_level(u)}_never"] = math.isnan(value)
    return row


#: A plan's summary columns: the best candidate, its cost [USD] and all-cloud's for reference.
_PLAN_COLUMNS = (
    "best_servers",
    "best_reserved",
    "best_cost_p50",
    "best_cost_p90",
    "all_cloud_cost_p50",
    "best_prob_cheaper_than_cloud",
)


def _plan_cells(r: PlanResult) -> dict[str, Any]:
    """A plan's summary cells: counts, money [USD] to the cent, the share [-] to 4 decimals."""
    best = r.best
    values = (
        best.servers,
        best.instances,
        _rounded(best.cost.p50, 2),
        _rounded(best.cost.p90, 2),
        _rounded(r.all_cloud.cost.p50, 2),
        _rounded(best.prob_cheaper_than_cloud, 4),
    )
    return dict(zip(_PLAN_COLUMNS, values, strict=True))


def _summary_row(e: _Entry) -> dict[str, Any]:
    """One row of ``summary.csv``: the cells of the result's kind; the others stay empty."""
    row: dict[str, Any] = {
        "file": e.file,
        "name": e.name,
        "kind": e.kind,
        "status": e.status,
        "error": e.error,
    }
    r = e.result
    if r is None:
        return row
    row["warnings"] = len(r.warnings)
    row |= _plan_cells(r.result) if r.is_plan else _scenario_cells(r.result)
    row["result"] = f"{e.slug}.json" if e.outputs else ""
    return row


def _summary_bytes(entries: Sequence[_Entry]) -> bytes:
    """``summary.csv``: one row per scenario or plan, numeric columns numeric (rounded to 4
    decimals for shares and utilisation, 2 for months and money), a scenario's levels as columns
    in ascending order, then the plan columns. Text cells are quoted and never a formula
    (:func:`~present.formatting.text_cell`)."""
    import csv

    import pandas

    levels = sorted(
        {
            round(float(u), 6)
            for e in entries
            if e.result is not None and not e.result.is_plan
            for u in e.result.utilisation
        }
    )
    head = ["file", "name", "kind", "status", "error", "warnings"]
    head += [f"breakeven_{p}{flag}" for p in ("p10", "p50", "p90") for flag in ("", "_never")]
    head += [f"prob_buy_cheaper_u{_level(u)}" for u in levels]
    head += [f"payback_p50_u{_level(u)}{flag}" for u in levels for flag in ("", "_never")]
    head += _PLAN_COLUMNS
    frame = pandas.DataFrame([_summary_row(e) for e in entries], columns=[*head, "result"])
    flags = [c for c in frame.columns if c.endswith("_never")]
    frame[flags] = frame[flags].astype("boolean")
    counts = ["warnings", "best_servers", "best_reserved"]
    frame[counts] = frame[counts].astype("Int64")
    text = ["file", "name", "kind", "status", "error", "result"]
    frame[text] = frame[text].map(text_cell)
    # Quoted text keeps a carriage return inside its cell (unquoted, it would end the row).
    return frame.to_csv(index=False, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC).encode()


class _Progress:
    """A progress bar on stderr (rich) showing each scenario's status, failures printed above
    it; silent when disabled or when stderr is not a terminal."""

    def __init__(self, total: int, enabled: bool) -> None:
        self._bar = None
        if enabled and total and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.table import Column

            self._bar = Progress(
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                TextColumn("{task.fields[status]}", table_column=Column(no_wrap=True)),
                console=Console(file=sys.stderr),
            )
            self._task = self._bar.add_task("batch", total=total, status="")
            self._bar.start()

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def done(self, entry: _Entry) -> None:
        if self._bar is None:
            return
        label = {"ok": "ok", "skipped": "cached", "failed": "FAILED"}[entry.status]
        if entry.status == "failed":
            self._bar.console.print(
                f"FAILED {entry.file}: {entry.error}", markup=False, highlight=False
            )
        self._bar.update(self._task, advance=1, status=f"{label}: {entry.name or entry.file}")


@dataclass(frozen=True)
class _Batch:
    """What every job of one batch shares: where its outputs go, in which formats, the run
    store, the catalog version results must have, the sampling overrides and the user's
    prices and serving measurements."""

    out: Path
    formats: tuple[str, ...]
    store: RunStore
    catalog_version: str
    samples: int | None
    seed: int | None
    prices: tuple[PriceEntry, ...] = ()
    serving: tuple[ServingPoint, ...] = ()

    def reports(self, entries: Iterable[_Entry]) -> tuple[tuple[str, str], ...]:
        """``(format, path)`` of every report of ``entries``."""
        return tuple(t for e in entries for t in _report_paths(self.out, e.slug, self.formats))


def run_batch(
    paths: Iterable[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    samples: int | None = None,
    seed: int | None = None,
    formats: Sequence[str] = ("html",),
    store: RunStore | str | os.PathLike[str] | None = None,
    progress: bool = True,
    prices: Sequence[PriceEntry] = (),
    serving: Sequence[ServingPoint] = (),
) -> BatchSummary:
    """Run every scenario of ``paths`` and write its result and reports into ``out_dir``.

    Parameters
    ----------
    paths:
        Files, folders and globs (see :func:`expand_paths`).
    out_dir:
        Folder for ``<slug>.json`` (the result contract), ``<slug>.<format>`` reports and
        ``summary.csv``; created if missing. Slugs come from the files' names (``lab.yaml`` ->
        ``lab``, item i of a list ``many.yaml`` -> ``many-i``); a repeated slug gets ``-2``,
        ``-3``... in input order.
    workers:
        Worker processes [count] (``spawn`` context); default ``os.cpu_count()``; ``1`` runs in
        this process. Ignored when ``scheduler`` is given.
    scheduler:
        Address of an existing Dask distributed scheduler (``tcp://host:8786``) to run on instead.
    samples, seed:
        Override every scenario's ``simulation`` block [count], [-].
    formats:
        Report formats (``present.reports.FORMATS``); ``json`` is the result JSON itself.
    store:
        The run store, or its location (a SQLite path or a ``postgresql://`` URL); ``None``
        opens the default (``COSTMODEL_DB``).
        Results already stored under a scenario's cache key are reused, not recomputed.
    progress:
        Show a progress bar on stderr (only when stderr is a terminal).
    prices, serving:
        The user's prices (:func:`pricing.read_prices`) and serving measurements (before the
        catalog's rows, :func:`pricing.read_serving`) laid over the catalog every scenario
        is resolved against, here and in the workers.

    Raises :class:`BatchError` when no scenario file is found, an option is invalid or the Dask
    scheduler cannot be reached, and :class:`~scenarios.store.StoreError` when the run store
    cannot be opened; problems of single scenarios are ``failed`` items instead.
    """
    formats = _check_formats(formats)
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise BatchError(f"workers must be a positive integer, got {workers!r}")
    files = expand_paths(paths)
    if not files:
        raise BatchError("no scenario files (*.yaml, *.yml) found")
    if not isinstance(store, RunStore):
        store = RunStore(store)  # a bad location fails here, before any output is written
    out = _output_folder(Path(out_dir))
    _remove_stale_temps(out)
    prices, serving = tuple(prices), tuple(serving)  # unknown ids fail below, before any work
    catalog = apply_serving(apply_prices(load_catalog(), prices), serving)
    batch = _Batch(out, formats, store, load_catalog().version, samples, seed, prices, serving)

    entries = [entry for path in files for entry in _load(path, catalog)]
    _assign_slugs(entries)
    with _Progress(len(entries), progress) as bar:
        _run_entries(entries, batch, workers, scheduler, bar)
    try:
        summary_csv = _write_atomic(out / _SUMMARY, _summary_bytes(entries))
    except OSError as exc:  # every result is stored and written: a rerun writes the summary
        reason = exc.strerror or exc
        raise BatchError(
            f"{out / _SUMMARY}: cannot write the summary: {reason}; the results are written "
            "and stored, and a rerun writes it"
        ) from None
    items = tuple(
        BatchItem(e.file, e.name, e.status, e.error, tuple(e.outputs), e.key) for e in entries
    )
    return BatchSummary(items=items, out_dir=out, summary_csv=summary_csv)


def _run_entries(
    entries: list[_Entry], batch: _Batch, workers: int | None, scheduler: str | None, bar: _Progress
) -> None:
    """Group the entries by cache key, compute the keys the store lacks, rewrite the outputs of
    stored results that are not current, and finish every entry as its job ends."""
    groups = _groups(entries, batch, bar)
    local = scheduler is None
    compute: list[Job] = []  # on the Dask cluster when there is one
    rewrite: list[Job] = []  # outputs of stored results: always here
    for key, group in groups.items():
        record = batch.store.find(key)
        if record is None:
            compute.append(_compute_job(key, group, batch, local))
            continue
        job = _reuse(record, key, group, batch, bar)
        if job is not None:
            rewrite.append(job)
    n = workers or os.cpu_count() or 1
    if local:
        runs = [run_jobs(rewrite + compute, n, None)]
    else:
        runs = [run_jobs(rewrite, n, None), run_jobs(compute, n, scheduler)]
    for outcomes in runs:
        for job, outcome in outcomes:
            for e in _finish(job, outcome, groups[job.key], batch):
                bar.done(e)


def _groups(entries: list[_Entry], batch: _Batch, bar: _Progress) -> dict[str, list[_Entry]]:
    """The loaded entries by cache key, in input order; the others are done (failed)."""
    groups: dict[str, list[_Entry]] = {}
    for entry in entries:
        if entry.scenario is None:
            bar.done(entry)
            continue
        try:
            entry.key = entry.scenario.key(batch.samples, batch.seed)
        except Exception as exc:
            entry.fail(one_line(exc))
            bar.done(entry)
            continue
        groups.setdefault(entry.key, []).append(entry)
    return groups


def _compute_job(key: str, group: list[_Entry], batch: _Batch, local: bool) -> Job:
    """The job that evaluates the first document of ``group``: a local worker writes every
    report of the group; a Dask worker renders them (all but ``md``, whose charts are separate
    files, and ``json``, the result itself) for this process to write."""
    document = group[0].document
    if local:
        return Job(
            key, document, None, batch.samples, batch.seed,
            write=batch.reports(group), prices=batch.prices, serving=batch.serving,
        )  # fmt: skip
    render = tuple(f for f in batch.formats if f not in ("md", "json"))
    return Job(
        key, document, None, batch.samples, batch.seed, render=render, prices=batch.prices,
        serving=batch.serving,
    )  # fmt: skip


def _reuse(record, key: str, group: list[_Entry], batch: _Batch, bar: _Progress) -> Job | None:
    """Take a stored result for ``group`` (each entry ``skipped``): an entry whose outputs are
    current is done; the job that rewrites the others' outputs, if any."""
    try:
        stored = from_dict(record.result)
    except ValidationError as exc:
        for e in group:
            e.fail(f"the stored result {record.id} cannot be read: {exc.messages}")
            bar.done(e)
        return None
    data = to_json(stored)
    stale = [e for e in group if not _current(batch.out, e, data, batch.formats)]
    for e in group:
        e.status, e.result = "skipped", stored
        if e not in stale:
            e.outputs = _kept_outputs(batch.out, e, batch.formats)
            bar.done(e)
    if not stale:
        return None
    return Job(key, None, stored, batch.samples, batch.seed, write=batch.reports(stale))


def _finish(
    job: Job, outcome: Done | BaseException, group: list[_Entry], batch: _Batch
) -> list[_Entry]:
    """Store a finished job's result and write the outputs of its entries; returns them."""
    if isinstance(outcome, BaseException):
        return _fail(group, one_line(outcome))
    if job.document is None:  # the outputs of a stored result
        todo = [e for e in group if not e.outputs]  # the others' outputs were current
    else:
        error = _store(job, outcome.result, group, batch)
        if error:
            return _fail(group, error)
        todo = group
    data = to_json(outcome.result)
    rendered = dict(outcome.rendered)
    for e in todo:
        _write_outputs(e, job, outcome, data, rendered, batch)
    return todo


def _fail(group: list[_Entry], message: str) -> list[_Entry]:
    for e in group:
        e.fail(message)
    return group


def _store(job: Job, result: Answer, group: list[_Entry], batch: _Batch) -> str:
    """Add a computed result to the run store and mark its entries ``ok``; else why not."""
    version = result.catalog.version if result.catalog else None
    if version != batch.catalog_version:
        return f"worker used catalog {version!r}, this batch {batch.catalog_version!r}"
    try:
        batch.store.add(
            scenario=dict(result.document),
            result=to_dict(result),
            seed=result.seed,
            samples=result.samples,
            catalog_version=batch.catalog_version,
            name=group[0].name,
            cache_key=job.key,
        )
    except (ValueError, KeyError) as exc:
        return f"store: {one_line(exc)}"
    for e in group:
        e.status, e.result = "ok", result
    return ""


def _write_outputs(
    e: _Entry, job: Job, outcome: Done, data: bytes, rendered: dict[str, bytes], batch: _Batch
) -> None:
    """Collect or write the reports of ``e``, then its result JSON ``data`` (last); a report or
    file that could not be written fails ``e``."""
    targets = _report_paths(batch.out, e.slug, batch.formats)
    error = outcome.report_error
    written: list[Path] = []
    try:
        if job.write:  # written by the worker
            mine = {Path(p) for _, p in targets}
            written = [
                Path(p) for p in outcome.written if Path(p) in mine or _md_image(Path(p), e.slug)
            ]
        else:  # Dask: its workers may not share our filesystem
            for fmt, path in targets:
                if fmt in rendered:
                    written.append(_write_atomic(Path(path), rendered[fmt]))
                    continue
                done = write_reports(outcome.result, [(fmt, path)])
                written += [Path(p) for p in done.written]
                error = error or done.report_error
        e.outputs = [_write_atomic(batch.out / f"{e.slug}.json", data), *written]
    except OSError as exc:
        error = error or f"writing outputs: {write_error(exc)}"
    if error:
        e.fail(error)


def _md_image(path: Path, stem: str) -> bool:
    return path.suffix == ".svg" and path.name.startswith(f"{stem}_")
