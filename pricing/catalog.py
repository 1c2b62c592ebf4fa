"""Load, validate and query the dated catalogs shipped as package data in ``pricing/data``.

``load_catalog()`` reads the shipped files once (cached). ``read_catalog(data_dir)`` reads any
directory with the same layout, uncached; tests use it to feed deliberately broken files through
the same validators. Every problem raises :class:`CatalogError` naming file, row id, column and
problem; unknown ids raise :class:`UnknownIdError` listing the closest valid ids.
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import json
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from .carbon import CloudRegion, Embodied, GridIntensity
from .errors import CatalogError, UnknownIdError
from .models import GPU, ApiOffer, Instance, Model, PlatformTier, PriceRecord, ServingPoint
from .suggest import closest, closest_hint, closest_instances
from .text import counted
from .vocabulary import ARCHITECTURE, INTERCONNECTS, PRECISIONS, SERVING_PRECISIONS

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from .prices import PriceEntry

__all__ = ["Catalog", "ScalingPoint", "file_columns", "load_catalog", "read_catalog"]

_T = TypeVar("_T")

_META_FILE = "catalog.json"
_ROLES = (
    "gpus",
    "instances",
    "price_history",
    "platforms",
    "scaling",
    "models",
    "serving",
    "api_offers",
    "grid_carbon",
    "embodied_carbon",
    "cloud_regions",
)
_COLUMNS: dict[str, tuple[str, ...]] = {
    "gpus": (
        "id",
        "name",
        "family",
        "arch",
        "year",
        "fp32_tflops",
        "tf32_tflops",
        "fp16_tflops",
        "int8_tops",
        "memory_gb",
        "bandwidth_gbs",
        "tdp_w",
        "idle_w",
        "idle_w_estimated",
        "price_usd",
        "price_estimated",
        "cooling",
        "form_factor",
        "measured_fp32",
        "measured_fp16",
        "measured_source",
        "estimated_fields",
        "source",
        "note",
    ),
    "instances": (
        "id",
        "provider",
        "tier",
        "name",
        "gpu",
        "gpu_count",
        "vcpus",
        "ram_gib",
        "region",
        "as_of",
        "on_demand_usd_per_hour",
        "reserved_1y_usd_per_hour",
        "reserved_3y_usd_per_hour",
        "spot_usd_per_hour",
        "interconnect",
        "estimated_fields",
        "source",
        "note",
    ),
    "price_history": ("id", "pricing", "usd_per_hour", "valid_from", "valid_to", "source", "note"),
    "platforms": (
        "gpu_count",
        "name",
        "cpu",
        "dram_gb",
        "psu_w",
        "chassis",
        "storage",
        "network",
        "interconnect",
        "price_usd",
        "power_w",
        "form_factors",
        "estimated_fields",
        "source",
        "note",
    ),
    "scaling": ("interconnect", "gpu_count", "efficiency", "estimated", "source", "note"),
    "models": (
        "id",
        "name",
        "params_b",
        "active_params_b",
        "precisions",
        "source",
        "note",
        *ARCHITECTURE,
        "arch_source",
    ),
    "serving": (
        "id",
        "model",
        "precision",
        "gpu",
        "gpus_per_replica",
        "framework",
        "input_tokens",
        "output_tokens",
        "concurrency",
        "tokens_per_s_per_gpu",
        "tokens_per_s_per_user",
        "as_of",
        "estimated_fields",
        "source",
        "note",
    ),
    "api_offers": (
        "id",
        "provider",
        "name",
        "model",
        "input_usd_per_mtok",
        "cached_input_usd_per_mtok",
        "output_usd_per_mtok",
        "as_of",
        "estimated_fields",
        "source",
        "note",
    ),
    "grid_carbon": (
        "id",
        "kind",
        "name",
        "g_co2e_per_kwh",
        "year",
        "basis",
        "estimated_fields",
        "source",
        "note",
    ),
    "embodied_carbon": ("kind", "id", "kg_co2e", "boundary", "estimated_fields", "source", "note"),
    "cloud_regions": ("provider", "region", "grid", "pue", "estimated_fields", "source", "note"),
}
#: The ``concurrency`` cell of an offline max-throughput run.
_OFFLINE = "offline"
_VERSION = re.compile(r"^\d{4}\.\d{2}\.\d{2}$")
_REFERENCE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class ScalingPoint:
    """Multi-GPU scaling efficiency for an interconnect and GPU count.

    Attributes:
        interconnect: ``"nvlink" | "pcie-x16" | "pcie-x8" | "pcie-x4"``.
        gpu_count: GPUs [-]. efficiency: throughput of N GPUs / (N x one GPU) [-], in (0, 1].
        estimated: True when not measured. source, note: citation and derivation.
    """

    interconnect: str
    gpu_count: int
    efficiency: float
    estimated: bool
    source: str
    note: str = ""


@dataclass(frozen=True, eq=False)
class Catalog:
    """One dated, versioned set of catalogs.

    Attributes:
        version: catalog version, ``"YYYY.MM.DD"``. as_of: ISO date the data describe.
        reference_gpu: id of the GPU that measured throughput is relative to.
        gpus, instances: id -> record (read-only mappings, ids lowercase).
        tiers: platform tiers, ascending GPU count (tiers of one count in the file's order).
        scaling: (interconnect, gpu_count) -> :class:`ScalingPoint`.
        bridge_factors: precision -> factor from the V100 32GB to the V100 16GB baseline [-].
        files: role -> file name, as listed in ``catalog.json``.
        models: id -> served model. serving: the measured operating points, in file order (the
            lookup rule is :func:`pricing.serving.tokens_per_s`). api_offers: id -> hosted API
            prices. Empty when a catalog is built without them.
        overlay: (id, pricing) -> the user's price laid over this catalog's (``pricing``
            ``"purchase"`` for a GPU); empty for the shipped catalog (see :mod:`pricing.prices`).
        grids: grid id (casefolded) -> carbon intensity of a country, US eGRID subregion or
            cloud region. embodied: (kind, id) -> embodied carbon of a GPU (``"gpu"``, GPU id)
            or a platform tier (``"platform"``, its GPU count as text). regions: (provider,
            region) -> the grid and PUE of the instances of that region. Empty when a catalog
            is built without them.
    """

    version: str
    as_of: str
    reference_gpu: str
    gpus: Mapping[str, GPU]
    instances: Mapping[str, Instance]
    tiers: tuple[PlatformTier, ...]
    scaling: Mapping[tuple[str, int], ScalingPoint]
    bridge_factors: Mapping[str, float]
    files: Mapping[str, str]
    models: Mapping[str, Model] = field(default_factory=lambda: MappingProxyType({}))
    serving: tuple[ServingPoint, ...] = ()
    api_offers: Mapping[str, ApiOffer] = field(default_factory=lambda: MappingProxyType({}))
    overlay: Mapping[tuple[str, str], PriceEntry] = field(
        default_factory=lambda: MappingProxyType({})
    )
    grids: Mapping[str, GridIntensity] = field(default_factory=lambda: MappingProxyType({}))
    embodied: Mapping[tuple[str, str], Embodied] = field(
        default_factory=lambda: MappingProxyType({})
    )
    regions: Mapping[tuple[str, str], CloudRegion] = field(
        default_factory=lambda: MappingProxyType({})
    )

    @property
    def reference(self) -> GPU:
        """The reference GPU record (unit of normalised work)."""
        return self.gpus[self.reference_gpu]

    @property
    def price_history(self) -> tuple[PriceRecord, ...]:
        """Every superseded price, grouped by instance."""
        return tuple(rec for inst in self.instances.values() for rec in inst.history)

    def gpu(self, gpu_id: str) -> GPU:
        """GPU by id (case-insensitive). Raises :class:`UnknownIdError` listing close ids."""
        return _lookup(self.gpus, gpu_id, "gpu")

    def instance(self, instance_id: str) -> Instance:
        """Instance by ``provider/name`` id (case-insensitive), e.g. ``"aws/p3.8xlarge"``."""
        gpu_of = {i.id: i.gpu for i in self.instances.values()}
        return _lookup(
            self.instances, instance_id, "instance", lambda k: closest_instances(k, gpu_of)
        )

    def model(self, model_id: str) -> Model:
        """Served model by id (case-insensitive), e.g. ``"llama-3.3-70b"``."""
        return _lookup(self.models, model_id, "model")

    def measured_on(self, model_id: str) -> dict[str, list[str]]:
        """The GPU ids with a measured serving row of a model, sorted, by precision (in the
        model's order; precisions without rows left out)."""
        model = self.model(model_id)
        rows = [r for r in self.serving if r.model == model.id]
        gpus = {p: sorted({r.gpu for r in rows if r.precision == p}) for p in model.precisions}
        return {p: ids for p, ids in gpus.items() if ids}

    def api_offer(self, offer_id: str) -> ApiOffer:
        """API offer by ``provider/model`` id (case-insensitive), e.g.
        ``"together/llama-3.3-70b-instruct-turbo"``."""
        return _lookup(self.api_offers, offer_id, "api_offer")

    def platform_tier(self, gpu_count: int, gpu: GPU | None = None) -> PlatformTier:
        """The platform tier of a default build of ``gpu_count`` GPUs: of the smallest size
        holding them (3 GPUs -> a 4-GPU tier), the first listed; given the ``gpu``, the first
        listed that takes its form factor (an SXM module goes on a baseboard server) and whose
        power supply holds the build's peak, ``gpu_count`` x its TDP + the platform's draw
        [W] (else, of those that take it, the one with the largest supply; else the first
        listed, on which the form factor advice refuses the module).

        Raises:
            CatalogError: ``gpu_count`` is not a positive integer or exceeds the largest tier.
        """
        _require_count(gpu_count)
        size = next((t.gpu_count for t in self.tiers if t.gpu_count >= gpu_count), None)
        if size is None:
            counts = ", ".join(str(n) for n in self.tier_counts)
            raise CatalogError(
                f"no platform tier holds {gpu_count} GPUs; the largest tier holds "
                f"{self.tiers[-1].gpu_count} (tiers: {counts})"
            )
        sized = [t for t in self.tiers if t.gpu_count == size]
        taking = [t for t in sized if gpu is not None and t.takes(gpu)]
        if not taking:
            return sized[0]
        fits = (t for t in taking if t.psu_w >= gpu_count * gpu.tdp_w + t.power_w)
        return next(fits, max(taking, key=lambda t: t.psu_w))

    @property
    def tier_counts(self) -> tuple[int, ...]:
        """The GPU counts the platform tiers hold, ascending, each once."""
        return tuple(sorted({t.gpu_count for t in self.tiers}))

    def scaling_efficiency(self, interconnect: str, gpu_count: int) -> float:
        """Multi-GPU scaling efficiency [-] for ``gpu_count`` GPUs on ``interconnect``.

        1.0 for one GPU. Counts between table points (e.g. 3) interpolate linearly in
        log2(count); counts above the largest table point raise :class:`CatalogError`.
        """
        _require_count(gpu_count)
        key = str(interconnect).strip().casefold()
        points = sorted(
            (p.gpu_count, p.efficiency) for (ic, _), p in self.scaling.items() if ic == key
        )
        if not points:
            valid = sorted({ic for ic, _ in self.scaling})
            raise UnknownIdError("interconnect", str(interconnect), closest(key, valid), valid)
        if gpu_count == 1:
            return 1.0
        for (n0, e0), (n1, e1) in zip(points, points[1:], strict=False):
            if n0 <= gpu_count <= n1:
                if gpu_count == n1:
                    return e1
                t = (math.log2(gpu_count) - math.log2(n0)) / (math.log2(n1) - math.log2(n0))
                return e0 + t * (e1 - e0)
        raise CatalogError(
            f"no scaling data for {gpu_count} GPUs on {key}; the table stops at "
            f"{points[-1][0]} GPUs"
        )

    def grid(self, grid_id: str) -> GridIntensity:
        """Grid carbon intensity by id (case-insensitive): ``"US"``, ``"CAMX"``,
        ``"aws/us-east-1"``. Raises :class:`UnknownIdError` listing close ids, as spelt."""
        key = str(grid_id).strip().casefold()
        if key in self.grids:
            return self.grids[key]
        spelt = {k: g.id for k, g in self.grids.items()}
        close = [spelt[k] for k in closest(key, sorted(spelt))]
        raise UnknownIdError("grid", str(grid_id), close, sorted(spelt.values()))

    def gpu_embodied(self, gpu_id: str) -> Embodied:
        """Embodied carbon of one catalog GPU [kg CO2e] (every catalog GPU has a row)."""
        return self.embodied[("gpu", self.gpu(gpu_id).id)]

    def platform_embodied(self, gpu_count: int) -> Embodied:
        """Embodied carbon of the platform tier holding ``gpu_count`` GPUs [kg CO2e]."""
        return self.embodied[("platform", str(self.platform_tier(gpu_count).gpu_count))]

    def region(self, instance: Instance) -> CloudRegion:
        """The grid and PUE of a catalog instance's region (every instance has one)."""
        return self.regions[(instance.provider, instance.region)]


def _require_count(gpu_count: int) -> None:
    if isinstance(gpu_count, bool) or not isinstance(gpu_count, int) or gpu_count < 1:
        raise CatalogError(f"gpu_count must be a positive integer, got {gpu_count!r}")


def _lookup(
    table: Mapping[str, _T],
    raw_id: str,
    kind: str,
    suggest: Callable[[str], list[str]] | None = None,
) -> _T:
    key = str(raw_id).strip().casefold()
    try:
        return table[key]
    except KeyError:
        valid = sorted(table)
        close = suggest(key) if suggest else closest(key, valid)
        raise UnknownIdError(kind, str(raw_id), close, valid) from None


# ---------------------------------------------------------------------------------------------
# reading


class _Row:
    """One CSV row with typed, located accessors."""

    def __init__(self, file: str, row_id: str, values: dict[str, str]) -> None:
        self.file = file
        self.row_id = row_id
        self.values = values

    def error(self, column: str | None, problem: str) -> CatalogError:
        return CatalogError(problem, file=self.file, row_id=self.row_id, column=column)

    def text(self, column: str, *, required: bool = True) -> str:
        return self._present(column, required) or ""

    def _present(self, column: str, required: bool) -> str | None:
        """The cell's text, ``None`` when empty and optional; an error when empty and required."""
        value = self.values[column]
        if not value and required:
            raise self.error(column, "is required")
        return value or None

    def number(self, column: str, *, required: bool = True) -> float | None:
        value = self._present(column, required)
        if value is None:
            return None
        try:
            number = float(value)
        except ValueError:
            raise self.error(column, f"{value!r} is not a number") from None
        if not math.isfinite(number):
            raise self.error(column, f"{value!r} is not finite")
        return number

    def integer(self, column: str, *, required: bool = True) -> int | None:
        value = self._present(column, required)
        if value is None:
            return None
        if not re.fullmatch(r"[+-]?\d+", value):
            raise self.error(column, f"{value!r} is not an integer")
        return int(value)

    def flag(self, column: str) -> bool:
        value = self.values[column].lower()
        if value not in ("true", "false"):
            raise self.error(column, f"{self.values[column]!r} is not true or false")
        return value == "true"

    def names(self, column: str) -> tuple[str, ...]:
        return tuple(v.strip() for v in self.values[column].split(";") if v.strip())

    def build(self, factory: Callable[..., _T], **kwargs: Any) -> _T:
        try:
            return factory(**kwargs)
        except CatalogError as exc:
            raise exc.located(file=self.file, row_id=self.row_id) from None


def _read_rows(
    data_dir: Traversable, file: str, columns: tuple[str, ...], row_id: Callable[[dict], str]
) -> list[_Row]:
    try:
        fh = data_dir.joinpath(file).open("r", encoding="utf-8", newline="")
    except (FileNotFoundError, NotADirectoryError):
        raise CatalogError("file not found", file=file) from None
    with fh:
        reader = csv.DictReader(fh)
        header = list(reader.fieldnames or [])
        if len(set(header)) != len(header):
            raise CatalogError("duplicate column names in the header", file=file)
        missing = [c for c in columns if c not in header]
        if missing:
            raise CatalogError(f"missing column(s): {', '.join(missing)}", file=file)
        extra = [c for c in header if c not in columns]
        if extra:
            raise CatalogError(f"unexpected column(s): {', '.join(extra)}", file=file)
        rows = []
        for lineno, rec in enumerate(reader, start=2):
            if None in rec or any(v is None for v in rec.values()):
                raise CatalogError(
                    f"line {lineno} has {len(rec.get(None) or [])} extra or missing fields",
                    file=file,
                )
            values = {k: v.strip() for k, v in rec.items()}
            if not any(values.values()):
                continue  # blank line
            rid = row_id(values) or f"line {lineno}"
            rows.append(_Row(file, rid, values))
    return rows


def _read_meta(data_dir: Traversable) -> dict[str, Any]:
    try:
        text = data_dir.joinpath(_META_FILE).read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        raise CatalogError("file not found", file=_META_FILE) from None
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogError(f"invalid JSON: {exc}", file=_META_FILE) from None

    def bad(key: str, problem: str) -> CatalogError:
        return CatalogError(problem, file=_META_FILE, column=key)

    if not isinstance(meta, dict):
        raise CatalogError("expected a JSON object", file=_META_FILE)
    version, as_of = meta.get("version"), meta.get("as_of")
    if not isinstance(version, str) or not _VERSION.match(version):
        raise bad("version", f"{version!r} is not 'YYYY.MM.DD'")
    try:
        dt.date.fromisoformat(str(as_of))
    except ValueError:
        raise bad("as_of", f"{as_of!r} is not an ISO date") from None
    if version.replace(".", "-") != as_of:
        raise bad("version", f"version {version!r} does not match as_of {as_of!r}")
    if not isinstance(meta.get("reference_gpu"), str) or not meta["reference_gpu"]:
        raise bad("reference_gpu", "is required")
    files = meta.get("files")
    if not isinstance(files, dict) or any(
        not isinstance(files.get(role), str) or not files[role] for role in _ROLES
    ):
        raise bad("files", f"must map each of {', '.join(_ROLES)} to a file name")
    bridges = (meta.get("throughput") or {}).get("bridge_factor")
    if not isinstance(bridges, dict) or not bridges:
        raise bad("throughput", "throughput.bridge_factor must map precisions to factors")
    for precision, factor in bridges.items():
        if precision not in PRECISIONS or not isinstance(factor, int | float) or factor <= 0:
            raise bad("throughput", f"bad bridge factor {precision!r}: {factor!r}")
    return meta


def _unique(table: dict, key: Any, row: _Row, column: str) -> None:
    if key in table:
        raise row.error(column, f"duplicate id {key!r}")


def _read_gpus(data_dir: Traversable, file: str) -> dict[str, GPU]:
    gpus: dict[str, GPU] = {}
    for row in _read_rows(data_dir, file, _COLUMNS["gpus"], lambda v: v["id"]):
        measured = {}
        for precision in ("fp32", "fp16"):
            value = row.number(f"measured_{precision}", required=False)
            if value is not None:
                measured[precision] = value
        gpu = row.build(
            GPU,
            id=row.text("id"),
            name=row.text("name"),
            family=row.text("family"),
            arch=row.text("arch"),
            year=row.integer("year", required=False),
            fp32_tflops=row.number("fp32_tflops", required=False),
            tf32_tflops=row.number("tf32_tflops", required=False),
            fp16_tflops=row.number("fp16_tflops", required=False),
            int8_tops=row.number("int8_tops", required=False),
            memory_gb=row.number("memory_gb"),
            bandwidth_gbs=row.number("bandwidth_gbs", required=False),
            tdp_w=row.number("tdp_w"),
            idle_w=row.number("idle_w"),
            idle_w_estimated=row.flag("idle_w_estimated"),
            price_usd=row.number("price_usd", required=False),
            price_estimated=row.flag("price_estimated"),
            cooling=row.text("cooling"),
            form_factor=row.text("form_factor"),
            measured=measured,
            measured_source=row.text("measured_source", required=bool(measured)),
            source=row.text("source"),
            note=row.text("note", required=False),
            estimated_fields=row.names("estimated_fields"),
        )
        if gpu.fp32_tflops is None and gpu.fp16_tflops is None and gpu.int8_tops is None:
            raise row.error("fp32_tflops", "a catalog GPU needs at least one peak figure")
        _unique(gpus, gpu.id, row, "id")
        gpus[gpu.id] = gpu
    if not gpus:
        raise CatalogError("no rows", file=file)
    return gpus


def _read_history(data_dir: Traversable, file: str) -> dict[str, list[tuple[_Row, PriceRecord]]]:
    out: dict[str, list[tuple[_Row, PriceRecord]]] = {}
    seen: set[tuple[str, str, str]] = set()
    rows = _read_rows(
        data_dir,
        file,
        _COLUMNS["price_history"],
        lambda v: f"{v['id']}/{v['pricing']}/{v['valid_from']}",
    )
    for row in rows:
        rec = row.build(
            PriceRecord,
            id=row.text("id").casefold(),
            pricing=row.text("pricing"),
            usd_per_hour=row.number("usd_per_hour"),
            valid_from=row.text("valid_from", required=False),
            valid_to=row.text("valid_to", required=False),
            source=row.text("source"),
            note=row.text("note", required=False),
        )
        key = (rec.id, rec.pricing, rec.valid_from)
        if key in seen:
            raise row.error("valid_from", "duplicate history record")
        seen.add(key)
        out.setdefault(rec.id, []).append((row, rec))
    return out


def _read_instances(
    data_dir: Traversable,
    file: str,
    gpus: Mapping[str, GPU],
    history: dict[str, list[tuple[_Row, PriceRecord]]],
) -> dict[str, Instance]:
    instances: dict[str, Instance] = {}
    for row in _read_rows(data_dir, file, _COLUMNS["instances"], lambda v: v["id"]):
        gpu_id = _known(row, "gpu", gpus, "GPU")
        inst_id = row.text("id")
        records = sorted(
            (rec for _, rec in history.get(inst_id, [])), key=lambda r: (r.valid_from, r.pricing)
        )
        inst = row.build(
            Instance,
            id=inst_id,
            provider=row.text("provider"),
            tier=row.text("tier"),
            name=row.text("name"),
            gpu=gpu_id,
            gpu_count=row.integer("gpu_count"),
            vcpus=row.integer("vcpus"),
            ram_gib=row.number("ram_gib"),
            region=row.text("region"),
            as_of=row.text("as_of"),
            on_demand_usd_per_hour=row.number("on_demand_usd_per_hour"),
            reserved_1y_usd_per_hour=row.number("reserved_1y_usd_per_hour", required=False),
            reserved_3y_usd_per_hour=row.number("reserved_3y_usd_per_hour", required=False),
            spot_usd_per_hour=row.number("spot_usd_per_hour", required=False),
            interconnect=row.text("interconnect"),
            history=tuple(records),
            source=row.text("source"),
            note=row.text("note", required=False),
            estimated_fields=row.names("estimated_fields"),
        )
        _unique(instances, inst.id, row, "id")
        instances[inst.id] = inst
    for inst_id, entries in history.items():
        if inst_id not in instances:
            row = entries[0][0]
            close = closest_instances(inst_id, {i.id: i.gpu for i in instances.values()})
            hint = closest_hint(close)
            raise row.error("id", f"unknown instance id {inst_id!r} (not in {file}){hint}")
    return instances


def _read_tiers(data_dir: Traversable, file: str) -> tuple[PlatformTier, ...]:
    tiers: dict[str, PlatformTier] = {}
    for row in _read_rows(data_dir, file, _COLUMNS["platforms"], lambda v: v["name"]):
        estimated = row.names("estimated_fields")
        tier = row.build(
            PlatformTier,
            gpu_count=row.integer("gpu_count"),
            name=row.text("name"),
            cpu=row.text("cpu"),
            dram_gb=row.number("dram_gb"),
            psu_w=row.number("psu_w"),
            chassis=row.text("chassis"),
            storage=row.text("storage"),
            network=row.text("network"),
            interconnect=row.text("interconnect"),
            price_usd=row.number("price_usd"),
            power_w=row.number("power_w"),
            form_factors=row.names("form_factors"),
            source=row.text("source"),
            estimated=bool(estimated),
            estimated_fields=estimated,
            note=row.text("note", required=False),
        )
        _unique(tiers, tier.name, row, "name")
        tiers[tier.name] = tier
    if not any(t.gpu_count == 1 for t in tiers.values()):
        raise CatalogError("needs a tier for 1 GPU", file=file, column="gpu_count")
    return tuple(sorted(tiers.values(), key=lambda t: t.gpu_count))  # stable: file order


def _read_scaling(data_dir: Traversable, file: str) -> dict[tuple[str, int], ScalingPoint]:
    points: dict[tuple[str, int], ScalingPoint] = {}
    rows = _read_rows(
        data_dir, file, _COLUMNS["scaling"], lambda v: f"{v['interconnect']}/{v['gpu_count']}"
    )
    for row in rows:
        interconnect = row.text("interconnect")
        if interconnect not in INTERCONNECTS:
            raise row.error(
                "interconnect",
                f"unknown interconnect {interconnect!r}; valid: {', '.join(INTERCONNECTS)}",
            )
        count = row.integer("gpu_count")
        if count < 1 or count > 64:
            raise row.error("gpu_count", f"{count} outside 1..64")
        eff = row.number("efficiency")
        if not 0 < eff <= 1:
            raise row.error("efficiency", f"{eff!r} outside (0, 1]")
        if count == 1 and eff != 1.0:
            raise row.error("efficiency", "one GPU must scale at exactly 1.0")
        key = (interconnect, count)
        _unique(points, key, row, "gpu_count")
        points[key] = ScalingPoint(
            interconnect,
            count,
            eff,
            row.flag("estimated"),
            row.text("source"),
            row.text("note", required=False),
        )
    for interconnect in INTERCONNECTS:
        series = sorted((n, p.efficiency) for (ic, n), p in points.items() if ic == interconnect)
        if not series or series[0][0] != 1:
            raise CatalogError(
                f"interconnect {interconnect!r} needs rows starting at 1 GPU", file=file
            )
        for (n0, e0), (n1, e1) in zip(series, series[1:], strict=False):
            if e1 > e0 + 1e-12:
                raise CatalogError(
                    f"efficiency rises from {e0} at {counted(n0, 'GPU')} to {e1} at "
                    f"{counted(n1, 'GPU')}",
                    file=file,
                    row_id=f"{interconnect}/{n1}",
                    column="efficiency",
                )
    return points


def _known(row: _Row, column: str, table: Mapping[str, Any], what: str) -> str:
    """The row's id in ``column``, which must be a key of ``table`` (the ``what`` table)."""
    value = row.text(column)
    if value not in table:
        close = closest(value, sorted(table))
        hint = closest_hint(close)
        raise row.error(column, f"unknown {what} id {value!r} (not in the {what} table){hint}")
    return value


def _read_models(data_dir: Traversable, file: str) -> dict[str, Model]:
    models: dict[str, Model] = {}
    for row in _read_rows(data_dir, file, _COLUMNS["models"], lambda v: v["id"]):
        model = row.build(
            Model,
            id=row.text("id"),
            name=row.text("name"),
            params_b=row.number("params_b"),
            active_params_b=row.number("active_params_b", required=False),
            precisions=row.names("precisions"),
            source=row.text("source"),
            note=row.text("note", required=False),
            layers=row.integer("layers"),
            **{c: row.integer(c, required=False) for c in ARCHITECTURE if c != "layers"},
            arch_source=row.text("arch_source"),
        )
        _unique(models, model.id, row, "id")
        models[model.id] = model
    return models


def _concurrency(row: _Row) -> tuple[int | None, bool]:
    """(concurrency, offline) of a serving row: an integer, ``offline`` or empty."""
    if row.values["concurrency"] == _OFFLINE:
        return None, True
    return row.integer("concurrency", required=False), False


def _read_serving(
    data_dir: Traversable, file: str, models: Mapping[str, Model], gpus: Mapping[str, GPU]
) -> tuple[ServingPoint, ...]:
    points: dict[str, ServingPoint] = {}
    for row in _read_rows(data_dir, file, _COLUMNS["serving"], lambda v: v["id"]):
        concurrency, offline = _concurrency(row)
        point = row.build(
            ServingPoint,
            id=row.text("id"),
            model=_known(row, "model", models, "model"),
            precision=row.text("precision"),
            gpu=_known(row, "gpu", gpus, "GPU"),
            gpus_per_replica=row.integer("gpus_per_replica", required=False),
            framework=row.text("framework"),
            input_tokens=row.integer("input_tokens"),
            output_tokens=row.integer("output_tokens"),
            concurrency=concurrency,
            offline=offline,
            tokens_per_s_per_gpu=row.number("tokens_per_s_per_gpu"),
            tokens_per_s_per_user=row.number("tokens_per_s_per_user", required=False),
            as_of=row.text("as_of"),
            source=row.text("source"),
            note=row.text("note", required=False),
            estimated_fields=row.names("estimated_fields"),
        )
        _unique(points, point.id, row, "id")
        points[point.id] = point
    return tuple(points.values())


def _check_served_precisions(
    models: Mapping[str, Model], serving: tuple[ServingPoint, ...], files: Mapping[str, str]
) -> None:
    """Each model lists every precision the serving rows measure it at (and may list more:
    the precisions it is commonly served at)."""
    for model in models.values():
        measured = {p.precision for p in serving if p.model == model.id}
        if not measured <= set(model.precisions):
            found = ";".join(p for p in SERVING_PRECISIONS if p in measured)
            raise CatalogError(
                f"lists {';'.join(model.precisions)} but {files['serving']} measures {found}: "
                "list every measured precision",
                file=files["models"],
                row_id=model.id,
                column="precisions",
            )


def _read_api_offers(
    data_dir: Traversable, file: str, models: Mapping[str, Model]
) -> dict[str, ApiOffer]:
    offers: dict[str, ApiOffer] = {}
    for row in _read_rows(data_dir, file, _COLUMNS["api_offers"], lambda v: v["id"]):
        model = row.values["model"] and _known(row, "model", models, "model")
        offer = row.build(
            ApiOffer,
            id=row.text("id"),
            provider=row.text("provider"),
            name=row.text("name"),
            model=model,
            input_usd_per_mtok=row.number("input_usd_per_mtok"),
            cached_input_usd_per_mtok=row.number("cached_input_usd_per_mtok", required=False),
            output_usd_per_mtok=row.number("output_usd_per_mtok"),
            as_of=row.text("as_of"),
            source=row.text("source"),
            note=row.text("note", required=False),
            estimated_fields=row.names("estimated_fields"),
        )
        _unique(offers, offer.id, row, "id")
        offers[offer.id] = offer
    return offers


def _read_grids(data_dir: Traversable, file: str) -> dict[str, GridIntensity]:
    grids: dict[str, GridIntensity] = {}
    for row in _read_rows(data_dir, file, _COLUMNS["grid_carbon"], lambda v: v["id"]):
        grid = row.build(
            GridIntensity,
            id=row.text("id"),
            kind=row.text("kind"),
            name=row.text("name"),
            g_co2e_per_kwh=row.number("g_co2e_per_kwh"),
            year=row.integer("year"),
            basis=row.text("basis"),
            source=row.text("source"),
            note=row.text("note", required=False),
            estimated_fields=row.names("estimated_fields"),
        )
        _unique(grids, grid.id.casefold(), row, "id")
        grids[grid.id.casefold()] = grid
    return grids


def _read_embodied(
    data_dir: Traversable, file: str, gpus: Mapping[str, GPU], tiers: tuple[PlatformTier, ...]
) -> dict[tuple[str, str], Embodied]:
    """Embodied carbon rows; every GPU and every platform tier needs exactly one."""
    ids = {"gpu": set(gpus), "platform": {str(t.gpu_count) for t in tiers}}
    rows = _read_rows(
        data_dir, file, _COLUMNS["embodied_carbon"], lambda v: f"{v['kind']}/{v['id']}"
    )
    out: dict[tuple[str, str], Embodied] = {}
    for row in rows:
        rec = row.build(
            Embodied,
            kind=row.text("kind"),
            id=row.text("id"),
            kg_co2e=row.number("kg_co2e"),
            boundary=row.text("boundary"),
            source=row.text("source"),
            note=row.text("note", required=False),
            estimated_fields=row.names("estimated_fields"),
        )
        if rec.id not in ids[rec.kind]:
            close = closest(rec.id, sorted(ids[rec.kind]))
            hint = closest_hint(close)
            raise row.error("id", f"no {rec.kind} {rec.id!r} in the catalog{hint}")
        _unique(out, (rec.kind, rec.id), row, "id")
        out[(rec.kind, rec.id)] = rec
    for kind, wanted in ids.items():
        missing = sorted(wanted - {i for k, i in out if k == kind})
        if missing:
            raise CatalogError(
                f"no embodied carbon for {kind} {', '.join(missing)} (mark an estimate "
                "in estimated_fields where no figure is sourced)",
                file=file,
            )
    return out


def _read_regions(
    data_dir: Traversable,
    file: str,
    grids: Mapping[str, GridIntensity],
    instances: Mapping[str, Instance],
) -> dict[tuple[str, str], CloudRegion]:
    """Cloud regions; each names a known grid, and every instance's region has one."""
    out: dict[tuple[str, str], CloudRegion] = {}
    rows = _read_rows(
        data_dir, file, _COLUMNS["cloud_regions"], lambda v: f"{v['provider']}/{v['region']}"
    )
    for row in rows:
        rec = row.build(
            CloudRegion,
            provider=row.text("provider"),
            region=row.text("region"),
            grid=row.text("grid"),
            pue=row.number("pue"),
            source=row.text("source"),
            note=row.text("note", required=False),
            estimated_fields=row.names("estimated_fields"),
        )
        if rec.grid.casefold() not in grids:
            close = closest(rec.grid.casefold(), sorted(grids))
            hint = closest_hint(close)
            raise row.error("grid", f"unknown grid id {rec.grid!r}{hint}")
        _unique(out, rec.key, row, "region")
        out[rec.key] = rec
    for inst in instances.values():
        if (inst.provider, inst.region) not in out:
            raise CatalogError(
                f"instance {inst.id!r} is in region {inst.region!r} of {inst.provider}, "
                "which has no row (its grid and PUE)",
                file=file,
            )
    return out


def read_catalog(data_dir: str | os.PathLike[str] | Traversable) -> Catalog:
    """Read and validate a catalog directory (``catalog.json`` plus the CSVs it lists).

    Args:
        data_dir: directory path or :class:`importlib.resources.abc.Traversable`.

    Raises:
        CatalogError: any invalid file, row or value (message names file, row, column).
    """
    root: Traversable = Path(data_dir) if isinstance(data_dir, str | os.PathLike) else data_dir
    meta = _read_meta(root)
    files = {role: meta["files"][role] for role in _ROLES}
    gpus = _read_gpus(root, files["gpus"])
    history = _read_history(root, files["price_history"])
    instances = _read_instances(root, files["instances"], gpus, history)
    tiers = _read_tiers(root, files["platforms"])
    scaling = _read_scaling(root, files["scaling"])
    models = _read_models(root, files["models"])
    serving = _read_serving(root, files["serving"], models, gpus)
    _check_served_precisions(models, serving, files)
    api_offers = _read_api_offers(root, files["api_offers"], models)
    grids = _read_grids(root, files["grid_carbon"])
    embodied = _read_embodied(root, files["embodied_carbon"], gpus, tiers)
    regions = _read_regions(root, files["cloud_regions"], grids, instances)

    reference = meta["reference_gpu"]
    if reference not in gpus:
        raise CatalogError(
            f"reference GPU {reference!r} is not in {files['gpus']}",
            file=_META_FILE,
            column="reference_gpu",
        )
    for precision in ("fp32", "fp16"):
        value = gpus[reference].measured.get(precision)
        if value is None or abs(value - 1.0) > _REFERENCE_TOLERANCE:
            raise CatalogError(
                f"the reference GPU must measure exactly 1.0 at {precision}, found {value!r}",
                file=files["gpus"],
                row_id=reference,
                column=f"measured_{precision}",
            )
    return Catalog(
        version=meta["version"],
        as_of=meta["as_of"],
        reference_gpu=reference,
        gpus=MappingProxyType(gpus),
        instances=MappingProxyType(instances),
        tiers=tiers,
        scaling=MappingProxyType(scaling),
        bridge_factors=MappingProxyType(dict(meta["throughput"]["bridge_factor"])),
        files=MappingProxyType(files),
        models=MappingProxyType(models),
        serving=serving,
        api_offers=MappingProxyType(api_offers),
        grids=MappingProxyType(grids),
        embodied=MappingProxyType(embodied),
        regions=MappingProxyType(regions),
    )


def file_columns(role: str) -> tuple[str, ...]:
    """The columns of a catalog file, in order (``role`` as in ``catalog.json``: ``"serving"``)."""
    return _COLUMNS[role]


@functools.cache
def load_catalog() -> Catalog:
    """The catalog shipped with the package (read once, then cached) from the package's folder:
    the package is installed as files, and ``importlib.resources`` would cost every run its
    import (with tempfile, shutil and zipfile)."""
    return read_catalog(Path(__file__).with_name("data"))
