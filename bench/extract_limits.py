"""Hostile PDFs against the extraction limits: how fast they are refused, and the peak
memory of the parse (issue: a 60 MB inflated content stream took 10 s and 340 MB).

For each file: the wall time of ``extract()`` as the service calls it (sandboxed, from a
warm forkserver), and the peak resident memory of the same parse run alone in a child
process (os.wait4), with the answer. Usage::

    python bench/extract_limits.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

from foldwise.bench.hostile import inflating_pdf
from foldwise.service.documents.extract import extract
from foldwise.service.errors import InvalidInputError

CASES = {
    "honest 20 KB stream": inflating_pdf(20_000),
    "heavy 3 MB stream": inflating_pdf(3 << 20),
    "bomb 60 MB stream": inflating_pdf(60 << 20),
}


def _answer(data: bytes, name: str) -> str:
    try:
        return f"read {len(extract(data, name).text)} chars"
    except InvalidInputError as exc:
        return f"refused: {exc.message[:80]}"


def _peak_memory_mb(data: bytes, name: str) -> float:
    """Peak RSS of one sandboxed-style parse in a fresh child (the parser alone)."""
    with tempfile.NamedTemporaryFile(suffix=".pdf", delete=False) as handle:
        handle.write(data)
    code = (
        "import sys\nfrom foldwise.service.documents.extract import _pdf\n"
        "try:\n    _pdf(open(sys.argv[1], 'rb').read(), sys.argv[2])\nexcept Exception:\n    pass\n"
    )
    pid = os.spawnv(os.P_NOWAIT, sys.executable, [sys.executable, "-c", code, handle.name, name])
    _, _, usage = os.wait4(pid, 0)
    os.unlink(handle.name)
    return usage.ru_maxrss / 1024


def main() -> None:
    extract(CASES["honest 20 KB stream"], "warm.pdf")  # start the forkserver once
    for label, data in CASES.items():
        started = time.perf_counter()
        answer = _answer(data, f"{label}.pdf")
        seconds = time.perf_counter() - started
        row = {
            "file": label,
            "stored_bytes": len(data),
            "seconds": round(seconds, 2),
            "parse_peak_mb": round(_peak_memory_mb(data, f"{label}.pdf"), 1),
            "answer": answer,
        }
        print(json.dumps(row))


if __name__ == "__main__":
    main()
