"""An id is never handed out twice: a document or folder made after a delete is a new one to
every tree version, proposal and placement that named the deleted one (migration 0013). On
SQLite and PostgreSQL."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from foldwise.service.documents.models import Document
from foldwise.service.queue import EmbeddedWorker
from foldwise.service.recluster.jobs.runtime import Runtime

from .helpers import Api
from .recluster_support import recluster, rt, seed_small, served_proposals, worker

__all__ = ["rt", "worker"]


def test_a_document_posted_after_a_delete_joins_no_proposal(
    client: TestClient, api: Api, rt: Runtime, worker: EmbeddedWorker
) -> None:
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    recluster(client, h)
    proposal = served_proposals(client, h)[0]
    # The proposal's newest member and every document after it: on SQLite without
    # AUTOINCREMENT the next post would take the member's id.
    with rt.sessions() as session:
        newest = session.scalar(select(func.max(Document.id)))
    deleted = range(max(proposal["document_ids"]), newest + 1)
    for d in deleted:
        assert client.delete(f"/api/documents/{d}", headers=h).status_code == 204

    posted = api.post(h, "A lemon cake: butter, sugar, four eggs and the zest of two lemons.")
    new_id = posted["document"]["id"]

    assert new_id > newest
    after = served_proposals(client, h)
    assert new_id not in {d for f in after for d in f["document_ids"]}
    again = next(f for f in after if f["id"] == proposal["id"])
    assert again["document_ids"] == [d for d in proposal["document_ids"] if d not in deleted]


def test_a_folder_made_after_a_delete_has_a_new_id(client: TestClient, api: Api) -> None:
    h = api.user("alice")
    first = api.folder(h, "drafts")
    assert client.delete(f"/api/folders/{first}", headers=h).status_code in (200, 204)

    assert api.folder(h, "letters") > first
