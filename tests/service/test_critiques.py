"""Critiques become filings and triples; contradictions are refused; undo reverts them.
On SQLite and PostgreSQL, with the real embedded queue for the trees they critique."""

from __future__ import annotations

from itertools import combinations
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from foldwise.core import question_priority
from foldwise.service.critiques.models import Critique, CritiqueTriple, RejectedGroup
from foldwise.service.documents.models import Document
from foldwise.service.folders.models import Folder
from foldwise.service.queue import EmbeddedWorker
from foldwise.service.recluster.jobs.runtime import Runtime
from foldwise.service.recluster.tree.models import TreePlacement

from .helpers import Api
from .recluster_support import recluster, rt, seed_small, served_proposals, worker

__all__ = ["rt", "worker"]


def _state(rt: Runtime) -> dict[str, Any]:
    """Everything a critique may change."""
    with rt.sessions() as session:
        return {
            "critiques": session.scalar(select(func.count()).select_from(Critique)),
            "triples": sorted(
                session.execute(select(CritiqueTriple.x, CritiqueTriple.y, CritiqueTriple.z)).all()
            ),
            "rejected": session.scalar(select(func.count()).select_from(RejectedGroup)),
            "filing": sorted(session.execute(select(Document.id, Document.folder_id)).all()),
            "folders": sorted(
                session.execute(select(Folder.id, Folder.name, Folder.parent_id)).all()
            ),
        }


def _post(client: TestClient, headers: dict[str, str], **body: Any) -> Any:
    return client.post("/api/critiques", json=body, headers=headers)


def test_closer_critique_and_its_contradiction(client: TestClient, api: Api, rt: Runtime) -> None:
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    a, b, c, d = sorted(d for ids in alice["new"].values() for d in ids)[:4]
    made = _post(client, h, kind="closer", a=a, b=b, c=c)
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["triples"] == [[a, b, c]] and body["author"] == "alice"
    assert body["tree_version"] == 0
    listed = client.get("/api/triples", headers=h).json()["triples"]
    assert {(t["x"], t["y"], t["z"], t["source"]) for t in listed} == {
        (a, b, c, "critique"),
        (b, a, c, "inferred"),  # 001 Theorem 1
    }
    assert _post(client, h, kind="closer", a=b, b=d, c=c).status_code == 201
    listed = {
        (t["x"], t["y"], t["z"]) for t in client.get("/api/triples", headers=h).json()["triples"]
    }
    assert (a, d, c) in listed  # Theorem 2: (a, b, c) and (b, d, c)

    before = _state(rt)
    refused = _post(client, h, kind="closer", a=a, b=c, c=b)
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert f"({a}, {c}, {b}) from this critique" in detail and "critique" in detail
    assert _state(rt) == before


def test_bad_critiques_are_refused_and_change_nothing(
    client: TestClient, api: Api, rt: Runtime
) -> None:
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    bob = api.user("bob")
    bobs = api.post(bob, "bob's own note about regular expressions and parsing " * 3)["document"][
        "id"
    ]
    new = sorted(d for ids in alice["new"].values() for d in ids)
    with rt.sessions() as session:
        folder = session.scalar(select(Folder.id).where(Folder.user_id == alice["user_id"]))
    before = _state(rt)
    cases = [
        ({"kind": "closer", "a": new[0], "b": new[0], "c": new[1]}, 422),
        ({"kind": "closer", "a": new[0], "b": new[1]}, 422),
        ({"kind": "closer", "a": new[0], "b": new[1], "c": 999999}, 404),
        ({"kind": "closer", "a": new[0], "b": new[1], "c": bobs}, 404),
        ({"kind": "move", "document_id": bobs, "folder_id": folder}, 404),
        ({"kind": "move", "document_id": new[0], "folder_id": 999999}, 404),
        ({"kind": "accept", "proposal_id": "p-9-9"}, 404),
        ({"kind": "accept", "proposal_id": "not-a-key"}, 422),
        ({"kind": "rename", "proposal_id": "p-1-0", "name": ""}, 422),
        ({"kind": "shout", "a": 1}, 422),
        ({"kind": "closer", "a": new[0], "b": new[1], "c": new[2], "extra": 1}, 422),
    ]
    for body, status in cases:
        response = client.post("/api/critiques", json=body, headers=h)
        assert response.status_code == status, (body, response.text)
        assert response.json()["detail"]
    assert _state(rt) == before
    assert client.post("/api/critiques", json=cases[0][0]).status_code == 401
    # Bob cannot see, undo or be told about Alice's critiques.
    made = _post(client, h, kind="closer", a=new[0], b=new[1], c=new[2]).json()
    assert client.get("/api/critiques", headers=bob).json() == []
    assert client.delete(f"/api/critiques/{made['id']}", headers=bob).status_code == 404
    assert client.get("/api/triples", headers=bob).json() == {"triples": [], "folders": []}


def test_move_contradicting_the_folders_is_refused(
    client: TestClient, api: Api, rt: Runtime
) -> None:
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    with rt.sessions() as session:
        rows = session.execute(
            select(Document.id, Document.folder_id).where(Document.folder_id.is_not(None))
        ).all()
    by_folder: dict[int, list[int]] = {}
    for doc_id, folder_id in rows:
        assert folder_id is not None
        by_folder.setdefault(folder_id, []).append(doc_id)
    (f1, docs1), (_, docs2) = sorted(by_folder.items())[:2]
    x, z = docs1[:2]
    y = docs2[0]
    # x and z share folder f1, y is elsewhere: "x is closer to y than to z" contradicts it.
    before = _state(rt)
    refused = _post(client, h, kind="closer", a=x, b=y, c=z)
    assert refused.status_code == 409 and "the folders" in refused.json()["detail"]
    assert _state(rt) == before
    # An unfiled document said closer to y than to z, then moved next to z: refused too.
    u = sorted(d for ids in alice["new"].values() for d in ids)[0]
    assert _post(client, h, kind="closer", a=u, b=y, c=z).status_code == 201
    before = _state(rt)
    moved = _post(client, h, kind="move", document_id=u, folder_id=f1)
    assert moved.status_code == 409, moved.text
    assert _state(rt) == before


def test_move_and_undo(client: TestClient, api: Api, rt: Runtime) -> None:
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    new = sorted(d for ids in alice["new"].values() for d in ids)
    with rt.sessions() as session:
        f1, f2 = sorted(session.scalars(select(Folder.id).where(Folder.parent_id.is_(None))))[:2]
    made = _post(client, h, kind="move", document_id=new[0], folder_id=f1).json()
    assert made["filed_document_ids"] == [new[0]]
    assert client.get(f"/api/documents/{new[0]}", headers=h).json()["folder_id"] == f1
    assert _post(client, h, kind="move", document_id=new[0], folder_id=f1).status_code == 409
    folders = client.get("/api/triples", headers=h).json()["folders"]
    assert {str(new[0]): made["id"]} == next(f for f in folders if f["folder_id"] == f1)[
        "from_critiques"
    ]
    undone = client.delete(f"/api/critiques/{made['id']}", headers=h).json()
    assert undone["documents_unfiled"] == 1 and undone["notes"] == []
    assert client.get(f"/api/documents/{new[0]}", headers=h).json()["folder_id"] is None
    assert client.delete(f"/api/critiques/{made['id']}", headers=h).status_code == 409
    history = client.get("/api/critiques", headers=h).json()
    assert [c["kind"] for c in history] == ["import"]  # the seeding import; the move is undone
    assert len(client.get("/api/critiques?include_undone=true", headers=h).json()) == 2
    # A document moved by the person after the critique stays where the person put it.
    made = _post(client, h, kind="move", document_id=new[1], folder_id=f1).json()
    client.patch(f"/api/documents/{new[1]}", json={"folder_id": f2}, headers=h)
    undone = client.delete(f"/api/critiques/{made['id']}", headers=h).json()
    assert undone["documents_unfiled"] == 0 and "moved since" in undone["notes"][0]
    assert client.get(f"/api/documents/{new[1]}", headers=h).json()["folder_id"] == f2


def test_proposals_accept_rename_reject_not_in(
    client: TestClient, api: Api, rt: Runtime, worker: EmbeddedWorker
) -> None:
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    recluster(client, h)
    proposals = served_proposals(client, h)
    assert proposals, "the held-back asyncio documents should form a proposal"
    first = proposals[0]
    assert first["id"].startswith("p-1-") and first["document_count"] >= 3

    # not_in: (p, q, d) for every pair of the other members.
    d = first["document_ids"][-1]
    others = [m for m in first["document_ids"] if m != d]
    made = _post(client, h, kind="not_in", document_id=d, proposal_id=first["id"]).json()
    assert sorted(map(tuple, made["triples"])) == sorted(
        (p, q, d) for p, q in combinations(others, 2)
    )
    after = next(p for p in served_proposals(client, h) if p["id"] == first["id"])
    assert d not in after["document_ids"]
    outsider = sorted(alice["new"]["python-howtos"])[0]
    bad = _post(client, h, kind="not_in", document_id=outsider, proposal_id=first["id"])
    assert bad.status_code == 422

    # rename = accept under a new name: a real folder, its documents filed in it.
    accepted = _post(client, h, kind="rename", proposal_id=first["id"], name="async stuff").json()
    folder_id = accepted["created_folder_id"]
    assert sorted(accepted["filed_document_ids"]) == sorted(others)
    tree = client.get("/api/tree/extended", headers=h).json()
    assert tree["outdated"] and first["id"] not in {f["id"] for f in tree["folders"]}
    mine = next(f for f in tree["folders"] if f["id"] == folder_id)
    assert (mine["kind"], mine["name"], mine["document_count"]) == (
        "existing",
        "async stuff",
        len(others),
    )
    again = _post(client, h, kind="accept", proposal_id=first["id"])
    assert again.status_code == 409 and "already" in again.json()["detail"]
    undone = client.delete(f"/api/critiques/{accepted['id']}", headers=h).json()
    assert undone["folder_deleted"] and undone["documents_unfiled"] == len(others)

    # reject: nothing is filed (issue: a rejection is not a filing); the group is remembered.
    rejected = _post(client, h, kind="reject", proposal_id=first["id"]).json()
    with rt.sessions() as session:
        groups = session.scalars(select(RejectedGroup)).all()
        assert [sorted(g.document_ids) for g in groups] == [sorted(first["document_ids"])]
        filed = dict(
            session.execute(
                select(Document.id, Document.folder_id).where(Document.id.in_(others))
            ).all()
        )
    assert rejected["filed_document_ids"] == [] and set(filed.values()) == {None}
    # The served tree shows them in existing folders at once, not in the rejected proposal.
    served = client.get("/api/tree/extended", headers=h).json()
    where = {p["document_id"]: p["folder_id"] for p in served["placements"]}
    assert all(not isinstance(where.get(d), str) for d in others)
    # The next tree does not propose that group again.
    recluster(client, h)
    for p in served_proposals(client, h):
        overlap = set(p["document_ids"]) & set(first["document_ids"])
        assert len(overlap) < len(first["document_ids"]) / 2, p


def test_closer_question(client: TestClient, api: Api, rt: Runtime, worker: EmbeddedWorker) -> None:
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    assert client.get("/api/questions/closer", headers=h).status_code == 204
    recluster(client, h)
    q = client.get("/api/questions/closer", headers=h).json()
    assert q["a"]["folder_id"] is None and q["tree_version"] == 1
    assert q["b"]["folder_id"] is not None and q["c"]["folder_id"] is not None
    assert q["b"]["folder_id"] != q["c"]["folder_id"] and q["a"]["title"]
    assert "an answer moves it with probability" in q["reason"]
    # The core's choice is served: the question of highest priority, b in the folder the
    # document is shown in, c in the question's other folder.
    with rt.sessions() as session:
        rows = session.scalars(
            select(TreePlacement).where(TreePlacement.question_folder_id.is_not(None))
        ).all()
    first = min(
        rows,
        key=lambda pl: (
            -question_priority(pl.question_value, pl.question_answerable),
            pl.document_id,
        ),
    )
    assert q["a"]["id"] == first.document_id
    assert (q["b"]["folder_id"], q["c"]["folder_id"]) == (
        first.best_folder_id,
        first.question_folder_id,
    )
    # A skipped question is not asked again: the next one is about another document.
    skipped = client.get("/api/questions/closer", params={"exclude": q["a"]["id"]}, headers=h)
    assert skipped.status_code == 204 or skipped.json()["a"]["id"] != q["a"]["id"]
    bad = client.get("/api/questions/closer", params={"exclude": "x"}, headers=h)
    assert bad.status_code == 422
    answer = _post(client, h, kind="closer", a=q["a"]["id"], b=q["c"]["id"], c=q["b"]["id"])
    assert answer.status_code == 201
    nxt = client.get("/api/questions/closer", headers=h)
    assert nxt.status_code == 204 or nxt.json()["a"]["id"] != q["a"]["id"]
    assert client.get("/api/questions/closer", headers=api.user("bob")).status_code == 204


def test_a_skipped_questions_folders_are_asked_about_last(
    client: TestClient, api: Api, rt: Runtime, worker: EmbeddedWorker
) -> None:
    """After a skip, a question between the same two folders (either way round), or with
    the folder the skipped document was shown in as b or c, comes after every other one,
    even a more valuable one: the person could not choose between them, and that folder
    holds documents from elsewhere."""
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    recluster(client, h)
    folders = [f["id"] for f in client.get("/api/folders", headers=h).json()]
    f1, f2, f3 = folders[:3]
    with rt.sessions() as session:
        rows = session.scalars(select(TreePlacement).order_by(TreePlacement.document_id)).all()
        unfiled = {
            d for d in session.scalars(select(Document.id).where(Document.folder_id.is_(None)))
        }
        rows = [pl for pl in rows if pl.document_id in unfiled]
        assert len(rows) >= 5
        # (shown in, c, value): first f1 vs f2 .4; same_pair f2 vs f1 .3; same_shown f1 vs
        # f3 .2; as_c f3 vs f1 .15; elsewhere f3 vs f2 .1.
        plan = [(f1, f2, 0.4), (f2, f1, 0.3), (f1, f3, 0.2), (f3, f1, 0.15), (f3, f2, 0.1)]
        for pl, (best, c, value) in zip(rows, plan, strict=False):
            pl.best_folder_id, pl.question_folder_id = best, c
            pl.question_value, pl.question_answerable = value, 0.95
        for pl in rows[len(plan) :]:
            pl.question_folder_id = None  # no question about the rest
        session.commit()
        first, same_pair, same_shown, as_c, elsewhere = (pl.document_id for pl in rows[:5])

    def ask(*skipped: int) -> int:
        q = client.get("/api/questions/closer", params={"exclude": list(skipped)}, headers=h)
        assert q.status_code == 200, q.text
        return int(q.json()["a"]["id"])

    assert ask() == first
    assert ask(first) == elsewhere  # not same_pair, same_shown nor as_c, though worth more
    assert ask(first, elsewhere) == same_pair  # asked last, not never; by value
    assert ask(first, elsewhere, same_pair) == same_shown
    assert ask(first, elsewhere, same_pair, same_shown) == as_c
    # A skip defers only the questions of its document's folder.
    assert ask(elsewhere) == first


def test_questions_are_asked_by_the_cores_priority(
    client: TestClient, api: Api, rt: Runtime, worker: EmbeddedWorker
) -> None:
    """Value less a quarter per expected tie: a question in doubt (value .28, answerable
    .7: priority .205) comes before one surely answered that moves nothing (.02, .99:
    .0175), and a likely tie (.1, .3: -.075) after both."""
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    recluster(client, h)
    folders = [f["id"] for f in client.get("/api/folders", headers=h).json()]
    f1, f2, f3 = folders[:3]
    plan = [(f1, f2, 0.28, 0.7), (f2, f3, 0.02, 0.99), (f3, f1, 0.1, 0.3)]
    with rt.sessions() as session:
        rows = session.scalars(select(TreePlacement).order_by(TreePlacement.document_id)).all()
        unfiled = {
            d for d in session.scalars(select(Document.id).where(Document.folder_id.is_(None)))
        }
        rows = [pl for pl in rows if pl.document_id in unfiled]
        assert len(rows) >= len(plan)
        for pl, (best, c, value, answerable) in zip(rows, plan, strict=False):
            pl.best_folder_id, pl.question_folder_id = best, c
            pl.question_value, pl.question_answerable = value, answerable
        for pl in rows[len(plan) :]:
            pl.question_folder_id = None  # no question about the rest
        session.commit()
        expected = [pl.document_id for pl in rows[: len(plan)]]

    asked = []
    for _ in plan:
        q = client.get("/api/questions/closer", headers=h)
        assert q.status_code == 200, q.text
        asked.append(int(q.json()["a"]["id"]))
        with rt.sessions() as session:  # answered: nothing more to ask about it
            session.execute(
                update(TreePlacement)
                .where(TreePlacement.document_id == asked[-1])
                .values(question_folder_id=None)
            )
            session.commit()
    assert asked == expected
    assert client.get("/api/questions/closer", headers=h).status_code == 204


def test_unchanged_input_gives_unchanged_tree(
    client: TestClient, api: Api, rt: Runtime, worker: EmbeddedWorker
) -> None:
    """A recluster with no new input keeps every placement, proposal key and name; a
    document taken out of a proposal stays out of its successor (same key)."""
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    recluster(client, h)
    before = client.get("/api/tree/extended", headers=h).json()
    recluster(client, h)
    after = client.get("/api/tree/extended", headers=h).json()
    assert after["version"] == before["version"] + 1

    def view(tree: dict[str, Any]) -> tuple[Any, Any]:
        places = {p["document_id"]: p["folder_id"] for p in tree["placements"]}
        props = {
            (f["id"], f["name"], tuple(f["document_ids"]))
            for f in tree["folders"]
            if f["kind"] == "proposed"
        }
        return places, props

    assert view(after) == view(before)
    proposal = served_proposals(client, h)[0]
    assert proposal["id"].startswith("p-1-")  # carried over from version 1
    d = proposal["document_ids"][-1]
    assert (
        _post(client, h, kind="not_in", document_id=d, proposal_id=proposal["id"]).status_code
        == 201
    )
    recluster(client, h)
    for p in served_proposals(client, h):
        if (
            p["id"] == proposal["id"]
            or len(set(p["document_ids"]) & set(proposal["document_ids"]))
            >= len(p["document_ids"]) / 2
        ):
            assert d not in p["document_ids"], p


def test_a_question_names_its_folders_by_path(
    client: TestClient, api: Api, rt: Runtime, worker: EmbeddedWorker
) -> None:
    """A leaf name alone can be many folders' name ("functions" in every extension of the
    PHP manual): the reason names the two folders by path."""
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    recluster(client, h)
    shelf = client.post("/api/folders", json={"name": "shelf"}, headers=h).json()["id"]
    for f in client.get("/api/folders", headers=h).json():
        if f["id"] != shelf:
            moved = client.patch(f"/api/folders/{f['id']}", json={"parent_id": shelf}, headers=h)
            assert moved.status_code == 200, moved.text
    q = client.get("/api/questions/closer", headers=h).json()
    paths = {f["id"]: f["path"] for f in client.get("/api/folders", headers=h).json()}
    for k in ("b", "c"):
        assert paths[q[k]["folder_id"]].startswith("shelf/")
        assert repr(paths[q[k]["folder_id"]]) in q["reason"], q["reason"]
