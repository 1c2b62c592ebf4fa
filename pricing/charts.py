"""Charts of the catalog itself: the market the cost model prices, as the buyer's guide drew it.

- ``gflops-per-dollar``: peak throughput [GFLOPS] against price [USD] of every priced GPU, one
  colour per series (GTX 900, GTX 1000, RTX 20/30/40/50, Titan, workstation, data centre), log-log,
  with lines of equal GFLOPS per dollar; FP32 by default, or the dense FP16 tensor peak.
- ``gflops-per-watt``: board power [W] against peak throughput [GFLOPS], by series, with lines
  of equal GFLOPS per watt (energy against compute).

In both, each point is labelled with the GPU's short name (:attr:`GPUPoint.label`), placed by
:mod:`pricing.labels` so that no label hides another or a point, and the guide lines run in
1-3-10 steps from at or below the data's lowest ratio to at or above its highest, each labelled
along its line where no point is.
- ``cost-per-hour``: rented cost per reference GPU-hour [USD] of every instance and pricing
  model, grouped by provider tier (hyperscaler, neocloud, marketplace).

The data of each chart come from functions of their own (:func:`gpu_points`,
:func:`rental_points`), which the tests read to check the guide's observations against the
catalog's own numbers. matplotlib is imported only when a chart is drawn.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import CatalogError
from .labels import Box, choose, freeze, label_points, marker_box, text_size
from .models import GPU
from .throughput import relative_throughput
from .vocabulary import PRICING_MODELS, TIERS

if TYPE_CHECKING:
    from .catalog import Catalog

__all__ = [
    "CHARTS",
    "SERIES",
    "GPUPoint",
    "RentalPoint",
    "draw_chart",
    "gpu_points",
    "guide_ratios",
    "rental_points",
    "series",
    "short_name",
    "write_chart",
]

CHARTS = ("gflops-per-dollar", "gflops-per-watt", "cost-per-hour")
#: The chart series, oldest consumer generation first.
SERIES = (
    "GTX 900",
    "GTX 1000",
    "RTX 20",
    "RTX 30",
    "RTX 40",
    "RTX 50",
    "Titan",
    "Workstation",
    "Data centre",
)
_COLOURS = dict(
    zip(
        SERIES,
        ("#8c8c8c", "#1f5fa8", "#2ca02c", "#d9620b", "#a8324a", "#6a3d9a", "#b8860b",
         "#17becf", "#3a3a3a"),
        strict=True,
    )
)  # fmt: skip
_MARKERS = dict(zip(PRICING_MODELS, ("o", "v", "s", "D"), strict=True))
_GEFORCE = re.compile(r"^GeForce (\d+)")
#: The words a GPU's short name leaves out: makers, brands and "Generation"; "GTX" before "Titan".
_BRANDS = re.compile(
    r"\b(?:NVIDIA|AMD|GeForce|Tesla|Instinct|Grace Hopper|Generation)\b|\bGTX (?=Titan)"
)
_FORMATS = {".png": "png", ".svg": "svg"}
_DPI = 150
_SIZE = (8.0, 5.0)  # [inch]
_MARKER = 28  # [points²], the scatter's marker area
_MARGIN = 1.4  # the log axes' room beyond the data, as a factor
_LABEL_FONT, _GUIDE_FONT = 6.0, 7.0  # [points]
_GUIDE_STEPS = 40  # places tried along a guide line for its label


def short_name(name: str) -> str:
    """A GPU's name as the buyer's guide labels its cards: without makers and brands.

    "GeForce RTX 2080 Ti" -> "RTX 2080 Ti", "NVIDIA Tesla V100 SXM2 16GB" -> "V100 SXM2 16GB",
    "GeForce GTX Titan X (Maxwell)" -> "Titan X (Maxwell)", "AMD Instinct MI300X" -> "MI300X".
    """
    return " ".join(_BRANDS.sub(" ", name).split()) or name


def series(gpu: GPU) -> str:
    """The chart series of a GPU, from its catalog ``family`` and name: ``"GTX 900"`` for
    GeForce 900, ``"GTX 1000"`` for GeForce 10, ``"RTX 20"`` .. ``"RTX 50"``; every Titan is
    ``"Titan"`` (as in the guide); Quadro and RTX professional cards ``"Workstation"``;
    everything else (Tesla, data-centre Ampere to Blackwell, AMD Instinct) ``"Data centre"``."""
    family = gpu.family or ""
    if "titan" in family.casefold() or gpu.name.casefold().startswith(("titan", "nvidia titan")):
        return "Titan"
    found = _GEFORCE.match(family)
    if found:
        number = int(found.group(1))
        if number == 900:
            return "GTX 900"
        if number == 10:
            return "GTX 1000"
        return f"RTX {number}"
    if family.startswith(("Quadro", "RTX professional")):
        return "Workstation"
    return "Data centre"


@dataclass(frozen=True)
class GPUPoint:
    """One GPU of the charts: ``gflops`` peak at the chart's precision [GFLOPS], ``price_usd``
    [USD] (None when the catalog has none), ``tdp_w`` [W], launch ``year``."""

    id: str
    name: str
    series: str
    year: int | None
    gflops: float
    price_usd: float | None
    price_estimated: bool
    tdp_w: float

    @property
    def label(self) -> str:
        """The GPU's short name (:func:`short_name`), which the charts label it with."""
        return short_name(self.name)

    @property
    def gflops_per_dollar(self) -> float | None:
        """Peak GFLOPS per dollar of price [GFLOPS/USD]."""
        return self.gflops / self.price_usd if self.price_usd else None

    @property
    def gflops_per_watt(self) -> float:
        """Peak GFLOPS per watt of board power [GFLOPS/W]."""
        return self.gflops / self.tdp_w


def gpu_points(catalog: Catalog, precision: str = "fp32") -> list[GPUPoint]:
    """Every catalog GPU with a peak at ``precision`` (``"fp32"``, or ``"fp16"`` for the dense
    tensor peak), in catalog order."""
    column = {"fp32": "fp32_tflops", "fp16": "fp16_tflops"}.get(precision)
    if column is None:
        raise CatalogError(f"charts show fp32 or fp16 throughput, not {precision!r}")
    out = []
    for g in catalog.gpus.values():
        peak = getattr(g, column)
        if peak is None:
            continue
        out.append(
            GPUPoint(g.id, g.name, series(g), g.year, peak * 1000.0, g.price_usd,
                     g.price_estimated, g.tdp_w)
        )  # fmt: skip
    return out


@dataclass(frozen=True)
class RentalPoint:
    """One instance at one pricing model: its cost per reference GPU-hour [USD]."""

    instance: str
    tier: str
    pricing: str
    gpu: str
    usd_per_reference_gpu_hour: float


def rental_points(catalog: Catalog, precision: str = "fp16") -> list[RentalPoint]:
    """Every priced (instance, pricing model) of the catalog: price per hour over the
    instance's work in reference GPU-hours per hour (GPUs x per-GPU throughput at
    ``precision`` x scaling efficiency). Instances whose GPU has no throughput figure are
    left out."""
    out = []
    for inst in catalog.instances.values():
        try:
            per_gpu = relative_throughput(catalog.gpu(inst.gpu), catalog.reference, precision)
            scale = catalog.scaling_efficiency(inst.interconnect, inst.gpu_count)
        except CatalogError:
            continue
        work = inst.gpu_count * per_gpu.value * scale
        for pricing in PRICING_MODELS:
            price = getattr(inst, f"{pricing}_usd_per_hour")
            if price is not None:
                out.append(RentalPoint(inst.id, inst.tier, pricing, inst.gpu, price / work))
    return out


# ---------------------------------------------------------------------------------------------
# drawing


def _figure() -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=_SIZE, dpi=_DPI, layout="constrained")
    ax = fig.add_subplot()
    ax.grid(True, which="both", color="#e4e4e4", linewidth=0.5)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig, ax


def guide_ratios(values: Sequence[float]) -> list[float]:
    """Guide-line ratios in 1-3-10 steps, from the largest step at or below the smallest of
    ``values`` to the smallest at or above the largest: 1.5..42.6 -> 1, 3, 10, 30, 100."""
    lo, hi = min(values), max(values)
    steps = [
        m * 10.0**e
        for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
        for m in (1, 3)
    ]
    first = max(v for v in steps if v <= lo)
    last = min(v for v in steps if v >= hi)
    return [v for v in steps if first <= v <= last]


def _frame(ax: Any, xs: Sequence[float], ys: Sequence[float]) -> None:
    """Log axes that hold the data with a margin; guide lines are clipped to them."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(min(xs) / _MARGIN, max(xs) * _MARGIN)
    ax.set_ylim(min(ys) / _MARGIN, max(ys) * _MARGIN)


def _by_series(ax: Any, points: list[GPUPoint], x: str, y: str) -> None:
    for name in SERIES:
        mine = [p for p in points if p.series == name]
        if not mine:
            continue
        ax.scatter([getattr(p, x) for p in mine], [getattr(p, y) for p in mine], s=_MARKER,
                   color=_COLOURS[name], label=name, edgecolors="white", linewidths=0.5,
                   zorder=3)  # fmt: skip
    _frame(ax, [getattr(p, x) for p in points], [getattr(p, y) for p in points])
    ax.legend(fontsize=8, frameon=False, loc="upper left")


def _guide_label(
    ax: Any, renderer: Any, slope: float, text: str, taken: Sequence[Box]
) -> Box | None:
    """Label the guide line y = slope * x along itself, as far right as it can go without
    covering what is ``taken`` (points, the legend, other guides' labels); returns the label's
    box, or None when the line misses the axes."""
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    a, b = math.log10(max(x0, y0 / slope)), math.log10(min(x1, y1 / slope))
    if a >= b:
        return None
    w, h = text_size(ax, renderer, text, _GUIDE_FONT)
    to_px = ax.transData.transform
    (px0, py0), (px1, py1) = to_px((10**a, slope * 10**a)), to_px((10**b, slope * 10**b))
    angle = math.atan2(py1 - py0, px1 - px0)
    cos, sin = abs(math.cos(angle)), abs(math.sin(angle))
    half_w, half_h = (w * cos + h * sin) / 2, (w * sin + h * cos) / 2
    lift = h / 2 + 1.5  # [px] above the line, across it
    centres = []
    for k in range(_GUIDE_STEPS, -1, -1):  # from the right end
        px, py = px0 + (px1 - px0) * k / _GUIDE_STEPS, py0 + (py1 - py0) * k / _GUIDE_STEPS
        centres.append((px - lift * math.sin(angle), py + lift * math.cos(angle)))
    boxes = [(cx - half_w, cy - half_h, cx + half_w, cy + half_h) for cx, cy in centres]
    bounds = ax.get_window_extent(renderer)
    i = choose(boxes, taken, (bounds.x0, bounds.y0, bounds.x1, bounds.y1))
    x, y = ax.transData.inverted().transform(centres[i])
    label = ax.text(x, y, text, fontsize=_GUIDE_FONT, color="#6a6a6a", ha="center",
                    va="center", rotation=math.degrees(angle), rotation_mode="anchor",
                    zorder=2)  # fmt: skip
    label.set_in_layout(False)
    return boxes[i]


def _guides(
    ax: Any, ratios: Sequence[float], unit: str, slope: Any, points: list[GPUPoint], xy: Any
) -> None:
    """Dotted lines of equal ``ratios`` (y = ``slope(ratio)`` * x) across the axes, each
    labelled along itself; then every point labelled with its GPU's short name."""
    fig = ax.figure
    renderer = freeze(fig)
    (x0, x1) = ax.get_xlim()
    for ratio in ratios:
        k = slope(ratio)
        ax.plot([x0, x1], [k * x0, k * x1], ls=":", lw=0.8, color="#9a9a9a", zorder=1,
                scalex=False, scaley=False)  # fmt: skip
    radius = math.sqrt(_MARKER) / 2 * fig.dpi / 72.0 + 1.0  # [px], with the white edge
    names: dict[tuple[float, float], list[str]] = {}  # GPUs at the same place share a label
    for p in points:
        names.setdefault(xy(p), []).append(p.label)
    coords = list(names)
    markers = [marker_box(*ax.transData.transform(c), radius) for c in coords]
    box = ax.get_legend().get_window_extent(renderer)
    avoid = [(box.x0, box.y0, box.x1, box.y1)]
    for ratio in ratios:
        box = _guide_label(ax, renderer, slope(ratio), f"{ratio:g} {unit}", [*avoid, *markers])
        avoid += [box] if box else []
    texts = [" / ".join(n) for n in names.values()]
    label_points(ax, renderer, coords, texts, fontsize=_LABEL_FONT,
                 marker_radius=radius, avoid=avoid)  # fmt: skip


def _gflops_per_dollar(catalog: Catalog, precision: str) -> Any:
    points = [p for p in gpu_points(catalog, precision) if p.price_usd]
    fig, ax = _figure()
    _by_series(ax, points, "price_usd", "gflops")
    ratios = guide_ratios([p.gflops_per_dollar for p in points])
    what = "FP32" if precision == "fp32" else "dense FP16 tensor"
    ax.set_xlabel("price [USD] (launch or street price of the catalog)")
    ax.set_ylabel(f"{what} peak [GFLOPS]")
    ax.set_title(f"{what} throughput against price, by series (catalog {catalog.version})",
                 fontsize=10)  # fmt: skip
    _guides(ax, ratios, "GFLOPS/$", lambda r: r, points, lambda p: (p.price_usd, p.gflops))
    return fig


def _gflops_per_watt(catalog: Catalog, precision: str) -> Any:
    points = gpu_points(catalog, precision)
    fig, ax = _figure()
    _by_series(ax, points, "gflops", "tdp_w")
    ratios = guide_ratios([p.gflops_per_watt for p in points])
    what = "FP32" if precision == "fp32" else "dense FP16 tensor"
    ax.set_xlabel(f"{what} peak [GFLOPS]")
    ax.set_ylabel("board power (TDP) [W]")
    ax.set_title(f"Energy against compute, by series (catalog {catalog.version})", fontsize=10)
    _guides(ax, ratios, "GFLOPS/W", lambda r: 1 / r, points, lambda p: (p.gflops, p.tdp_w))
    return fig


def _cost_per_hour(catalog: Catalog, precision: str) -> Any:
    points = rental_points(catalog, precision)
    fig, ax = _figure()
    tiers = [t for t in TIERS if any(p.tier == t for p in points)]
    width = 0.8 / len(PRICING_MODELS)
    for k, pricing in enumerate(PRICING_MODELS):
        xs, ys = [], []
        for i, tier in enumerate(tiers):
            mine = sorted(
                p.usd_per_reference_gpu_hour
                for p in points
                if p.tier == tier and p.pricing == pricing
            )
            offset = i - 0.4 + width * (k + 0.5)
            spread = [offset + width * 0.6 * ((j % 5) / 4 - 0.5) for j in range(len(mine))]
            xs += spread
            ys += mine
        if ys:
            ax.scatter(xs, ys, s=18, marker=_MARKERS[pricing], label=pricing.replace("_", " "),
                       alpha=0.8, zorder=3)  # fmt: skip
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter

    dollars = FuncFormatter(lambda v, _pos: f"${v:.2g}")
    ax.yaxis.set_major_formatter(dollars)
    ax.yaxis.set_minor_formatter(dollars)
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.set_xticks(range(len(tiers)), [t.capitalize() for t in tiers])
    ax.set_xlim(-0.6, len(tiers) - 0.4)
    ax.set_ylabel(f"USD per reference GPU-hour ({catalog.reference_gpu}, {precision})")
    ax.set_title(f"Rented cost per reference GPU-hour by provider tier (catalog "
                 f"{catalog.version})", fontsize=10)  # fmt: skip
    ax.legend(fontsize=8, frameon=False)
    return fig


_DRAW = {
    "gflops-per-dollar": _gflops_per_dollar,
    "gflops-per-watt": _gflops_per_watt,
    "cost-per-hour": _cost_per_hour,
}


def draw_chart(catalog: Catalog, chart: str, precision: str | None = None) -> Any:
    """``chart`` (one of :data:`CHARTS`) of ``catalog`` as a matplotlib ``Figure``.
    ``precision`` defaults to ``fp32`` for the GPU charts (``fp16``: the dense tensor peak) and
    ``fp16`` for ``cost-per-hour`` (the throughput that a reference GPU-hour is counted in).

    Raises:
        CatalogError: an unknown chart or precision.
    """
    if chart not in _DRAW:
        raise CatalogError(f"unknown chart {chart!r}; valid: {', '.join(CHARTS)}")
    default = "fp16" if chart == "cost-per-hour" else "fp32"
    return _DRAW[chart](catalog, precision or default)


def write_chart(
    catalog: Catalog, chart: str, path: str | Path, precision: str | None = None
) -> Path:
    """Draw ``chart`` (:func:`draw_chart`) into ``path``, a ``.png`` or ``.svg`` file (its
    folder is made).

    Raises:
        CatalogError: an unknown chart, precision or file type.
    """
    out = Path(path)
    fmt = _FORMATS.get(out.suffix.lower())
    if chart in _DRAW and fmt is None:
        raise CatalogError(f"{out}: a chart is written as .png or .svg")
    fig = draw_chart(catalog, chart, precision)
    out.parent.mkdir(parents=True, exist_ok=True)
    import matplotlib

    metadata = {"Date": None} if fmt == "svg" else {}
    with matplotlib.rc_context({"svg.hashsalt": "costmodel"}):  # the same bytes every time
        fig.savefig(out, format=fmt, metadata=metadata)
    return out
