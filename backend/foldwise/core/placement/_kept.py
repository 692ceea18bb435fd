"""Placements that stay: where a document the previous tree showed goes now.

A classifier retrained on a few more documents flips near-ties either way, and placements
that jump between reclusters without a reason teach the person nothing (docs/placement.md,
"Placements that stay"). The recluster (``extended_tree``) and the re-placement right after
a critique (``suggest_rows(previous=...)``) decide by the same rule, so that the next
recluster does not put back what a critique just moved.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from foldwise.core._hierarchy import FolderPath

#: Confidences closer than this are the same (``previous_confidence``). Documents on one
#: step of the calibration curve get one value, but a confidence read back from storage
#: may be rounded (the service keeps 4 decimals): compared exactly, half of the equal ones
#: would fall.
SAME_CONFIDENCE = 1e-4
#: A document the previous tree showed in an existing folder moves to another, without the
#: person touching it, only where it is more likely right there than not: the calibrated
#: confidence of the new folder is at least this. Below it the retrained model's flips of
#: documents nobody critiqued went wrong more often than right (service benchmark, six
#: hierarchies, 36 runs: 19 right -> wrong against 11 wrong -> right; docs/placement.md,
#: "Moved only where more likely right than not").
MIN_MOVE_CONFIDENCE = 0.5
#: A document stays in the folder it was shown in while that folder's posterior is within
#: this of the most probable one's (``kept_folders``).
KEEP_MARGIN = 0.1


def kept_folders(
    proba: NDArray[np.float64],
    folders: Sequence[FolderPath],
    new: NDArray[np.intp],
    previous: Sequence[FolderPath | None] | None,
    keep_margin: float,
    previous_confidence: NDArray[np.float64] | None = None,
    calibrated: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None,
    min_move_confidence: float = MIN_MOVE_CONFIDENCE,
) -> tuple[NDArray[np.intp], NDArray[np.bool_]]:
    """Column of the folder each row is shown in, shape (n_docs,): its most probable one,
    or the one it was shown in before while that is within ``keep_margin`` of it, or while
    the most probable one's ``calibrated`` confidence is below ``min_move_confidence`` or
    below the ``previous_confidence`` the row was shown with there; and which rows only
    those last rules kept (n_docs,)."""
    shown = proba.argmax(axis=1) if proba.shape[1] else np.zeros(proba.shape[0], np.intp)
    kept_less_sure = np.zeros(proba.shape[0], dtype=bool)
    if previous is None or not proba.shape[1]:
        return shown, kept_less_sure
    col = {f: j for j, f in enumerate(folders)}
    less_sure = np.zeros(proba.shape[0], dtype=bool)
    if calibrated is not None:
        top = calibrated(proba[np.arange(proba.shape[0]), shown])
        # A move to a folder the document more likely does not belong in is more likely a
        # new mistake than a correction.
        less_sure = top < min_move_confidence
        if previous_confidence is not None:
            # Both sides estimate the chance of being right (the same calibration curve
            # when the recluster keeps the cross-validated quantities). At equal confidence
            # (a step of the curve) no side is surer, so only a fall keeps.
            less_sure |= top < previous_confidence - SAME_CONFIDENCE
    for i in map(int, new):
        before = previous[i]
        j = col.get(tuple(before)) if before is not None else None
        # A folder a critique ruled out has posterior 0 (``FolderPlacement._apply_triples``).
        if j is None or not proba[i, j] > 0:
            continue
        if proba[i, j] >= proba[i, shown[i]] - keep_margin:
            shown[i] = j
        elif less_sure[i]:
            shown[i], kept_less_sure[i] = j, True
    return shown, kept_less_sure
