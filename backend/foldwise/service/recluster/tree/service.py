"""The extended tree as served: the newest tree version laid over the current folders, and
instant suggestions (``recluster/instant.py``) for unfiled documents it does not place; and
the list of versions.

A version is computed once; folders, filings and critiques change afterwards. Serving it over
the current state keeps the person's own input visible at once: documents filed since drop out
of the placements, accepted or rejected proposals drop out of the proposed folders, and a
document said not to belong in a proposal leaves it (to the proposal's parent folder).
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from foldwise.service.critiques.tree_state import tree_state
from foldwise.service.documents.models import Document
from foldwise.service.folders.models import Folder
from foldwise.service.recluster.tree.models import (
    DocumentSuggestion,
    TreePlacement,
    TreeProposal,
    TreeVersion,
)
from foldwise.service.recluster.tree.proposals import (
    closed_proposals,
    closed_with_enclosing,
    not_in_pairs,
    taken_out,
)
from foldwise.service.recluster.tree.schemas import (
    ExtendedFolder,
    ExtendedTree,
    Placement,
    TreeVersionRead,
)
from foldwise.service.recluster.tree.versions import latest_version
from foldwise.service.users.models import User


def extended_tree(*, session: Session, user: User) -> ExtendedTree:
    """``GET /api/tree/extended`` for ``user``."""
    state = tree_state(session=session, user_id=user.id)
    version = latest_version(session=session, user_id=user.id)
    counts = dict(
        session.execute(
            select(Document.folder_id, func.count())
            .where(Document.user_id == user.id, Document.folder_id.is_not(None))
            .group_by(Document.folder_id)
        ).all()
    )
    folders = [
        ExtendedFolder(
            kind="existing",
            id=f.id,
            name=f.name,
            parent_id=f.parent_id,
            document_count=counts.get(f.id, 0),
        )
        for f in session.scalars(
            select(Folder).where(Folder.user_id == user.id).order_by(Folder.id)
        )
    ]
    unfiled = dict(
        session.execute(
            select(Document.id, Document.title).where(
                Document.user_id == user.id, Document.folder_id.is_(None)
            )
        ).all()
    )
    if version is None:
        instant = _instant_placements(session, user.id, unfiled, set(unfiled), -1)
        return ExtendedTree(
            version=0,
            method=None,
            created_at=None,
            critique_seq=state.critique_seq,
            outdated=state.critique_seq > 0,
            folders=folders,
            placements=instant,
            unplaced_document_ids=sorted(set(unfiled) - {p.document_id for p in instant}),
        )
    proposals = session.scalars(
        select(TreeProposal).where(TreeProposal.version_id == version.id).order_by(TreeProposal.id)
    ).all()
    closed = closed_with_enclosing(proposals, closed_proposals(session=session, user_id=user.id))
    out = taken_out(proposals, not_in_pairs(session=session, user_id=user.id))
    members = {
        p.key: {d for d in p.document_ids if d in unfiled and d not in out}
        for p in proposals
        if p.key not in closed
    }
    served = set()
    for p in proposals:  # an enclosing proposal comes before the ones nested in it
        if members.get(p.key) and (p.parent_key is None or p.parent_key in served):
            served.add(p.key)
    for p in proposals:
        if p.key not in served:
            continue
        folders.append(
            ExtendedFolder(
                kind="proposed",
                id=p.key,
                name=p.name,
                parent_id=p.parent_folder_id if p.parent_key is None else p.parent_key,
                # Every member, those of the proposals nested in it too: what accepting it
                # files (each document is placed in the innermost).
                document_count=len(members[p.key]),
                top_terms=list(p.top_terms),
                document_ids=sorted(members[p.key]),
                cohesion=p.cohesion,
            )
        )
    # The version names the folders it was computed with; one deleted since is none of a
    # placement's folders (its ``folder_id`` became NULL with it).
    live = {f.id for f in folders if f.kind == "existing"}
    placements = []
    placed = set()
    for pl in session.scalars(
        select(TreePlacement)
        .where(TreePlacement.version_id == version.id)
        .order_by(TreePlacement.document_id)
    ):
        if pl.document_id not in unfiled:
            continue
        target: int | str | None = pl.folder_id
        best = pl.best_folder_id if pl.best_folder_id in live else None
        confidence = pl.confidence
        if pl.proposal_key is not None:
            if pl.proposal_key in served and pl.document_id not in out:
                target = pl.proposal_key
            else:
                # The proposal is gone (accepted, rejected) or the person took the document out
                # of it: fall back to the best existing folder the version computed.
                target = best
                confidence = min(confidence, 0.5)
        placed.add(pl.document_id)
        placements.append(
            Placement(
                document_id=pl.document_id,
                title=unfiled[pl.document_id],
                folder_id=target,
                confidence=confidence,
                terms=list(pl.terms),
                best_folder_id=best,
                confident_folder_id=(
                    pl.confident_folder_id if pl.confident_folder_id in live else None
                ),
            )
        )
    # Instant suggestions: for documents the version did not see, and for those a critique
    # made after the version re-placed (their suggestion is newer than the version).
    instant = _instant_placements(
        session, user.id, unfiled, set(unfiled) - placed, version.critique_seq
    )
    # A document in a proposal stays there: proposals are the dendrogram's, not the model's.
    in_proposal = {p.document_id for p in placements if isinstance(p.folder_id, str)}
    instant = [p for p in instant if p.document_id not in in_proposal]
    renewed = {p.document_id for p in instant}
    placements = sorted(
        [p for p in placements if p.document_id not in renewed] + instant,
        key=lambda p: p.document_id,
    )
    placed |= renewed
    return ExtendedTree(
        version=version.number,
        method=version.method,
        created_at=version.created_at,
        critique_seq=state.critique_seq,
        outdated=state.critique_seq != version.critique_seq,
        folders=folders,
        placements=placements,
        unplaced_document_ids=sorted(set(unfiled) - placed),
    )


def _instant_placements(
    session: Session,
    user_id: int,
    unfiled: dict[int, str],
    unplaced: set[int],
    version_seq: int,
) -> list[Placement]:
    """Stored instant suggestions (``instant.py``) of unfiled documents that are either not
    placed by the served version (``unplaced``) or were re-placed after a critique the
    version did not see (critique counter above ``version_seq``)."""
    rows = session.scalars(
        select(DocumentSuggestion).where(
            DocumentSuggestion.user_id == user_id, DocumentSuggestion.folder_id.is_not(None)
        )
    )
    return [
        Placement(
            document_id=s.document_id,
            title=unfiled[s.document_id],
            folder_id=s.folder_id,
            confidence=s.confidence,
            terms=list(s.terms),
            best_folder_id=s.folder_id,
            confident_folder_id=s.confident_folder_id,
            source="instant",
        )
        for s in rows
        if s.document_id in unfiled
        and (s.document_id in unplaced or s.critique_seq > version_seq >= 0)
    ]


def list_versions(*, session: Session, user: User) -> list[TreeVersionRead]:
    """``GET /api/tree/versions``: the user's tree versions, newest first."""
    rows = session.scalars(
        select(TreeVersion)
        .where(TreeVersion.user_id == user.id)
        .order_by(TreeVersion.number.desc())
    )
    return [
        TreeVersionRead(
            number=v.number,
            method=v.method,
            job_id=v.job_id,
            critique_seq=v.critique_seq,
            created_at=v.created_at.isoformat(),
            n_documents=len(v.doc_ids),
            stats=dict(v.stats or {}),
        )
        for v in rows
    ]
