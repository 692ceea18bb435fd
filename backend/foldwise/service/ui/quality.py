"""The quality panel: how the learned hierarchy compares with the person's own folders.

The reference is the person's accepted structure: every filed document at its folder path.
The learned hierarchy is the dendrogram over the same documents: the last recluster's when the
recluster service exposes one, else a plain text-only average-linkage HAC, which shows how
far the words alone already agree with the folders. Up to ``MAX_DOCUMENTS`` filed documents
are compared (an even share per folder) so that the panel stays interactive.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from foldwise.core import Hierarchy, h_correlation, hac_linkage, hai, text_features
from foldwise.service.documents.models import Document
from foldwise.service.folders import service as folders
from foldwise.service.ui.dendrogram_svg import dendrogram_svg
from foldwise.service.users.models import User

MAX_DOCUMENTS = 240
SMALL_COLLECTION = 50


@dataclass
class QualityReport:
    """What the panel shows. Measures are ``None`` when they cannot be computed yet."""

    documents_compared: int = 0
    folders: int = 0
    h_correlation: float | None = None
    h_correlation_symmetric: float | None = None
    hai: float | None = None
    constraints_total: int | None = None
    constraints_satisfied: int | None = None
    learned_from: str = ""
    svg: str = ""
    notes: list[str] = field(default_factory=list)


def _sample(rows: list[tuple[int, int, str]], limit: int) -> list[tuple[int, int, str]]:
    by_folder: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    for row in rows:
        by_folder[row[1]].append(row)
    if len(rows) <= limit:
        return rows
    share = max(2, limit // max(len(by_folder), 1))
    rng = random.Random(0)  # the same documents every time, so the figures do not jitter
    picked: list[tuple[int, int, str]] = []
    for members in by_folder.values():
        picked.extend(rng.sample(members, min(share, len(members))))
    return sorted(picked)[:limit]


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 3)


def quality_report(*, session: Session, user: User) -> QualityReport:
    """Measures and an SVG dendrogram for ``user``'s filed documents."""
    report = QualityReport()
    rows = [
        (r.id, r.folder_id, f"{r.title}\n{r.text[:20000]}")
        for r in session.execute(
            select(Document.id, Document.folder_id, Document.title, Document.text)
            .where(Document.user_id == user.id, Document.folder_id.is_not(None))
            .order_by(Document.id)
        )
    ]
    paths = folders.folder_paths(session=session, user=user)
    report.folders = len(paths)
    rows = _sample(rows, MAX_DOCUMENTS)
    report.documents_compared = len(rows)
    if len(rows) < 3:
        report.notes.append("File at least three documents to compare the trees.")
        return report
    params = {"min_term_count": 1} if len(rows) < SMALL_COLLECTION else {}
    X, _ = text_features([text for _, _, text in rows], **params)
    if X.shape[1] == 0:
        report.notes.append("The filed documents share no terms to cluster on.")
        return report
    Z = hac_linkage(X)
    report.learned_from = "text-only average-linkage dendrogram of your filed documents"
    learned = Hierarchy.from_linkage(Z)
    folder_of = [paths[fid] for _, fid, _ in rows]
    reference = Hierarchy.from_paths([tuple(p.split("/")) for p in folder_of])
    report.h_correlation = _finite(h_correlation(learned, reference))
    report.h_correlation_symmetric = _finite(h_correlation(learned, reference, symmetric=True))
    report.hai = _finite(hai(learned, reference))
    total, satisfied = _folder_triples_satisfied(Z, folder_of)
    report.constraints_total, report.constraints_satisfied = total, satisfied
    report.svg = dendrogram_svg(Z, [p.split("/")[0] for p in folder_of])
    return report


def _folder_triples_satisfied(Z: np.ndarray, folder_of: list[str]) -> tuple[int, int]:
    """Folder triples (x, y, z) with x, y in one leaf folder and z elsewhere, kept by ``Z``.

    A triple is kept when x and y merge before either meets z. Counted exactly from the
    merge order: for each merge, the pairs it joins across its two sides.
    """
    n = len(folder_of)
    labels = {name: i for i, name in enumerate(sorted(set(folder_of)))}
    y = np.array([labels[f] for f in folder_of])
    k = len(labels)
    counts = [np.bincount([y[i]], minlength=k) for i in range(n)]
    sizes = [1] * n
    total = 0
    violated = 0
    per_label = np.bincount(y, minlength=k)
    # total: for each same-folder pair (x, y), each document z of another folder, both orders.
    for c in per_label:
        total += int(c * (c - 1)) * int(n - c)
    for a, b in Z[:, :2].astype(int):
        ca, cb = counts[a], counts[b]
        # x in a meets z in b here for the first time. Unless every folder mate y of x is
        # already in a, x meets z no later than y: the triple is violated (or tied, which
        # does not satisfy it either). Symmetrically for x in b.
        other_b = sizes[b] - cb  # per label: documents of b in another folder than the label
        other_a = sizes[a] - ca
        violated += int(
            np.sum(ca * (per_label - ca) * other_b) + np.sum(cb * (per_label - cb) * other_a)
        )
        counts.append(ca + cb)
        sizes.append(sizes[a] + sizes[b])
    return total, total - violated
