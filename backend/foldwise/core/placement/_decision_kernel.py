"""Decision values of a block of linear classifiers, one classifier's values contiguous;
used by :mod:`_sampled_svm` to mine hard negatives.

``F @ coef.T`` lays the values out a document at a time: (n_docs, n_classes). Mining reads
them a class at a time, so each block was transposed after the product, a strided copy of
50 MB per 64 classes at 100,000 documents: 1.9 s of each sampled fit of 1,000 classes
(docs/recluster.md, "Hard negatives without the transpose"). Here each document's values
are summed in a small buffer and written to their classes' rows.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def decision_rows(indptr, indices, data, coef_t, intercept, out):  # type: ignore[no-untyped-def]
    """Write ``(F @ coef_t + intercept).T`` into ``out`` (shape (n_classes, n_docs)).

    ``indptr, indices, data`` are ``F`` in CSR (n_docs rows), ``coef_t`` the classifiers'
    coefficients as a C-ordered (n_features, n_classes) array, ``intercept`` shape
    (n_classes,). Each value adds its document's terms in the row's stored order and the
    intercept last, as scipy's CSR product followed by ``+= intercept`` does: the same bits.
    """
    n_classes = coef_t.shape[1]
    total = np.zeros(n_classes)
    for i in range(indptr.shape[0] - 1):
        total[:] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            value = data[p]
            row = coef_t[indices[p]]
            for c in range(n_classes):
                total[c] += value * row[c]
        for c in range(n_classes):
            out[c, i] = total[c] + intercept[c]
