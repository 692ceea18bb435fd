"""New documents the model shows in a folder that are unlike what the person filed there.

A hidden sibling of a folder F is often placed in F: its documents share F's vocabulary
(baseball posts shown in ``rec/sport/hockey``), so the classifier claims them, and the
dendrogram puts them among F's filed exemplars. Cosines do not tell them apart from F's own
new documents (docs/placement.md, "A sibling's new documents"). A classifier trained to
tell F's filed documents from the new documents shown in F does: the new documents of F
are a random part of what the person files there and cannot be told from the filed ones,
while the sibling's can (a classifier two-sample test, Lopez-Paz and Oquab, "Revisiting
classifier two-sample tests", ICLR 2017).

Per folder, the classifier trained on one half of the documents scores the other half
(and the other way round). A new document is flagged when it scores above all but a
``level`` share of the filed documents. With nothing but F's own topic among the new
documents, all scores are exchangeable, and the chance that k or more new documents are
flagged is a hypergeometric tail; that p-value, corrected for the number of folders
tested (Bonferroni), says whether F holds documents of something else. In such a folder
the documents flagged both by that split and by a second, independent one are returned;
they become a proposal only if they also pass the test every proposal passes
(``_regroup.unlike_filed_siblings``).

The test needs filed documents: on a synthetic corpus with 60% of every folder filed, a
hidden sibling of 15 documents was found in 3 of 20 draws with 9 filed per folder, and in
20 of 20 with 18 (50-100% of its documents flagged by both splits, and 9 of the
folder's own documents over the 20 draws); with nothing hidden, 1 of 180 draws flagged a
folder (``tests/core/test_unlike_filed.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.stats import hypergeom
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import LinearSVC

from foldwise.core._hierarchy import FolderPath
from foldwise.core.placement._sampled_svm import LIBLINEAR_LOCK

#: Largest number of one folder's filed documents the test trains on (a random sample of
#: larger folders): a few hundred already estimate the filed scores' upper tail.
MAX_FILED_PER_FOLDER = 1000


def unlike_filed(
    new_rows: sp.spmatrix | NDArray[np.floating],
    shown: Sequence[FolderPath],
    filed_rows: sp.spmatrix | NDArray[np.floating],
    filed_folders: Sequence[FolderPath],
    *,
    level: float = 0.05,
    alpha: float = 0.05,
    min_size: int = 5,
    random_state: int = 0,
) -> dict[FolderPath, NDArray[np.intp]]:
    """Per folder whose shown new documents are not all like its filed ones, those that are
    not (flagged by two independent splits): indices into ``new_rows``, sorted.

    Parameters
    ----------
    new_rows : sparse matrix or ndarray of shape (n_new, n_terms)
        Feature rows of the new documents.
    shown : sequence of FolderPath, length n_new
        The existing folder each new document is shown in.
    filed_rows : sparse matrix or ndarray of shape (n_filed, n_terms)
        Feature rows of the filed documents, in the space of ``new_rows``.
    filed_folders : sequence of FolderPath, length n_filed
        The folder each filed document is in.
    level : float, default=0.05
        A new document is flagged when it scores above the ``r``-th highest filed document
        of its folder, ``r = max(1, floor(level * (n_filed + 1)))``: a share ``level`` of
        the filed documents score higher (all of them, at least, in small folders).
    alpha : float, default=0.05
        Level of the test per folder, over all folders tested (Bonferroni).
    min_size : int, default=5
        Folders with fewer shown new documents are not tested.
    random_state : int, default=0
        Seed of the folds (the second split's is ``random_state + 1``) and of the sample of
        large folders.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    new_rows, filed_rows = sp.csr_matrix(new_rows), sp.csr_matrix(filed_rows)
    if new_rows.shape[0] != len(shown) or filed_rows.shape[0] != len(filed_folders):
        raise ValueError("shown and filed_folders must give one folder per row")
    rng = np.random.default_rng(random_state)
    shown_in: dict[FolderPath, list[int]] = {}
    for i, f in enumerate(shown):
        shown_in.setdefault(tuple(f), []).append(i)
    filed_in: dict[FolderPath, list[int]] = {}
    for i, f in enumerate(filed_folders):
        filed_in.setdefault(tuple(f), []).append(i)
    tested: dict[FolderPath, tuple[float, NDArray[np.intp], list[int]]] = {}
    for folder, new in shown_in.items():
        filed = filed_in.get(folder, [])
        if len(new) < min_size or len(filed) < 4:
            continue
        if len(filed) > MAX_FILED_PER_FOLDER:
            filed = sorted(rng.choice(filed, MAX_FILED_PER_FOLDER, replace=False).tolist())
        p, flagged = _folder_test(filed_rows[filed], new_rows[new], level, random_state)
        tested[folder] = (p, np.asarray(new, np.intp)[flagged], filed)
    found = {}
    for folder, (p, flagged, filed) in sorted(tested.items()):
        if p * len(tested) > alpha or not flagged.size:
            continue
        # The folder is decided; which documents? About one in ten of its own new ones lies
        # above every filed document of its half by chance, and such documents put 2-3
        # known posts into proposals in 2 of 48 replayed service runs. A document of
        # another topic lies above the filed ones in any split: keep the documents that a
        # second, independent split flags too (docs/placement.md, "Unlike what the person
        # filed").
        new = shown_in[folder]
        _, again = _folder_test(filed_rows[filed], new_rows[new], level, random_state + 1)
        kept = np.intersect1d(flagged, np.asarray(new, np.intp)[again])
        if kept.size:
            found[folder] = kept
    return found


def _folder_test(
    filed: sp.csr_matrix, new: sp.csr_matrix, level: float, random_state: int
) -> tuple[float, NDArray[np.intp]]:
    """P-value of one folder and the positions in ``new`` of its flagged rows.

    Cross-fitting in two halves: a classifier trained on one half scores the other, whose
    filed and new documents are then exchangeable when they are alike, so the p-value of
    each half is exact; the folder's is the smaller one, doubled (Bonferroni). Pooling the
    decision values of a 5-fold cross-validation instead flagged folders of a synthetic
    corpus with nothing hidden 2-3 times as often as its level said.
    """
    n_filed, n_new = filed.shape[0], new.shape[0]
    X = sp.vstack([filed, new]).tocsr()
    y = np.r_[np.zeros(n_filed, dtype=int), np.ones(n_new, dtype=int)]
    halves = StratifiedKFold(2, shuffle=True, random_state=random_state).split(X, y)
    p_values, flagged = [], []
    for train, test in halves:
        # Seeded, and fitted while no other liblinear fit runs: each run flags the same
        # documents (``LIBLINEAR_LOCK``).
        model = LinearSVC(class_weight="balanced", random_state=random_state)
        with LIBLINEAR_LOCK:
            model.fit(X[train], y[train])
        scores = model.decision_function(X[test])
        is_new = y[test] == 1
        p, above = _tail(scores[~is_new], scores[is_new], level)
        p_values.append(p)
        flagged.extend(test[is_new][above] - n_filed)
    return min(1.0, 2.0 * min(p_values)), np.array(sorted(flagged), dtype=np.intp)


def _tail(
    filed: NDArray[np.float64], new: NDArray[np.float64], level: float
) -> tuple[float, NDArray[np.intp]]:
    """Which ``new`` scores lie above the r-th highest ``filed`` one, and the chance of as
    many when all scores are exchangeable."""
    r = max(1, int(np.floor(level * (filed.size + 1))))
    threshold = np.sort(filed)[::-1][r - 1]  # r <= filed.size, as level < 1
    above = np.flatnonzero(new > threshold)
    # The flags share one threshold, so their count is not binomial: k or more new scores
    # lie above the r-th filed one when the top k + r - 1 scores hold at most r - 1 filed
    # ones (hypergeometric; at r = 1, 4 of 12 new beside 18 filed has chance .018 where a
    # binomial would say .0025).
    k = int(above.size)
    p = float(hypergeom(filed.size + new.size, filed.size, k + r - 1).cdf(r - 1)) if k else 1.0
    return p, above
