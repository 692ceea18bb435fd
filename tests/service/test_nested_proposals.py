"""A proposal nested in another: served inside it, critiqued with it, accepted as a folder
with its subfolders, and carried over by key (docs/placement.md "Nested proposals"). The tree
version is stored as a job would store it, so that the nesting is known exactly."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import pdist
from sqlalchemy import select

from core.synthetic_topics import label_some, topic_corpus
from foldwise.core import extended_tree
from foldwise.service.documents.models import Document
from foldwise.service.folders.models import Folder
from foldwise.service.recluster.core_adapter import (
    PlacementOut,
    Proposal,
    ReclusterOutput,
    served_proposals,
)
from foldwise.service.recluster.jobs.runtime import Runtime
from foldwise.service.recluster.jobs.store import store_version
from foldwise.service.recluster.tree.models import TreeProposal

from .recluster_support import rt, seed_user, worker

__all__ = ["rt", "worker"]


def _store(rt: Runtime, user_id: int, number: int, outer: list[int], inner: list[int]) -> None:
    """Tree version ``number``: a top-level proposal of ``outer`` + ``inner``, with ``inner``
    nested in it; every other unfiled document placed in no folder."""
    members = sorted(outer + inner)
    with rt.sessions() as session:
        unfiled = session.scalars(
            select(Document.id).where(Document.user_id == user_id, Document.folder_id.is_(None))
        ).all()
        out = ReclusterOutput(
            doc_ids=sorted(unfiled),
            linkage=[],
            proposals=[
                Proposal(0, None, "outer-topic", ["outer"], members, 0.3),
                Proposal(1, None, "inner-topic", ["inner"], sorted(inner), 0.4, parent_index=0),
            ],
            placements=[
                PlacementOut(
                    document_id=d,
                    folder_id=None,
                    proposal_index=1 if d in inner else 0 if d in outer else None,
                    confidence=0.8,
                    terms=[],
                    runner_up_folder_id=None,
                    margin=None,
                )
                for d in unfiled
            ],
            stats={},
        )
        store_version(session, user_id, None, number, "biihac", 0, out)  # type: ignore[arg-type]
        session.commit()


def _proposed(client: TestClient, h: dict[str, str]) -> dict[str, dict[str, Any]]:
    tree = client.get("/api/tree/extended", headers=h).json()
    return {f["name"]: f for f in tree["folders"] if f["kind"] == "proposed"}


def _where(client: TestClient, h: dict[str, str]) -> dict[int, Any]:
    tree = client.get("/api/tree/extended", headers=h).json()
    return {p["document_id"]: p["folder_id"] for p in tree["placements"]}


def _critique(client: TestClient, h: dict[str, str], **body: Any) -> Any:
    """``POST /api/critiques`` with ``body`` as the caller of ``h``."""
    return client.post("/api/critiques", json=body, headers=h)


def _user(rt: Runtime) -> tuple[dict[str, str], int, list[int], list[int]]:
    alice = seed_user(rt, "alice", filed={"python-howtos": 4}, new={"the-python-tutorial": 6})
    new = sorted(alice["new"]["the-python-tutorial"])
    return alice["headers"], alice["user_id"], new[:3], new[3:]


def _nested_version(
    client: TestClient, rt: Runtime
) -> tuple[dict[str, str], list[int], list[int], str, str]:
    """A user with version 1 stored: headers, outer and inner documents, their keys."""
    h, user_id, outer, inner = _user(rt)
    _store(rt, user_id, 1, outer, inner)
    proposed = _proposed(client, h)
    return h, outer, inner, proposed["outer-topic"]["id"], proposed["inner-topic"]["id"]


def test_a_nested_proposal_is_served_inside_its_parent_and_keeps_its_key(
    client: TestClient, rt: Runtime
) -> None:
    h, user_id, outer, inner = _user(rt)
    _store(rt, user_id, 1, outer, inner)
    proposed = _proposed(client, h)
    parent, child = proposed["outer-topic"], proposed["inner-topic"]
    assert parent["parent_id"] is None and child["parent_id"] == parent["id"]
    # Each lists all its members (what accepting it files); each document is placed in the
    # innermost.
    assert (parent["document_ids"], child["document_ids"]) == (sorted(outer + inner), inner)
    assert (parent["document_count"], child["document_count"]) == (6, 3)
    where = _where(client, h)
    assert [where[d] for d in outer + inner] == [parent["id"]] * 3 + [child["id"]] * 3

    # The next version with the same proposals keeps both keys, and the nesting by key.
    _store(rt, user_id, 2, outer, inner)
    again = _proposed(client, h)
    assert again["outer-topic"]["id"] == parent["id"]
    assert again["inner-topic"]["id"] == child["id"]
    assert again["inner-topic"]["parent_id"] == parent["id"]
    with rt.sessions() as session:
        keys = session.execute(select(TreeProposal.key, TreeProposal.parent_key)).all()
    assert sorted(keys) == sorted([(parent["id"], None), (child["id"], parent["id"])] * 2)


def test_a_nested_proposal_is_accepted_or_rejected_with_its_parent(
    client: TestClient, rt: Runtime
) -> None:
    h, outer, inner, parent, child = _nested_version(client, rt)
    for kind in ("accept", "reject"):
        refused = _critique(client, h, kind=kind, proposal_id=child)
        assert refused.status_code == 409 and parent in refused.json()["detail"], refused.text

    made = _critique(client, h, kind="accept", proposal_id=parent)
    assert made.status_code == 201, made.text
    assert sorted(made.json()["filed_document_ids"]) == sorted(outer + inner)
    with rt.sessions() as session:
        folder = {f.name: f for f in session.scalars(select(Folder))}
        filed = dict(session.execute(select(Document.id, Document.folder_id)).all())
    top, sub = folder["outer-topic"], folder["inner-topic"]
    assert top.parent_id is None and sub.parent_id == top.id
    assert [filed[d] for d in outer + inner] == [top.id] * 3 + [sub.id] * 3
    assert _proposed(client, h) == {}
    # The child went with its parent: it cannot be critiqued on its own any more.
    late = _critique(client, h, kind="not_in", proposal_id=child, document_id=inner[0])
    assert late.status_code == 409 and "already" in late.json()["detail"]

    undone = client.delete(f"/api/critiques/{made.json()['id']}", headers=h).json()
    assert undone["documents_unfiled"] == 6 and undone["folder_deleted"], undone
    with rt.sessions() as session:
        names = set(session.scalars(select(Folder.name)))
        filed = dict(session.execute(select(Document.id, Document.folder_id)).all())
    assert not names & {"outer-topic", "inner-topic"}
    assert {filed[d] for d in outer + inner} == {None}
    assert set(_proposed(client, h)) == {"outer-topic", "inner-topic"}


def test_a_proposal_accepted_undivided_is_one_folder_without_its_nested_ones(
    client: TestClient, rt: Runtime
) -> None:
    h, outer, inner, parent, _child = _nested_version(client, rt)
    bad = _critique(client, h, kind="accept", proposal_id=parent, subfolders="maybe")
    assert bad.status_code == 422 and "subfolders" in bad.text

    made = _critique(
        client, h, kind="rename", proposal_id=parent, name="all-in-one", subfolders=False
    )
    assert made.status_code == 201, made.text
    with rt.sessions() as session:
        folders = {f.name: f for f in session.scalars(select(Folder))}
        filed = dict(session.execute(select(Document.id, Document.folder_id)).all())
    assert "inner-topic" not in folders and "outer-topic" not in folders
    made_folder = folders["all-in-one"]
    assert {filed[d] for d in outer + inner} == {made_folder.id}
    assert not [f for f in folders.values() if f.parent_id == made_folder.id]
    assert _proposed(client, h) == {}

    undone = client.delete(f"/api/critiques/{made.json()['id']}", headers=h).json()
    assert undone["documents_unfiled"] == 6 and undone["folder_deleted"], undone
    assert set(_proposed(client, h)) == {"outer-topic", "inner-topic"}


def test_a_document_taken_out_of_a_nested_proposal_leaves_its_parent_too(
    client: TestClient, rt: Runtime
) -> None:
    h, outer, inner, parent, child = _nested_version(client, rt)
    made = _critique(client, h, kind="not_in", proposal_id=child, document_id=inner[0])
    assert made.status_code == 201, made.text
    after = _proposed(client, h)
    assert after["inner-topic"]["document_ids"] == inner[1:]
    assert after["outer-topic"]["document_ids"] == sorted(outer + inner[1:])
    assert not isinstance(_where(client, h)[inner[0]], str)
    # Accepting the parent now files the others only.
    accepted = _critique(client, h, kind="accept", proposal_id=parent).json()
    assert sorted(accepted["filed_document_ids"]) == sorted(outer + inner[1:])


def test_the_cores_nested_proposals_are_stored_with_their_parent_and_all_their_members() -> None:
    """``core_adapter.served_proposals`` on core trees with proposed subfolders: each nested
    proposal names the one it lies in (listed before it), lies in that one's existing folder,
    and holds every document of its subtree."""
    nested = 0
    for seed in range(4):
        X, names, truth = topic_corpus(seed=seed)
        # Folder paths as the service's models have them: folder ids.
        prefixes = sorted({f[:k] for f in truth for k in range(1, len(f) + 1)})
        ids = {prefix: str(n) for n, prefix in enumerate(prefixes)}
        paths = [tuple(ids[f[:k]] for k in range(1, len(f) + 1)) for f in truth]
        hidden = {
            tuple(ids[f[:k]] for k in range(1, len(f) + 1)) for f in [("music",), ("cooking",)]
        }
        labels = label_some(paths, 5, hidden, seed=seed)
        Z = linkage(pdist(X.toarray(), "cosine"), "average")
        tree = extended_tree(Z, X, labels, term_names=names)
        doc_ids = [1000 + i for i in range(X.shape[0])]
        proposals, index_of = served_proposals(tree, doc_ids)
        assert [p.index for p in proposals] == list(range(len(proposals)))
        for found in tree.proposals():
            p = proposals[index_of[found.path]]
            assert p.document_ids == sorted(doc_ids[i] for i in tree.subtree_documents(found.path))
            if p.parent_index is None:
                assert p.parent_folder_id == (int(found.parent[-1]) if found.parent else None)
                continue
            nested += 1
            outer = proposals[p.parent_index]
            assert p.parent_index < p.index and index_of[found.path[:-1]] == outer.index
            assert p.parent_folder_id == outer.parent_folder_id
            assert set(p.document_ids) < set(outer.document_ids)
    assert nested, "no nested proposal: the test would prove nothing"
