"""The native thread pools of a process that evaluates: one thread each, unless the
environment says otherwise.

numpy's BLAS (OpenBLAS in its wheels, MKL or BLIS in other builds) starts a thread per core and
splits a large ``einsum`` or matrix product between them: a plan's emissions and fleet sums. On
a server answering several requests at once the cores are already busy with requests, so the
second thread adds CPU without adding answers: a plan of 3 x 2 candidates over 240 months and
50,000 draws with carbon and a daily peak took 2.1 to 2.5 s of CPU with two threads on two
cores and 1.7 to 2.1 s with one, in paired runs on a loaded machine (and the work the API
counts, :mod:`api.limits`, follows one thread).
The doors that evaluate (the API's workers, the job processes of :mod:`scenarios.executor`,
the ``costmodel`` command) call :func:`pin_threads` once at start; the engine itself leaves the
process's pools alone, as a notebook may want them.

The libraries read their variables (:data:`THREAD_VARIABLES`) once, when they are loaded: set
for processes started later and libraries loaded later (SciPy's own OpenBLAS, loaded with
``scipy.linalg``), and the pools of those already loaded limited through ``threadpoolctl``.
Any of the variables set by the user (``OPENBLAS_NUM_THREADS=2``) leaves every pool as the
environment says.
"""

from __future__ import annotations

import os

__all__ = ["THREAD_VARIABLES", "pin_threads"]

#: The environment variables that set the native pools' threads: OpenMP's (which OpenBLAS, MKL
#: and BLIS read too when their own is unset), then each library's own.
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
)


def pin_threads() -> None:
    """Hold every native thread pool of this process, and of the processes it starts, to one
    thread, unless one of :data:`THREAD_VARIABLES` is set (by the user, or by this function in
    a parent process, whose libraries then read it as they load)."""
    if any(os.environ.get(name) for name in THREAD_VARIABLES):
        return
    os.environ.update(dict.fromkeys(THREAD_VARIABLES, "1"))  # libraries and processes to come
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # the libraries loaded already (numpy's BLAS)
