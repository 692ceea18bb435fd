"""A job's result stored as a tree version: its proposals (keys and names carried over from
the previous version's open proposals), placements and placement model. Part of the job's
commit (``runner.py``), so it needs the seam's output types (``core_adapter``), which the
tree package below it does not import (docs/architecture.md sec. 11)."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from foldwise import core
from foldwise.service.db import in_chunks
from foldwise.service.documents.models import Document
from foldwise.service.folders.models import Folder
from foldwise.service.recluster import core_adapter, instant
from foldwise.service.recluster.tree.models import TreePlacement, TreeProposal, TreeVersion
from foldwise.service.recluster.tree.proposals import closed_proposals, closed_with_enclosing


def store_version(
    session: Session,
    user_id: int,
    job_id: int,
    number: int,
    method: str,
    seq: int,
    out: core_adapter.ReclusterOutput,
) -> None:
    """Add ``out`` as the user's tree version ``number`` (with its proposals, placements and
    placement model) to the caller's transaction, which the job's compare-and-set commits.
    Documents or folders deleted while the job ran are left out instead of failing the job."""
    live_docs = {
        d
        for chunk in in_chunks(out.doc_ids)
        for d in session.scalars(
            select(Document.id).where(Document.user_id == user_id, Document.id.in_(chunk))
        )
    }
    live_folders = set(session.scalars(select(Folder.id).where(Folder.user_id == user_id)))
    version = TreeVersion(
        user_id=user_id,
        number=number,
        method=method,
        job_id=job_id,
        critique_seq=seq,
        doc_ids=out.doc_ids,
        linkage=out.linkage,
        stats=out.stats,
    )
    session.add(version)
    session.flush()
    if out.model_npz is not None:
        instant.store_model(session, user_id=user_id, version_id=version.id, npz=out.model_npz)
    key, name = carry_over(session, user_id, version.id, out.proposals, number)
    for p in out.proposals:
        session.add(
            TreeProposal(
                version_id=version.id,
                user_id=user_id,
                key=key[p.index],
                parent_folder_id=p.parent_folder_id if p.parent_folder_id in live_folders else None,
                parent_key=None if p.parent_index is None else key[p.parent_index],
                name=name[p.index][:255],
                top_terms=p.top_terms,
                document_ids=[d for d in p.document_ids if d in live_docs],
                cohesion=p.cohesion,
            )
        )
    for pl in out.placements:
        if pl.document_id not in live_docs:
            continue
        session.add(
            TreePlacement(
                version_id=version.id,
                document_id=pl.document_id,
                folder_id=pl.folder_id if pl.folder_id in live_folders else None,
                proposal_key=None if pl.proposal_index is None else key[pl.proposal_index],
                confidence=min(1.0, max(0.0, pl.confidence)),
                terms=pl.terms,
                best_folder_id=pl.best_folder_id,
                confident_folder_id=pl.confident_folder_id,
                runner_up_folder_id=pl.runner_up_folder_id,
                margin=pl.margin,
                pair_mass=pl.pair_mass,
                question_folder_id=pl.question_folder_id,
                question_value=pl.question_value,
                question_answerable=pl.question_answerable,
                kept_confidence=pl.kept_confidence,
            )
        )


def carry_over(
    session: Session,
    user_id: int,
    version_id: int,
    proposals: list[core_adapter.Proposal],
    number: int,
) -> tuple[dict[int, str], dict[int, str]]:
    """Key and name of each new proposal: its predecessor's when it has one.

    New proposals are matched one-to-one to the previous version's open ones by member
    overlap (Hungarian assignment on Jaccard, linear_sum_assignment); a pair counts only when
    it is the same proposal by ``core.same_proposal``. A matched proposal keeps the
    predecessor's key and name, so the person's view and critiques in force (``not_in`` is
    stored by key) follow it across reclusters. Others get ``p-<number>-<index>``.
    """
    previous = session.scalars(
        select(TreeProposal)
        .where(TreeProposal.user_id == user_id, TreeProposal.version_id != version_id)
        .where(
            TreeProposal.version_id
            == select(func.max(TreeProposal.version_id))
            .where(TreeProposal.user_id == user_id, TreeProposal.version_id != version_id)
            .scalar_subquery()
        )
        .order_by(TreeProposal.id)
    ).all()
    closed = closed_with_enclosing(previous, closed_proposals(session=session, user_id=user_id))
    previous = [p for p in previous if p.key not in closed]
    key = {p.index: f"p-{number}-{p.index}" for p in proposals}
    name = {p.index: p.name for p in proposals}
    if not previous or not proposals:
        return key, name
    new_sets = [set(p.document_ids) for p in proposals]
    old_sets = [set(p.document_ids) for p in previous]
    jaccard = np.array([[len(a & b) / max(len(a | b), 1) for b in old_sets] for a in new_sets])
    rows, cols = linear_sum_assignment(-jaccard)
    for i, j in zip(rows, cols, strict=True):
        if core.same_proposal(new_sets[i], old_sets[j]):
            key[proposals[i].index] = previous[j].key
            name[proposals[i].index] = previous[j].name
    return key, name
