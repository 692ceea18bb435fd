"""A process's C heaps: freed memory back to the system, and few heaps (docs/recluster.md,
"Worker memory").

A recluster allocates its arrays on two threads (the estimator and the placement model run
side by side, ``core_adapter.compute``), and glibc keeps what they free in per-thread heaps
instead of returning it. At 100,000 filed documents a worker idled at 3.0 GB after its first
recluster, and the next one started from there: its peak, 4.4 GB, was that base plus what a
recluster needs. ``malloc_trim`` hands every heap's free pages back after each job
(:func:`release_freed_memory`), and a worker process keeps to two heaps
(:func:`limit_heaps`), so that what one thread frees the other can reuse.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

#: glibc's ``mallopt`` parameter for the number of heaps ("arenas"), malloc.h.
_M_ARENA_MAX = -8


@cache
def _glibc() -> ctypes.CDLL | None:
    """The C library if it is glibc (it has ``malloc_trim``), else ``None`` (musl, macOS)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    if libc is None or not hasattr(libc, "malloc_trim") or not hasattr(libc, "mallopt"):
        return None
    libc.malloc_trim.argtypes = [ctypes.c_size_t]
    libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return libc


def release_freed_memory() -> bool:
    """Return the C heaps' free pages to the system; whether the C library could."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


def limit_heaps(count: int = 2) -> bool:
    """Keep this process to ``count`` C heaps; call before it starts threads. Whether the
    C library took the setting. With one heap per thread (glibc's default allows 8 per
    core), memory one thread freed stays out of the other's reach: in one run each on the
    100,000-document archive, a first recluster peaked at 3.1 GB with two heaps and at
    3.5 GB without."""
    libc = _glibc()
    if libc is None:
        return False
    return bool(libc.mallopt(_M_ARENA_MAX, count))
