"""``costmodel catalog models`` and ``catalog api-offers``: the served models (parameters,
architecture and the GPUs each is measured on) and the hosted API offers, as tables, JSON (the
records of ``GET /v1/catalog/models`` and ``/v1/catalog/api-offers``) or CSV."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

from cli.tables import Column, fitted_table
from pricing import ApiOffer, Catalog, Model

if TYPE_CHECKING:
    from cli.tables import Console

__all__ = ["offer_record", "model_record", "print_api_offers", "print_models"]


def model_record(catalog: Catalog, model: Model) -> dict:
    """Every field of a model, and ``measured_on``: the GPUs with a measured serving row, by
    precision (as the HTTP API answers)."""
    record = {k: v for k, v in asdict(model).items() if k != "is_inline"}  # catalog rows only
    return {**record, "measured_on": catalog.measured_on(model.id)}


def offer_record(catalog: Catalog, offer: ApiOffer) -> dict:
    """Every field of an API offer (``estimated_fields`` a list)."""
    return {**asdict(offer), "estimated_fields": list(offer.estimated_fields)}


def _num(value: float | int | None, spec: str = "g") -> str:
    return "" if value is None else format(value, spec)


def _kv(m: Model) -> str:
    """The KV cache's shape: ``8 x 128`` (heads x head dim), or ``576 (MLA)``."""
    if m.kv_dim_per_layer is not None:
        return f"{m.kv_dim_per_layer} (MLA)"
    return f"{m.kv_heads} x {m.head_dim}"


def _window(m: Model) -> str:
    if m.sliding_window is None:
        return ""
    return f"{m.sliding_window_layers} @ {m.sliding_window:,}"


def print_models(catalog: Catalog, console: Console, models: Sequence[Model]) -> None:
    """The served models: parameters, architecture, precisions and measured GPUs."""
    measured = [catalog.measured_on(m.id) for m in models]
    columns = [
        Column("id", [m.id for m in models], numeric=False),
        Column("name", [m.name for m in models], priority=3, numeric=False, wrap=True),
        Column("params\n[B]", [_num(m.params_b) for m in models]),
        Column("active\n[B]", [_num(m.active_params_b) for m in models]),
        Column("layers", [str(m.layers) for m in models], priority=1),
        Column("KV heads\nx dim", [_kv(m) for m in models], priority=1, numeric=False),
        Column("window\nlayers @ tok", [_window(m) for m in models], priority=2, numeric=False),
        Column("served at", [", ".join(m.precisions) for m in models], numeric=False),
        Column(
            "measured\nGPUs", [str(sum(len(g) for g in x.values())) for x in measured], priority=2
        ),
    ]
    console.print(fitted_table(columns, console))
    console.print(
        f"catalog {catalog.version} (as of {catalog.as_of}), {len(models)} models; params: "
        "every expert counted, active: per token of a mixture of experts; MLA: values cached "
        "per layer by compressed attention; window: layers attending to the last tokens only; "
        "sources with --format json",
        highlight=False,
    )


def print_api_offers(catalog: Catalog, console: Console, offers: Sequence[ApiOffer]) -> None:
    """The hosted API offers: provider, catalog model and prices per million tokens."""
    columns = [
        Column("id", [o.id for o in offers], numeric=False),
        Column("model", [o.model or "(closed)" for o in offers], priority=1, numeric=False),
        Column("input\n[USD/M]", [_num(o.input_usd_per_mtok) for o in offers]),
        Column("cached\n[USD/M]", [_num(o.cached_input_usd_per_mtok) for o in offers], priority=2),
        Column("output\n[USD/M]", [_num(o.output_usd_per_mtok) for o in offers]),
        Column(
            "as of",
            [o.as_of + ("*" if "as_of" in o.estimated_fields else "") for o in offers],
            priority=3,
            numeric=False,
        ),
    ]
    console.print(fitted_table(columns, console))
    console.print(
        f"catalog {catalog.version} (as of {catalog.as_of}), {len(offers)} of "
        f"{len(catalog.api_offers)} API offers; prices per million tokens; * estimated date",
        highlight=False,
    )
