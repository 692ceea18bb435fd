"""Compile the numba kernels ahead of the first real fit.

iHAC's merge loop and admissibility tests (``hac/_ihac_kernel.py``,
``hac/_ihac_admissible.py``) and the measures' common-ancestor and triple-weight loops are
``numba.njit(cache=True)``: the first call compiles them (about 14 s of CPU on the 2-core
development machine) and stores the machine code in numba's cache (the package's
``__pycache__``, or ``$NUMBA_CACHE_DIR``); later processes load it in well under a second.
:func:`compile_kernels` makes that first call on a tiny input, so that it happens at image
build or worker start instead of in a person's first recluster.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from foldwise.core._hierarchy import Hierarchy
from foldwise.core.hac import IHAC, BiHAC
from foldwise.core.measures import common_ancestor_matrix, h_correlation
from foldwise.core.placement._decision_kernel import best_two, decision_rows


def compile_kernels() -> None:
    """Run every numba kernel once on a tiny input (compiling it or loading it from the
    on-disk cache). Deterministic and side-effect free apart from that cache."""
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.random((12, 8)))
    folders = [("a",)] * 3 + [("b", "c")] * 3 + [("b", "d")] * 2 + [None] * 4
    # iHAC with folder constraints and an explicit triple: the merge loop and every
    # admissibility test; biHAC adds the H-correlation it tracks between runs.
    IHAC().fit(X, folders, triples=[(8, 9, 10)])
    BiHAC(r_max=2, r_ni=1).fit(X, folders)
    truth = Hierarchy.from_paths([f or ("e",) for f in folders])
    common_ancestor_matrix(truth)
    h_correlation(truth, truth)
    # The sampled SVMs' mining of hard negatives and the held-out documents' best two
    # decisions, with both index widths scipy uses.
    for index in (np.int32, np.int64):
        # Set after construction: scipy's constructor narrows int64 indices that fit.
        Xi = X.copy()
        Xi.indices, Xi.indptr = X.indices.astype(index), X.indptr.astype(index)
        decision_rows(
            Xi.indptr, Xi.indices, Xi.data, np.ones((8, 2)), np.zeros(2), np.empty((2, 12))
        )
        best_two(Xi, np.arange(12), np.ones((8, 2)), np.zeros(2))
