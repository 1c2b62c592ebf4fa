"""Writing a file whole or not at all, for the files the user keeps (prices, serving rows)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_whole"]


def write_whole(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) at ``path``, whole or not at all: it goes to a temporary file
    beside it, renamed over ``path`` only once complete (a folder that does not exist is made).

    Raises:
        OSError: the file cannot be written (``path`` is then unchanged).
    """
    import tempfile  # here, not at the top: it imports shutil and random, which a run needs not

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        os.fchmod(fd, 0o644)  # as an ordinary file, not mkstemp's owner-only mode
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
