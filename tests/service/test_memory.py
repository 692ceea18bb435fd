"""The worker's C heap handling (``foldwise.service.memory``), on the real C library."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from foldwise.service import memory

pytestmark = pytest.mark.skipif(
    memory._glibc() is None, reason="the C library is not glibc: nothing to trim or limit"
)


def _resident_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


def test_release_returns_what_a_thread_freed() -> None:
    # 200 MB in blocks below glibc's mmap threshold, allocated by another thread between
    # small blocks that stay: once the big ones are freed, the heap cannot shrink from its
    # top, and glibc keeps the pages until they are trimmed.
    kept: list[bytearray] = []

    def churn() -> None:
        blocks = []
        for _ in range(3200):
            blocks.append(bytearray(64 * 1024))
            kept.append(bytearray(600))
        blocks.clear()

    thread = threading.Thread(target=churn)
    thread.start()
    thread.join()
    before = _resident_mb()
    assert memory.release_freed_memory()
    assert _resident_mb() < before - 100
    assert len(kept) == 3200


def test_limit_heaps_is_taken() -> None:
    assert memory.limit_heaps(8)  # the glibc default on a 1-core machine: harmless here
