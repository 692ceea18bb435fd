"""Proposed folders over the critiques made of them: which are closed (accepted, renamed,
rejected), which documents were taken out (``not_in``), and the open proposal a critique
acts on (``critiques.service.FindProposal``)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from foldwise.service.critiques.models import Critique
from foldwise.service.critiques.service import OpenProposal
from foldwise.service.documents.models import Document
from foldwise.service.errors import ConflictError, NotFoundError
from foldwise.service.recluster.tree.models import TreeProposal
from foldwise.service.recluster.tree.versions import latest_version


def closed_proposals(*, session: Session, user_id: int) -> set[str]:
    """Keys of proposals accepted, renamed or rejected by critiques in force."""
    return set(
        session.scalars(
            select(Critique.proposal_id).where(
                Critique.user_id == user_id,
                Critique.kind.in_(("accept", "rename", "reject")),
                Critique.undone_at.is_(None),
            )
        )
    )


def not_in_pairs(*, session: Session, user_id: int) -> set[tuple[str, int]]:
    """(proposal key, document id) pairs of ``not_in`` critiques in force."""
    rows = session.execute(
        select(Critique.proposal_id, Critique.document_id).where(
            Critique.user_id == user_id,
            Critique.kind == "not_in",
            Critique.undone_at.is_(None),
        )
    )
    return {(str(p), int(d)) for p, d in rows if p is not None and d is not None}


def open_proposal(*, session: Session, user_id: int, key: str) -> OpenProposal:
    """The proposal ``key`` of the newest version, still open, with its current members
    (``critiques.service.FindProposal``: what accept, rename, reject and not_in act on)."""
    proposal = session.scalar(  # the newest row: a key carries over between versions
        select(TreeProposal)
        .where(TreeProposal.user_id == user_id, TreeProposal.key == key)
        .order_by(TreeProposal.version_id.desc())
        .limit(1)
    )
    if proposal is None:
        raise NotFoundError(f"proposal {key} not found")
    latest = latest_version(session=session, user_id=user_id)
    if latest is None or proposal.version_id != latest.id:
        raise ConflictError(
            f"proposal {key} is from an older tree; the current tree is version "
            f"{latest.number if latest else 0}: reload it"
        )
    if key in closed_proposals(session=session, user_id=user_id):
        raise ConflictError(f"proposal {key} was already accepted or rejected")
    excluded = not_in_pairs(session=session, user_id=user_id)
    unfiled = set(
        session.scalars(
            select(Document.id).where(
                Document.user_id == user_id,
                Document.id.in_(proposal.document_ids),
                Document.folder_id.is_(None),
            )
        )
    )
    return OpenProposal(
        key=proposal.key,
        parent_folder_id=proposal.parent_folder_id,
        name=proposal.name,
        document_ids=list(proposal.document_ids),
        members=[d for d in proposal.document_ids if d in unfiled and (key, d) not in excluded],
    )
