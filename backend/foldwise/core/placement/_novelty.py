"""Open-set test by neighbourhood: is a new document of a topic no folder holds?

A document of a folder the person has keeps filed documents of that folder among its nearest
neighbours; a document of a topic the person has no folder for finds only other new
documents near it. How often a document's nearest neighbours are new depends on how many
documents are new, so the yardstick is the person's own filing: the filed documents' nearest
neighbours, counted the same way, give the distribution under "a topic that has a folder"
(an empirical null). A new document is novel when a count of new neighbours as high as its
own is rare among filed documents (one-sided, level ``alpha``).

Measured on four real folder hierarchies (python-docs, the Ansible, PowerShell and PHP
manuals; one leaf or subtree hidden, 40% of every other folder new; docs/placement.md,
"Open set"), ``k = 10`` and ``alpha = 0.02`` let 41-87% of the hidden folders' documents
through and 0.6-1.4% of the other new ones, where the classifier's own test
(``FolderPlacement.is_novel``) separated the two less well (AUC .70-.97 against .80-.998).

The p-values themselves (:func:`neighbourhood_p_values`) also make a weaker test: a document
the classifier rejects joins a proposal only with a neighbourhood newer than three quarters
of the filed documents' (``_proposal_groups.CLASSIFIER_PATH_LEVEL``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.preprocessing import normalize

#: Rows per block of the similarity product: a block of 256 rows against 40,000 documents
#: is an 80 MB dense matrix.
_BLOCK = 256


#: Level of the test when it alone lets a document into a proposal (module docstring).
ALPHA = 0.02

#: Filed documents the neighbourhoods are looked for among, at most (a random sample of
#: larger archives; ``neighbourhood_p_values(max_filed=...)``).
MAX_FILED = 20_000


def neighbourhood_novelty(
    new_rows: sp.spmatrix | NDArray[np.floating],
    filed_rows: sp.spmatrix | NDArray[np.floating],
    *,
    k: int = 10,
    alpha: float = ALPHA,
    null_sample: int = 2000,
    max_filed: int | None = MAX_FILED,
    random_state: int = 0,
) -> NDArray[np.bool_]:
    """Whether each new document's neighbourhood is unusually new, shape (n_new,).

    ``neighbourhood_p_values(...) <= alpha``; all False when there is no filed or no new
    document to compare.

    Parameters
    ----------
    alpha : float, default=0.02
        Level of the one-sided test against the filed documents' counts.
    new_rows, filed_rows, k, null_sample, max_filed, random_state
        See :func:`neighbourhood_p_values`.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    p = neighbourhood_p_values(
        new_rows,
        filed_rows,
        k=k,
        null_sample=null_sample,
        max_filed=max_filed,
        random_state=random_state,
    )
    return np.asarray(p <= alpha)


def neighbourhood_p_values(
    new_rows: sp.spmatrix | NDArray[np.floating],
    filed_rows: sp.spmatrix | NDArray[np.floating],
    *,
    k: int = 10,
    null_sample: int = 2000,
    max_filed: int | None = MAX_FILED,
    random_state: int = 0,
) -> NDArray[np.float64]:
    """How ordinary each new document's neighbourhood is, shape (n_new,), in [0, 1].

    The share of (sampled) filed documents with at least as many new documents among their
    ``k`` nearest neighbours: small for a document of a topic no folder holds, about one
    half for a document like any filed one.

    Parameters
    ----------
    new_rows : sparse matrix or ndarray of shape (n_new, n_terms)
        Feature rows of the new (unfiled) documents.
    filed_rows : sparse matrix or ndarray of shape (n_filed, n_terms)
        Feature rows of the filed documents: every one the placement model trains on, not
        only a dendrogram's exemplars (a new document's filed neighbour may be any of them).
    k : int, default=10
        Nearest neighbours looked at (cosine similarity; fewer when there are fewer
        documents).
    null_sample : int, default=2000
        Filed documents whose neighbourhoods make the null (a fixed sample of larger
        archives; the work is ``(n_new + null_sample) x (n_filed + n_new)`` cosines).
    max_filed : int or None, default=20,000
        Neighbours are looked for among a random sample of this many filed documents when
        there are more (``None``: all). The null is counted in the same pool, so the test
        keeps its level; it keeps its power while filed documents outnumber new ones well
        (the four hierarchies of the module docstring had 1.5 filed per new document, a
        100,000-document archive with 5,000 new has 20, sampled 4). The work shrinks in
        proportion: at 100,000 filed documents a recluster's wait for the test fell from
        37 to 6 s (docs/recluster.md, "100,000 documents").
    random_state : int, default=0
        Seed of the samples.

    Returns
    -------
    ndarray of shape (n_new,), float
        All 1 (nothing is new) when there is no filed or no new document to compare.
    """
    if not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    if max_filed is not None and max_filed < 1:
        raise ValueError(f"max_filed must be positive or None, got {max_filed!r}")
    new = sp.csr_matrix(new_rows, dtype=np.float64)
    filed = sp.csr_matrix(filed_rows, dtype=np.float64)
    if new.shape[1] != filed.shape[1]:
        raise ValueError(f"new_rows has {new.shape[1]} columns, filed_rows {filed.shape[1]}")
    n_new, n_filed = new.shape[0], filed.shape[0]
    k = min(int(k), n_filed + n_new - 1)
    if n_new == 0 or n_filed == 0 or k < 1:
        return np.ones(n_new)
    rng = np.random.default_rng(random_state)
    if max_filed is not None and n_filed > max_filed:
        filed = filed[np.sort(rng.permutation(n_filed)[:max_filed])]
        n_filed = max_filed
    new, filed = sp.csr_matrix(normalize(new)), sp.csr_matrix(normalize(filed))
    pool = sp.vstack([filed, new]).tocsr()
    is_new = np.arange(n_filed + n_new) >= n_filed
    null_rows = np.sort(rng.permutation(n_filed)[:null_sample])
    null_counts = _new_neighbours(pool, null_rows, is_new, k)
    counts = _new_neighbours(pool, n_filed + np.arange(n_new), is_new, k)
    # P(C >= c) under the null, for c = 0..k.
    tail = np.bincount(null_counts, minlength=k + 1)[::-1].cumsum()[::-1] / null_counts.size
    return np.asarray(tail[counts], dtype=np.float64)


def _new_neighbours(
    pool: sp.csr_matrix, rows: NDArray[np.intp], is_new: NDArray[np.bool_], k: int
) -> NDArray[np.intp]:
    """How many of the ``k`` nearest neighbours of each of ``rows`` (itself excluded) are new."""
    out = np.empty(rows.size, dtype=np.intp)
    for start in range(0, rows.size, _BLOCK):
        block = rows[start : start + _BLOCK]
        S = np.asarray((pool[block] @ pool.T).todense())
        S[np.arange(block.size), block] = -np.inf
        nearest = np.argpartition(-S, k - 1, axis=1)[:, :k]
        out[start : start + block.size] = is_new[nearest].sum(axis=1)
    return out
