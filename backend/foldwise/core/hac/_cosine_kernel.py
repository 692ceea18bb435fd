"""Cosine distances of sparse unit rows into a dense square matrix, compiled (used by
:func:`foldwise.core.hac._ihac.distances_of_unit_rows`).

scipy's sparse product builds each block of similarities as a sparse matrix (a counting
pass, the product, then a dense copy) before it reaches the distance matrix. Here each
row's similarities are summed in a dense buffer and written once: the same products, summed
in the same order, so the same bits.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def fill_cosine_distances(row_ptr, row_terms, row_data, col_ptr, col_docs, col_data, D, acc, one):  # type: ignore[no-untyped-def]
    """``D = clip(1 - U U^T, 0, 2)`` with a zero diagonal, D of shape (n, n).

    ``row_*`` are U in CSR (terms ascending in each row), ``col_*`` the same matrix in CSC
    (documents ascending in each column), ``acc`` a buffer of shape (n,) in U's dtype and
    ``one`` 1 in D's dtype. Each similarity sums the shared terms in ascending term order in
    U's dtype, as scipy's CSR product does; only the upper triangle is computed, then
    mirrored.
    """
    n = D.shape[0]
    for i in range(n):
        acc[i:] = 0
        for p in range(row_ptr[i], row_ptr[i + 1]):
            t = row_terms[p]
            v = row_data[p]
            # Documents of the column from the last down to i: the upper triangle only.
            q = col_ptr[t + 1] - 1
            while q >= col_ptr[t] and col_docs[q] >= i:
                acc[col_docs[q]] += v * col_data[q]
                q -= 1
        for j in range(i, n):
            D[i, j] = acc[j]
            d = one - D[i, j]
            if d < 0:
                d = 0
            elif d > 2:
                d = 2
            D[i, j] = d
        D[i, i] = 0
    # Mirror in tiles: a column of D is n scattered cache lines.
    tile = 64
    for bi in range(0, n, tile):
        for bj in range(bi, n, tile):
            for i in range(bi, min(bi + tile, n)):
                for j in range(max(bj, i + 1), min(bj + tile, n)):
                    D[j, i] = D[i, j]
