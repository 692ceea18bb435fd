"""Each document's language, detected once when its text arrives and stored with it.

Feature fitting detects every text's language (``core.TextFeatures``, docs/languages.md),
and a process remembers its detections only while it runs: a worker's first recluster of
100,000 documents spent 14.5 s detecting them (docs/recluster.md, "Languages detected at
ingest"). Ingestion stores the posteriors in ``Document.language_posteriors``; a reader of
texts hands them back to the core with :func:`remember` before fitting.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from foldwise import core


def posteriors_of(text: str) -> bytes | None:
    """The stored form of ``text``'s language posteriors: float32 in the order of
    ``core.LANGUAGE_CODES``; ``None`` for a text without words (nothing to detect)."""
    if not text.strip():
        return None
    return np.asarray(core.language_posteriors(text), dtype=np.float32).tobytes()


def remember(texts: Sequence[str], stored: Sequence[bytes | None]) -> int:
    """Give the core the stored detections of ``texts`` (``stored[i]`` for ``texts[i]``), so
    that it does not detect them again; returns how many it took.

    A detection stored for another set of languages (another length) is left out: the core
    detects that text again.
    """
    width = 4 * len(core.LANGUAGE_CODES)
    usable = [(t, p) for t, p in zip(texts, stored, strict=True) if p and len(p) == width]
    if usable:
        found = np.frombuffer(b"".join(p for _, p in usable), dtype=np.float32)
        core.remember_language_posteriors(
            [t for t, _ in usable], found.reshape(len(usable), len(core.LANGUAGE_CODES))
        )
    return len(usable)
