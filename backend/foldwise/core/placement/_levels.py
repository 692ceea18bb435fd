"""Level assignment of folder posteriors (003 sec. 3.1, eq. 9).

A document is placed only as deep in the folder tree as the model is confident: it goes
down while the posterior mass of the next subtree exceeds a threshold ``rho``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from foldwise.core._hierarchy import FolderPath


@dataclass(frozen=True)
class Placement:
    """Where a placement model puts each document.

    Attributes
    ----------
    folder : list of FolderPath, length n_docs
        The deepest folder the document is confidently in (level assignment, 003 eq. 9);
        ``()`` is the root ("not sure where this goes").
    confidence : ndarray of shape (n_docs,)
        Posterior mass of ``folder``'s subtree (1.0 for the root).
    best_folder : list of FolderPath, length n_docs
        The single most probable folder, however uncertain.
    best_confidence : ndarray of shape (n_docs,)
        Posterior of ``best_folder`` itself, times ``known``.
    known : ndarray of shape (n_docs,)
        Probability that the document belongs to an existing folder at all rather than to
        a topic the person has no folder for.
    depth : ndarray of shape (n_docs,), int
        ``len(folder)``: how deep the model is confident.
    """

    folder: list[FolderPath]
    confidence: NDArray[np.float64]
    best_folder: list[FolderPath]
    best_confidence: NDArray[np.float64]
    depth: NDArray[np.intp]
    known: NDArray[np.float64]


def assign_folder_levels(
    proba: NDArray[np.float64],
    folders: Sequence[FolderPath],
    rho: float,
    known: NDArray[np.float64] | None = None,
) -> Placement:
    """Level assignment (003 sec. 3.1, eq. 9) of folder posteriors.

    Walk down from the root; at each folder, take the most probable of its child subtrees and
    the folder itself (when it holds documents of its own); descend while that subtree's
    posterior mass exceeds ``rho``. The last step, into a folder without subfolders, also
    needs the document to belong to an existing folder at all: its mass there is multiplied
    by ``known``. A document of a new topic next to known ones thus stops at their parent.

    Parameters
    ----------
    proba : ndarray of shape (n_docs, n_folders)
    folders : sequence of FolderPath, length n_folders
    rho : float in (0, 1)
    known : ndarray of shape (n_docs,), optional
        Probability of belonging to an existing folder; ones if omitted.
    """
    folders = tuple(tuple(f) for f in folders)
    tree = folder_tree(folders)
    # (n_docs, n_nodes): the posterior of each node's subtree
    mass = np.asarray(tree.subtree @ np.asarray(proba).T).T
    n_docs = proba.shape[0]
    known = np.ones(n_docs) if known is None else np.asarray(known, dtype=np.float64)
    out_folder: list[FolderPath] = []
    confidence = np.ones(n_docs)
    for i in range(n_docs):
        node = 0
        while True:
            options = list(tree.children[node])
            if not options:
                break
            best = max(options, key=lambda c: mass[i, c])
            own = proba[i, tree.class_of[node]] if tree.class_of[node] >= 0 else -1.0
            gate = known[i] if not tree.children[best] else 1.0
            if own >= mass[i, best] or mass[i, best] * gate <= rho:
                break
            node = best
        out_folder.append(tree.paths[node])
        leaf = node != 0 and not tree.children[node]
        confidence[i] = (
            1.0 if node == 0 else float(min(mass[i, node] * (known[i] if leaf else 1.0), 1.0))
        )
    best_j = proba.argmax(axis=1)
    return Placement(
        folder=out_folder,
        confidence=confidence,
        best_folder=[folders[j] for j in best_j],
        best_confidence=proba[np.arange(n_docs), best_j].astype(np.float64) * known,
        depth=np.array([len(f) for f in out_folder], dtype=np.intp),
        known=known,
    )


class FolderTree:
    """Every prefix of the given folders as a node; node 0 is the root ``()``.

    Attributes
    ----------
    paths : list of FolderPath, length n_nodes
    children : list of list of int, length n_nodes
        Child nodes of each node.
    class_of : ndarray of shape (n_nodes,), int
        The folder (column of the posteriors) each node is, -1 for a prefix only.
    subtree : sparse matrix of shape (n_nodes, n_folders)
        1 where the folder lies in the node's subtree (the node itself included). Sparse:
        dense it was 9 MB at 1,000 folders, built anew for every suggestion.
    """

    def __init__(self, folders: Sequence[FolderPath]) -> None:
        index: dict[FolderPath, int] = {(): 0}
        for f in folders:
            for d in range(1, len(f) + 1):
                index.setdefault(f[:d], len(index))
        self.paths = list(index)
        self.children: list[list[int]] = [[] for _ in self.paths]
        for p, v in index.items():
            if p:
                self.children[index[p[:-1]]].append(v)
        self.class_of = np.full(len(self.paths), -1, dtype=np.intp)
        nodes: list[int] = []
        columns: list[int] = []
        for j, f in enumerate(folders):
            self.class_of[index[f]] = j
            nodes.extend(index[f[:d]] for d in range(len(f) + 1))
            columns.extend([j] * (len(f) + 1))
        self.subtree = sp.csr_matrix(
            (np.ones(len(nodes)), (nodes, columns)), shape=(len(self.paths), len(folders))
        )


@functools.lru_cache(maxsize=8)
def folder_tree(folders: tuple[FolderPath, ...]) -> FolderTree:
    """The :class:`FolderTree` of ``folders``, built once per folder list: every suggestion
    and every proposal candidate asks for the model's (at 1,000 folders building it took
    2 ms, a third of a suggestion's CPU; docs/recluster.md, "Suggestions at 1,000 folders:
    the folder tree once"). Read-only by convention."""
    return FolderTree(folders)


def common_depths(folders: Sequence[FolderPath]) -> NDArray[np.intp]:
    """Depth of the deepest common ancestor of each pair of folders, shape
    (n_folders, n_folders): 0 where they share only the root.

    Two folders that share their prefix of depth d share every shorter one, so the common
    depth counts the depths at which their prefixes are equal: one comparison of prefix ids
    per depth (pair by pair in Python it took 0.25 s at 1,000 folders, on every prediction
    with explicit triples).
    """
    k = len(folders)
    out = np.zeros((k, k), dtype=np.intp)
    ids: dict[FolderPath, int] = {}
    for d in range(1, max((len(f) for f in folders), default=0) + 1):
        prefix = np.array(
            [ids.setdefault(tuple(f[:d]), len(ids)) if len(f) >= d else -1 for f in folders]
        )
        out += (prefix[:, None] == prefix[None, :]) & (prefix >= 0)[:, None]
    return out
