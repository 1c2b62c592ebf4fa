"""Reading a source file from disk into a :class:`~pricing.importers.quotes.Batch`: its text,
its date (the file's modification day, for sources that carry none) and, for SkyPilot files,
the provider its folder names and the public URL of that file."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from pathlib import Path

from ..errors import CatalogError
from . import aws_offer, azure, skypilot
from .quotes import Batch

__all__ = ["FORMATS", "read"]

#: The formats :func:`read` takes, by name.
FORMATS = {m.FORMAT: m for m in (skypilot, azure, aws_offer)}
#: SkyPilot's provider folder of each catalog provider, where they differ.
_SKYPILOT_FOLDERS = {"vastai": "vast"}


def _file_date(path: Path) -> str:
    return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC).date().isoformat()


def _skypilot(text: str, name: str, date: str, provider: str | None, providers) -> Batch:
    folder = (provider or Path(name).parent.name).casefold()
    catalog_provider = skypilot.catalog_provider(folder)
    if catalog_provider not in providers:
        hint = f"--provider {provider!r} is" if provider else "its folder names"
        raise CatalogError(
            f"{hint} no provider of the catalog; give --provider, one of "
            f"{', '.join(sorted(providers))}",
            file=name,
        )
    url = skypilot.url(_SKYPILOT_FOLDERS.get(catalog_provider, folder), skypilot.version(name))
    return skypilot.parse(text, file=name, provider=catalog_provider, source_url=url,
                          file_date=date)  # fmt: skip


def read(fmt: str, name: str, *, providers: Collection[str], provider: str | None = None) -> Batch:
    """The prices of the file ``name`` in format ``fmt`` (a key of :data:`FORMATS`).

    ``providers``: the catalog's provider ids; ``provider``: for SkyPilot files, the provider
    of the file (default: its folder's name, ``catalogs/v9/aws/vms.csv`` -> ``aws``).

    Raises:
        CatalogError: the file cannot be read, a SkyPilot file names no catalog provider, or
            the importer refuses the text (file, row and column named).
    """
    path = Path(name)
    try:
        text, date = path.read_text(encoding="utf-8-sig"), _file_date(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"cannot read the file: {exc}", file=name) from None
    if fmt == skypilot.FORMAT:
        return _skypilot(text, name, date, provider, providers)
    return FORMATS[fmt].parse(text, file=name, file_date=date)
