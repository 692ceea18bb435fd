"""Proposed folders over the critiques made of them: which are closed (accepted, renamed,
rejected), which documents were taken out (``not_in``), and the open proposal a critique
acts on (``critiques.service.FindProposal``)."""

from __future__ import annotations

from collections.abc import Iterable

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


def closed_with_enclosing(proposals: Iterable[TreeProposal], closed: set[str]) -> set[str]:
    """Keys of ``proposals`` (one version's) closed themselves or through a proposal they are
    nested in: accepting or rejecting a proposal settles the ones inside it too."""
    parent = {p.key: p.parent_key for p in proposals}
    out = set()
    for key in parent:
        k: str | None = key
        while k is not None and k not in closed:
            k = parent.get(k)
        if k is not None:
            out.add(key)
    return out


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


def taken_out(proposals: Iterable[TreeProposal], excluded: set[tuple[str, int]]) -> set[int]:
    """Documents of ``proposals`` (one version's) taken out of one that holds them
    (``not_in_pairs``). Out of one, out of every proposal it is nested in or that is nested
    in it: each shares all its members with the other (``core.same_proposal``)."""
    return {d for p in proposals for d in p.document_ids if (p.key, d) in excluded}


def open_proposal(*, session: Session, user_id: int, key: str) -> OpenProposal:
    """The proposal ``key`` of the newest version, still open, with its current members and
    the proposals nested in it (``critiques.service.FindProposal``: what accept, rename,
    reject and not_in act on)."""
    latest = latest_version(session=session, user_id=user_id)
    proposal = session.scalar(  # the newest row: a key carries over between versions
        select(TreeProposal)
        .where(TreeProposal.user_id == user_id, TreeProposal.key == key)
        .order_by(TreeProposal.version_id.desc())
        .limit(1)
    )
    if proposal is None:
        raise NotFoundError(f"proposal {key} not found")
    if latest is None or proposal.version_id != latest.id:
        raise ConflictError(
            f"proposal {key} is from an older tree; the current tree is version "
            f"{latest.number if latest else 0}: reload it"
        )
    version = session.scalars(
        select(TreeProposal).where(TreeProposal.version_id == latest.id).order_by(TreeProposal.id)
    ).all()
    if key in closed_with_enclosing(version, closed_proposals(session=session, user_id=user_id)):
        raise ConflictError(f"proposal {key} was already accepted or rejected")
    out = taken_out(version, not_in_pairs(session=session, user_id=user_id))
    unfiled = set(
        session.scalars(
            select(Document.id).where(
                Document.user_id == user_id,
                Document.id.in_(proposal.document_ids),
                Document.folder_id.is_(None),
            )
        )
    )
    nested: dict[str | None, list[TreeProposal]] = {}
    for p in version:
        nested.setdefault(p.parent_key, []).append(p)

    def view(p: TreeProposal) -> OpenProposal:
        return OpenProposal(
            key=p.key,
            parent_folder_id=p.parent_folder_id,
            name=p.name,
            document_ids=list(p.document_ids),
            members=[d for d in p.document_ids if d in unfiled and d not in out],
            parent_key=p.parent_key,
            parts=tuple(view(q) for q in nested.get(p.key, [])),
        )

    return view(proposal)
