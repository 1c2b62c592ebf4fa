"""The C allocator's settings for a process that evaluates: freed arrays kept for the next ones.

An evaluation allocates and frees arrays of many megabytes (a chunk of draws x months, a row of
a million draws). By default glibc maps every block above an adaptive threshold on its own and
hands free memory at the top of the heap back to the kernel, so each such array is
page-faulted in afresh: about a fifth of a 10,000-draw request's CPU time, and some 0.2 s of
system time in a 1,000,000-draw run. The doors that evaluate (the API's workers, the
``costmodel`` command) call :func:`keep_freed_memory` once at start; the engine itself leaves
the process's allocator alone.
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["keep_freed_memory"]

#: glibc ``mallopt`` parameters (malloc.h) and the values :func:`keep_freed_memory` gives them.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_KEEP_FREED = 64 * 2**20  # [byte] free memory at the top of the heap kept for the next arrays
_HEAP_BLOCKS = 32 * 2**20  # [byte] largest block taken from the heap (glibc's own maximum)


def keep_freed_memory() -> bool:
    """Let the C allocator keep the memory one evaluation (or one phase of it) frees for the
    next (glibc only): blocks up to 32 MB are taken from the heap and up to 64 MB of free
    memory stays with the process. Returns whether the allocator took both settings; other C
    libraries are left as they are."""
    try:
        glibc = os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        glibc = None
    if not glibc:
        return False
    mallopt = ctypes.CDLL(None).mallopt  # this process's C library
    settings = ((_M_MMAP_THRESHOLD, _HEAP_BLOCKS), (_M_TRIM_THRESHOLD, _KEEP_FREED))
    return all([mallopt(param, value) == 1 for param, value in settings])
