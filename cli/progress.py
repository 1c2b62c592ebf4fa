"""A progress bar for long runs: shown on a terminal once a run looks like taking more than
about 2 s, never otherwise (so pipes, files and quick runs see nothing)."""

from __future__ import annotations

import time
from typing import TextIO

__all__ = ["ProgressBar"]

#: Show the bar when the projected simulation time exceeds this [s] ...
SHOW_AFTER_S = 2.0
#: ... and this much [s] has passed (the first chunks give a poor projection).
FIRST_LOOK_S = 0.3


class ProgressBar:
    """A ``Progress`` callback (share done, 0 to 1) that draws a bar on ``stream`` when it is a
    terminal and the run is projected to take more than :data:`SHOW_AFTER_S`; use it as a
    context manager so that the bar is removed when the run ends or fails."""

    def __init__(self, stream: TextIO, clock=time.monotonic) -> None:
        self._stream = stream
        self._clock = clock
        self._start = clock()
        self._bar = None
        self._task = None
        self._tty = stream.isatty()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    @property
    def shown(self) -> bool:
        """Whether the bar is on screen."""
        return self._bar is not None

    def __call__(self, done: float) -> None:
        if self._bar is None:
            elapsed = self._clock() - self._start
            if not self._tty or done >= 1.0 or elapsed < FIRST_LOOK_S:
                return
            if done > 0 and elapsed / done < SHOW_AFTER_S:
                return
            self._open()
        self._bar.update(self._task, completed=done)

    def _open(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TimeRemainingColumn

        console = Console(file=self._stream, force_terminal=True)
        self._bar = Progress(
            "simulating",
            BarColumn(),
            TaskProgressColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._task = self._bar.add_task("simulating", total=1.0)
        self._bar.start()
