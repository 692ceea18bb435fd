"""``GET /api/triples``: the triples in force and where each came from."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from foldwise.core import TripleSet
from foldwise.service.critiques.filing import triples_in_force
from foldwise.service.critiques.models import Critique
from foldwise.service.critiques.schemas import FolderConstraintRead, TripleRead, TriplesRead
from foldwise.service.documents.models import Document
from foldwise.service.users.models import User


def list_triples(*, session: Session, user: User) -> TriplesRead:
    """Stated triples, their closure under 001 Theorems 1-3, and per-folder implicit triples."""
    stated = triples_in_force(session=session, user_id=user.id)
    out = [
        TripleRead(x=x, y=y, z=z, source="critique", critique_ids=sorted(set(ids)))
        for (x, y, z), ids in sorted(stated.items())
    ]
    if stated:
        # The closure was checked consistent when each critique was stored.
        every = sorted({c for ids in stated.values() for c in ids})
        for x, y, z in sorted(TripleSet(stated).closed):
            if (x, y, z) not in stated:
                # An inferred triple follows from the critiques whose triples share its items.
                ids = (
                    sorted({c for t, cs in stated.items() if {x, y, z} & set(t) for c in cs})
                    or every
                )
                out.append(TripleRead(x=x, y=y, z=z, source="inferred", critique_ids=ids))
    counts: dict[int, int] = dict(
        session.execute(  # type: ignore[arg-type]
            select(Document.folder_id, func.count())
            .where(Document.user_id == user.id, Document.folder_id.is_not(None))
            .group_by(Document.folder_id)
        ).all()
    )
    by_critique: dict[int, dict[int, int]] = defaultdict(dict)
    live = dict(
        session.execute(
            select(Document.id, Document.folder_id).where(
                Document.user_id == user.id, Document.folder_id.is_not(None)
            )
        ).all()
    )
    for critique in session.scalars(
        select(Critique)
        .where(Critique.user_id == user.id, Critique.undone_at.is_(None))
        .order_by(Critique.id)
    ):
        undo = critique.undo or {}
        target = undo.get("target")
        for doc_id in undo.get("filed") or {}:
            if target is not None and live.get(int(doc_id)) == target:
                by_critique[target][int(doc_id)] = critique.id
    folders = [
        FolderConstraintRead(
            folder_id=fid, labeled_documents=n, from_critiques=by_critique.get(fid, {})
        )
        for fid, n in sorted(counts.items())
    ]
    return TriplesRead(triples=out, folders=folders)
