"""Dendrogram -> extended tree, until the core's ``extended_tree`` lands (DESIGN.md sec. 6).

Pure numpy / scipy, kept out of the core only because the core's own builder is being written
by its owner; :mod:`core_adapter` is the single caller and switches to the core's function.

Construction:

* Placement: each unfiled document goes to the existing folder whose centroid is most
  similar under the learned term weights (DESIGN.md sec. 6: folder centroids under learned
  weights beat the dendrogram's nearest neighbour), unless it belongs to a proposal.
* Proposals: dendrogram nodes that hold only unfiled documents, at least ``MIN_SIZE`` of
  them, taken largest first, when most members are closer to the rest of the group
  (leave-one-out centroid) than to any existing folder, and the group is not (mostly) a
  group the person rejected before. A proposal hangs under the deepest folder that holds all
  labeled documents of its nearest dendrogram ancestor that has labeled documents: a new
  subfolder when they share one folder, a new sibling higher up, top level when none.
* Names: the top terms of the proposal's weighted centroid (003 sec. 3.2). Explanations: the
  terms contributing most to the weighted cosine with the chosen folder or proposal.
* Confidence: softmax (temperature ``TEMPERATURE``) over the chosen candidate and the best
  alternative, so a clear winner is near 1 and a tie is 0.5.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

MIN_SIZE = 3
MIN_COHESION = 0.1
TEMPERATURE = 0.05
N_TERMS = 5
#: A proposal that shares this much (Jaccard) with a rejected group is not proposed again.
REJECTED_OVERLAP = 0.5


@dataclass
class Proposal:
    """A proposed folder (``index`` numbers it within the version)."""

    index: int
    parent_folder_id: int | None
    name: str
    top_terms: list[str]
    document_ids: list[int]
    cohesion: float


@dataclass
class PlacementOut:
    """Where one unfiled document goes: a folder, a proposal (``proposal_index``) or the top."""

    document_id: int
    folder_id: int | None
    proposal_index: int | None
    confidence: float
    terms: list[str]
    runner_up_folder_id: int | None
    margin: float | None


@dataclass
class Tree:
    proposals: list[Proposal]
    placements: list[PlacementOut]


def _unit_rows(X: sp.csr_matrix, scale: NDArray[np.float64]) -> NDArray[np.float64]:
    dense = np.asarray((X @ sp.diags(scale)).todense(), dtype=np.float64)
    norms = np.linalg.norm(dense, axis=1, keepdims=True)
    return dense / np.where(norms > 0, norms, 1.0)


def _unit(v: NDArray[np.float64]) -> NDArray[np.float64]:
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


def _top_terms(vector: NDArray[np.float64], term_names: list[str], k: int = N_TERMS) -> list[str]:
    order = np.argsort(-vector, kind="stable")[:k]
    return [term_names[i] for i in order if vector[i] > 0]


def _confidence(chosen: float, other: float) -> float:
    if not np.isfinite(other):
        return 1.0 if chosen > 0 else 0.0
    return float(1.0 / (1.0 + np.exp(-(chosen - other) / TEMPERATURE)))


def _members(node: int, n: int, children: NDArray[np.intp]) -> list[int]:
    out, stack = [], [node]
    while stack:
        v = stack.pop()
        if v < n:
            out.append(v)
        else:
            stack.extend(children[v - n])
    return out


def _common_folder(paths: list[tuple[str, ...]]) -> int | None:
    prefix = list(paths[0])
    for p in paths[1:]:
        k = 0
        while k < min(len(prefix), len(p)) and prefix[k] == p[k]:
            k += 1
        prefix = prefix[:k]
    return int(prefix[-1]) if prefix else None


def extended_tree(
    Z: NDArray[np.float64],
    X: sp.csr_matrix,
    labels: list[tuple[str, ...] | None],
    *,
    weights: NDArray[np.float64],
    term_names: list[str],
    folder_of: list[int | None],
    doc_ids: list[int],
    folders: dict[int, tuple[int | None, str]],
    centroid_X: sp.csr_matrix,
    centroid_rows: dict[int, list[int]],
    rejected: list[set[int]],
) -> Tree:
    """Build proposals and placements for the unfiled documents of one recluster."""
    n = X.shape[0]
    scale = np.sqrt(np.maximum(weights, 0.0))
    U = _unit_rows(X, scale)
    folder_ids = [f for f, rows in sorted(centroid_rows.items()) if rows]
    if folder_ids:
        C_all = _unit_rows(centroid_X, scale)
        C = np.vstack([_unit(C_all[centroid_rows[f]].mean(axis=0)) for f in folder_ids])
        S = U @ C.T  # (n, n_folders) weighted cosine to each folder centroid
    else:
        C = np.zeros((0, X.shape[1]))
        S = np.zeros((n, 0))
    best_sim = S.max(axis=1) if folder_ids else np.full(n, -np.inf)

    unlabeled = np.array([lab is None for lab in labels])
    children = Z[:, :2].astype(np.intp)
    n_lab = np.concatenate([(~unlabeled).astype(np.int64), np.zeros(max(n - 1, 0), np.int64)])
    size = np.concatenate([np.ones(n, np.int64), np.zeros(max(n - 1, 0), np.int64)])
    parent = np.full(2 * n - 1, -1, dtype=np.intp)
    for k, (a, b) in enumerate(children):
        n_lab[n + k] = n_lab[a] + n_lab[b]
        size[n + k] = size[a] + size[b]
        parent[a] = parent[b] = n + k

    candidates = [v for v in range(n, 2 * n - 1) if n_lab[v] == 0 and size[v] >= MIN_SIZE]
    candidates.sort(key=lambda v: (-size[v], v))
    taken = np.zeros(n, dtype=bool)
    proposals: list[Proposal] = []
    proposal_of = np.full(n, -1, dtype=np.intp)
    loo_sim = np.zeros(n)
    centroids: list[NDArray[np.float64]] = []
    for v in candidates:
        members = _members(v, n, children)
        if taken[members].any():
            continue
        total = U[members].sum(axis=0)
        loo = np.array([float(_unit(total - U[m]) @ U[m]) for m in members])
        if np.mean(loo > best_sim[members]) < 0.5 or float(loo.mean()) < MIN_COHESION:
            continue
        ids = {doc_ids[m] for m in members}
        if any(len(ids & g) / len(ids | g) >= REJECTED_OVERLAP for g in rejected if g):
            continue
        up = parent[v]
        while up >= 0 and n_lab[up] == 0:
            up = parent[up]
        if up >= 0:
            lab_paths = [labels[m] for m in _members(up, n, children) if labels[m] is not None]
            parent_folder = _common_folder(lab_paths)  # type: ignore[arg-type]
        else:
            parent_folder = None
        centroid = _unit(total)
        top = _top_terms(centroid, term_names)
        taken[members] = True
        proposal_of[members] = len(proposals)
        loo_sim[members] = loo
        centroids.append(centroid)
        proposals.append(
            Proposal(
                index=len(proposals),
                parent_folder_id=parent_folder,
                name=", ".join(top[:3]) or f"group {len(proposals) + 1}",
                top_terms=top,
                document_ids=sorted(ids),
                cohesion=round(float(loo.mean()), 4),
            )
        )

    placements: list[PlacementOut] = []
    for i in np.flatnonzero(unlabeled):
        order = np.argsort(-S[i], kind="stable") if folder_ids else np.array([], dtype=np.intp)
        best = folder_ids[order[0]] if len(order) else None
        runner = folder_ids[order[1]] if len(order) > 1 else None
        s1 = float(S[i, order[0]]) if len(order) else -np.inf
        s2 = float(S[i, order[1]]) if len(order) > 1 else -np.inf
        margin = s1 - s2 if np.isfinite(s2) else None
        p = int(proposal_of[i])
        if p >= 0:
            terms = _top_terms(U[i] * centroids[p], term_names)
            placements.append(
                PlacementOut(
                    document_id=doc_ids[i],
                    folder_id=None,
                    proposal_index=p,
                    confidence=round(_confidence(float(loo_sim[i]), s1), 4),
                    terms=terms,
                    runner_up_folder_id=best,
                    margin=margin,
                )
            )
        elif best is not None:
            placements.append(
                PlacementOut(
                    document_id=doc_ids[i],
                    folder_id=best,
                    proposal_index=None,
                    confidence=round(_confidence(s1, s2), 4),
                    terms=_top_terms(U[i] * C[order[0]], term_names),
                    runner_up_folder_id=runner,
                    margin=margin,
                )
            )
        else:
            placements.append(PlacementOut(doc_ids[i], None, None, 0.0, [], None, None))
    return Tree(proposals=proposals, placements=placements)
