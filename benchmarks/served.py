"""What the served benchmarks share: gunicorn as docs/api.md runs it, on a loopback port with a
SQLite store in a temporary folder, and the memory of its whole process tree.

Not a benchmark itself; ``bench_flood.py`` and ``bench_soak.py`` import it.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.test_api_gunicorn import free_port, request  # noqa: E402

__all__ = ["ROOT", "TreeMemory", "gunicorn", "request"]

#: The longest a server may take to answer its first /health [s].
START_TIMEOUT_S = 60.0


@contextlib.contextmanager
def gunicorn(folder: str, workers: int = 2, **settings: str) -> Iterator[tuple[int, int]]:
    """gunicorn with ``workers`` workers and the ``COSTMODEL_`` ``settings``; yields its port
    and process id, and stops it (TERM, then KILL) at the end."""
    port = free_port()
    env = {**os.environ, "COSTMODEL_DB": f"{folder}/runs.sqlite3", "COSTMODEL_API_KEYS": "",
           "PYTHONPATH": str(ROOT)}  # fmt: skip
    env.update({f"COSTMODEL_{k}": v for k, v in settings.items()})
    command = [sys.executable, "-m", "gunicorn", "-c", "python:api.gunicorn_conf", "--bind",
               f"127.0.0.1:{port}", "--workers", str(workers), "--timeout", "120",
               "api:create_app()"]  # fmt: skip
    log = open(f"{folder}/gunicorn.log", "ab")  # noqa: SIM115  # closed below
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                if request(port, "GET", "/health", timeout=2)[0] == 200:
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"gunicorn did not start; see {folder}/gunicorn.log"
                    ) from None
                time.sleep(0.2)
        yield port, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def tree_rss(pid: int) -> int:
    """The resident memory of process ``pid`` and all its descendants [byte]."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            total += process.memory_info().rss
    return total


class TreeMemory:
    """Samples the resident memory of a process tree every ``every`` seconds in a thread;
    :attr:`peak` is the largest sum seen [byte], :attr:`last` the latest."""

    def __init__(self, pid: int, every: float = 0.05) -> None:
        self.pid, self.every = pid, every
        self.peak = self.last = tree_rss(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.every):
            self.last = tree_rss(self.pid)
            self.peak = max(self.peak, self.last)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
