"""Feature rows of texts under one stored model's fitted features, kept between requests.

A move, an answer or an undo re-places every unfiled document with the cached model
(``instant.replace_after_critique``), and on the first critique after a recluster turning
their texts into tf-idf rows was most of that time (590 unfiled documents: a move's p50
248-314 ms before, 183-202 ms with kept rows). Their texts rarely change between two
critiques, so their rows are kept here, by a digest of the text, for the features they
were made with; the recluster stores its own rows of the unfiled documents with the model
(docs/recluster.md, "Instant suggestions and critiques: speed").
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from foldwise import core

#: Rows kept per stored model: the unfiled documents a recluster takes at most
#: (``max_unfiled``'s default), so every unfiled document of a large archive stays cached.
#: A row is its non-zero terms: about 2 KB for a page of text.
ROWS_KEPT = 5000

_Row = tuple[NDArray[np.int32], NDArray[np.float64]]


class FeatureRows:
    """Tf-idf rows of texts under one fitted ``TextFeatures``, the newest ``limit`` kept.

    A text's row depends on the text and the fitted features alone (its language is
    detected on its own, its weights come from the fitted idf), so a kept row is the row
    ``features.transform`` would make again. Safe to share between request threads.
    """

    def __init__(self, limit: int = ROWS_KEPT) -> None:
        self.limit = limit
        self._rows: OrderedDict[bytes, _Row] = OrderedDict()
        self._lock = threading.Lock()

    def transform(self, features: core.TextFeatures, texts: Sequence[str]) -> sp.csr_matrix:
        """``features.transform(texts)``, shape (n_texts, n_terms), from kept rows where
        there are; the others are made and kept."""
        keys = [text_key(t) for t in texts]
        rows: list[_Row | None] = []
        with self._lock:
            for key in keys:
                row = self._rows.get(key)
                if row is not None:
                    self._rows.move_to_end(key)
                rows.append(row)
        missing = [i for i, row in enumerate(rows) if row is None]
        if missing:
            made = _split(features.transform([texts[i] for i in missing]))
            for i, row in zip(missing, made, strict=True):
                rows[i] = row
            self._keep([keys[i] for i in missing], made)
        return _stack(rows, len(features.vocabulary_))

    def add(self, keys: Sequence[bytes], X: sp.csr_matrix) -> None:
        """Keep rows made elsewhere: ``X`` (len(keys), n_terms), row i the text of ``keys[i]``
        under the same features (the recluster's, stored with the model)."""
        X = sp.csr_matrix(X)
        if X.shape[0] != len(keys):
            raise ValueError(f"{X.shape[0]} rows for {len(keys)} keys")
        self._keep(keys, _split(X))

    def _keep(self, keys: Sequence[bytes], rows: Sequence[_Row]) -> None:
        with self._lock:
            self._rows.update(zip(keys, rows, strict=True))
            while len(self._rows) > self.limit:
                self._rows.popitem(last=False)

    def __len__(self) -> int:
        return len(self._rows)


def text_key(text: str) -> bytes:
    """The 16-byte digest a text's row is kept under."""
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


def rows_to_arrays(keys: Sequence[bytes], X: sp.csr_matrix) -> dict[str, NDArray[Any]]:
    """Digests and rows (``FeatureRows.add``'s arguments) as plain arrays for an ``.npz``."""
    X = sp.csr_matrix(X)
    return {
        "keys": np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 16),
        "indptr": X.indptr.astype(np.int64),
        "indices": X.indices.astype(np.int32),
        "data": X.data.astype(np.float64),
    }


def rows_from_arrays(
    arrays: Mapping[str, NDArray[Any]], n_terms: int
) -> tuple[list[bytes], sp.csr_matrix]:
    """The inverse of :func:`rows_to_arrays`; ``ValueError`` where they do not fit together
    or refer to terms beyond ``n_terms``."""
    keys = np.asarray(arrays["keys"], dtype=np.uint8)
    indptr = np.asarray(arrays["indptr"], dtype=np.int64)
    indices = np.asarray(arrays["indices"], dtype=np.int64)
    data = np.asarray(arrays["data"], dtype=np.float64)
    n = keys.shape[0]
    if (
        keys.ndim != 2
        or keys.shape[1] != 16
        or indptr.shape != (n + 1,)
        or indptr[0] != 0
        or np.any(np.diff(indptr) < 0)
        or indptr[-1] != indices.size
        or indices.shape != data.shape
        or (indices.size and (indices.min() < 0 or indices.max() >= n_terms))
        or not np.all(np.isfinite(data))
    ):
        raise ValueError("stored feature rows do not fit together")
    X = sp.csr_matrix((data, indices, indptr), shape=(n, n_terms))
    return [bytes(k) for k in keys], X


def _split(X: sp.csr_matrix) -> list[_Row]:
    """Each row of ``X`` as its (columns, values), copies that outlive ``X``."""
    X = sp.csr_matrix(X)
    return [
        (X.indices[lo:hi].astype(np.int32), X.data[lo:hi].astype(np.float64))
        for lo, hi in zip(X.indptr[:-1], X.indptr[1:], strict=True)
    ]


def _stack(rows: Sequence[_Row | None], n_terms: int) -> sp.csr_matrix:
    """CSR of ``rows`` (every one present), shape (len(rows), n_terms)."""
    present = [row for row in rows if row is not None]
    if not present:
        return sp.csr_matrix((0, n_terms))
    indptr = np.zeros(len(present) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([row[0].size for row in present])
    indices = np.concatenate([row[0] for row in present])
    data = np.concatenate([row[1] for row in present])
    return sp.csr_matrix((data, indices, indptr), shape=(len(present), n_terms))
