"""The processes that evaluate run numpy's BLAS (and any other native pool) on one thread: the
API's workers, the job processes and the ``costmodel`` command; a variable the user sets wins."""

from __future__ import annotations

import importlib
import json
import multiprocessing
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from costmodel.threads import THREAD_VARIABLES
from scenarios.executor import _job_process

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    (os.cpu_count() or 1) < 2, reason="one core: the pools have one thread anyway"
)

#: Prints the threads of every native pool loaded, after SciPy's linear algebra (which brings
#: an OpenBLAS of its own, loaded after the door's start) [-].
_THREADS = """
import json, scipy.linalg
from threadpoolctl import threadpool_info
print(json.dumps([lib["num_threads"] for lib in threadpool_info()]))
"""

#: Each door that evaluates, started as it starts in a process of its own.
_DOORS = {
    "api": "from api import create_app\ncreate_app({{'DB': {db!r}}})\n",
    "cli": "from cli.main import main\n"
    "main(['run', 'lab-4x-rtx2080ti-vs-p3-8xlarge', '--samples', '200', '--format', 'json'])\n",
    "nothing": "import numpy\n",
}


def _threads(door: str, tmp_path: Path, **env: str) -> list[int]:
    """The threads of each native pool in a fresh process started through ``door``, with the
    environment's thread variables left out but for ``env``."""
    clean = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    script = _DOORS[door].format(db=str(tmp_path / "runs.sqlite3")) + _THREADS
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**clean, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.parametrize("door", ["api", "cli"])
def test_a_door_that_evaluates_runs_native_pools_on_one_thread(door, tmp_path):
    # A process that only imports numpy runs its BLAS on a thread per core: the check can fail.
    assert max(_threads("nothing", tmp_path)) > 1
    # numpy's OpenBLAS, loaded before the door started, and SciPy's, loaded after
    threads = _threads(door, tmp_path)
    assert len(threads) >= 2 and set(threads) == {1}


def test_the_users_thread_variable_wins(tmp_path):
    assert set(_threads("api", tmp_path, OPENBLAS_NUM_THREADS="2")) == {2}


def _pool_threads(monkeypatch, initializer, *initargs) -> list[int]:
    """The threads of each native pool in a ``spawn``-ed worker of a process pool started by
    ``initializer(*initargs)``, with the thread variables unset, after SciPy's linear algebra
    loaded its own OpenBLAS."""
    from threadpoolctl import threadpool_info

    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, context, initializer, initargs) as pool:
        pool.submit(exec, "import scipy.linalg").result(60)
        return [lib["num_threads"] for lib in pool.submit(threadpool_info).result(60)]


def test_a_job_process_runs_native_pools_on_one_thread(monkeypatch):
    # The same imports without the pin: a thread per core, so the check can fail.
    assert max(_pool_threads(monkeypatch, importlib.import_module, "scenarios.executor")) > 1
    # a batch's workers and a job's own process start through _job_process
    threads = _pool_threads(monkeypatch, _job_process, os.getpid())
    assert len(threads) >= 2 and set(threads) == {1}
