"""Report exporters: render the answer (:class:`~present.answer.Answer`) of a rent-versus-buy
scenario or of a fleet plan as HTML, Markdown, CSV, XLSX or JSON, and write reports
atomically. What differs between the two is in :mod:`.kinds`.

>>> from present import reports
>>> reports.render(answer, "html")            # bytes of one self-contained HTML file
>>> reports.write(answer, "md", "out/run.md")  # [out/run.md, out/run_breakeven.svg, ...]

Money is in [USD] at present value, utilisation and probabilities are fractions [-] (shown as
percentages), payback is in [month], unit cost in [USD per unit of work] (a reference GPU-hour,
or a million tokens for inference: ``Result.unit``), a plan's work in [reference
GPU-hours/month]. An inference result with a hosted API shows it as a third side throughout.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from urllib.parse import quote

from costmodel.plan_result import PlanResult
from costmodel.result import Result

from .. import to_json
from ..answer import Answer

__all__ = ["FORMATS", "ReportError", "render", "write", "write_atomic"]

FORMATS = ("html", "md", "csv", "xlsx", "json")


class ReportError(ValueError):
    """A report cannot be produced: an unknown format."""


def _render(shown: Answer | Result | PlanResult, fmt: str) -> bytes:
    """``shown`` in the known format ``fmt``, importing only what that format needs (an engine
    result alone is shown as an answer without words)."""
    result = Answer.of(shown)
    if fmt == "json":
        return to_json(result)
    if fmt == "html":
        from .html import render_html

        return render_html(result)
    if fmt == "md":
        from .markdown import render_markdown

        return render_markdown(result)
    if fmt == "csv":
        from .csvfile import render_csv

        return render_csv(result)
    from .kinds import kind_of

    return kind_of(result).xlsx(result)


def _check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ReportError(f"unknown report format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    return fmt


def render(result: Answer | Result | PlanResult, fmt: str) -> bytes:
    """The whole report in format ``fmt`` (one of :data:`FORMATS`) as bytes.

    Raises :class:`ReportError` for an unknown format.
    """
    return _render(result, _check_format(fmt))


def write_atomic(path: Path, data: bytes) -> Path:
    """Write ``data`` to a temporary file beside ``path``, then ``os.replace`` it into place.

    Raises ``OSError`` naming ``path`` (not its temporary twin) when it cannot be written."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.errno is None:
            raise
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write(shown: Answer | Result | PlanResult, fmt: str, out: str | Path) -> list[Path]:
    """Write the report to ``out`` atomically and return every path written.

    For ``md`` the chart SVGs are written beside the document as ``<stem>_<chart>.svg`` and
    linked relatively; they are written before the document so it never links a missing file,
    and removed again when the document cannot be written.
    """
    _check_format(fmt)
    result = Answer.of(shown)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt != "md":
        return [write_atomic(out, _render(result, fmt))]

    from .kinds import kind_of
    from .markdown import render_markdown

    images: list[Path] = []
    links: dict[str, str] = {}
    try:
        for name, svg in kind_of(result).charts(result).items():
            image = out.with_name(f"{out.stem}_{name}.svg")
            images.append(write_atomic(image, svg.encode("utf-8")))
            links[name] = quote(image.name)
        return [write_atomic(out, render_markdown(result, links)), *images]
    except BaseException:
        for image in images:
            image.unlink(missing_ok=True)
        raise
