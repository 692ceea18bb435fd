"""The quality panel: how the learned hierarchy compares with the person's own folders.

The reference is the person's accepted structure: every filed document at its folder path.
The learned hierarchy is the dendrogram of the newest tree version (the last recluster),
restricted to the filed documents it saw; before any recluster has finished it is a plain
text-only average-linkage HAC over the filed documents, which shows how far the words alone
agree with the folders. At most ``MAX_DOCUMENTS`` filed documents are compared (an even
share per folder, the same ones every time) so that the panel answers at once.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from foldwise.core import (
    Hierarchy,
    folder_triples_kept,
    h_correlation,
    hac_linkage,
    hai,
    text_features,
    triples_kept,
)
from foldwise.service.critiques.models import Critique, CritiqueTriple
from foldwise.service.documents.models import Document
from foldwise.service.folders import service as folders
from foldwise.service.recluster.tree.models import TreeVersion
from foldwise.service.ui.dendrogram_svg import dendrogram_svg
from foldwise.service.users.models import User

MAX_DOCUMENTS = 300
SMALL_COLLECTION = 50
UNFILED = "(not filed)"


@dataclass
class QualityReport:
    """What the panel shows. Measures are ``None`` when they cannot be computed yet."""

    documents_compared: int = 0
    folders: int = 0
    version: int | None = None
    h_correlation: float | None = None
    h_correlation_symmetric: float | None = None
    hai: float | None = None
    folder_triples_total: int = 0
    folder_triples_kept: int = 0
    critique_triples_total: int = 0
    critique_triples_kept: int = 0
    learned_from: str = ""
    svg: str = ""
    notes: list[str] = field(default_factory=list)


def _even_sample(ids: Sequence[int], folder_of: dict[int, int], limit: int) -> list[int]:
    if len(ids) <= limit:
        return list(ids)
    by_folder: dict[int, list[int]] = defaultdict(list)
    for doc_id in ids:
        by_folder[folder_of[doc_id]].append(doc_id)
    share = max(2, limit // max(len(by_folder), 1))
    rng = random.Random(0)  # the same documents every time, so the figures do not jitter
    picked: list[int] = []
    for members in by_folder.values():
        picked.extend(rng.sample(members, min(share, len(members))))
    return sorted(picked)[:limit]


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 3)


def _critique_triples(session: Session, user: User) -> list[tuple[int, int, int]]:
    rows = session.execute(
        select(CritiqueTriple.x, CritiqueTriple.y, CritiqueTriple.z)
        .join(Critique, Critique.id == CritiqueTriple.critique_id)
        .where(CritiqueTriple.user_id == user.id, Critique.undone_at.is_(None))
    )
    return [(int(x), int(y), int(z)) for x, y, z in rows]


def quality_report(*, session: Session, user: User) -> QualityReport:
    """Measures and an SVG dendrogram for ``user``."""
    report = QualityReport()
    paths = folders.folder_paths(session=session, user=user)
    report.folders = len(paths)
    folder_of: dict[int, int] = {
        int(doc_id): int(fid)
        for doc_id, fid in session.execute(
            select(Document.id, Document.folder_id).where(
                Document.user_id == user.id, Document.folder_id.is_not(None)
            )
        )
        if fid is not None
    }
    version = session.scalar(
        select(TreeVersion)
        .where(TreeVersion.user_id == user.id)
        .order_by(TreeVersion.number.desc())
        .limit(1)
    )
    if version is not None and len(version.doc_ids) >= 3:
        leaves = [int(d) for d in version.doc_ids]
        Z = np.asarray(version.linkage, dtype=np.float64)
        report.version = version.number
        report.learned_from = f"dendrogram of tree version {version.number} ({version.method})"
    else:
        leaves = _even_sample(sorted(folder_of), folder_of, MAX_DOCUMENTS)
        if len(leaves) < 3:
            report.notes.append("File at least three documents to compare the trees.")
            return report
        texts = {
            d.id: f"{d.title}\n{d.text[:20000]}"
            for d in session.scalars(select(Document).where(Document.id.in_(leaves)))
        }
        params = {"min_term_count": 1} if len(leaves) < SMALL_COLLECTION else {}
        X, _ = text_features([texts[d] for d in leaves], **params)
        if X.shape[1] == 0:
            report.notes.append("Your filed documents share no words to compare them by.")
            return report
        Z = hac_linkage(X)
        report.learned_from = "text-only dendrogram of your filed documents (no recluster yet)"
        report.notes.append("No update has finished yet: Foldwise compares by the words alone.")
    learned_all = Hierarchy.from_linkage(Z)
    index = {doc_id: i for i, doc_id in enumerate(leaves)}
    filed = _even_sample([d for d in leaves if d in folder_of], folder_of, MAX_DOCUMENTS)
    groups = [paths[folder_of[d]].split("/")[0] if d in folder_of else UNFILED for d in leaves]
    report.svg = dendrogram_svg(Z, groups)
    report.documents_compared = len(filed)
    if len(filed) >= 3:
        items = np.array([index[d] for d in filed], dtype=np.intp)
        learned = learned_all.restrict(items)
        labels = [paths[folder_of[d]] for d in filed]
        reference = Hierarchy.from_paths([tuple(p.split("/")) for p in labels])
        report.h_correlation = _finite(h_correlation(learned, reference))
        report.h_correlation_symmetric = _finite(h_correlation(learned, reference, symmetric=True))
        report.hai = _finite(hai(learned, reference))
        total, kept = folder_triples_kept(learned, labels)
        report.folder_triples_total, report.folder_triples_kept = total, kept
    else:
        report.notes.append("Fewer than three filed documents in the tree: nothing to compare yet.")
    explicit = [t for t in _critique_triples(session, user) if all(d in index for d in t)]
    if explicit:
        rows = np.array([[index[d] for d in t] for t in explicit], dtype=np.intp)
        report.critique_triples_total = len(explicit)
        report.critique_triples_kept = triples_kept(learned_all, rows)
    return report
