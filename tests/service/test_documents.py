"""Ingestion: JSON and files of every supported type, duplicates, batches, download, filing."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from foldwise.service import migrate
from foldwise.service.app import create_app

from .conftest import make_settings
from .helpers import Api, docx_bytes, eml_bytes, minimal_pdf, run_cli


def test_post_json_document_then_read_it_back(client: TestClient, api: Api) -> None:
    alice = api.user()
    answer = api.post(alice, "Invoices are due at the end of the month.", title="Invoice policy")
    assert answer["duplicate"] is False
    doc = answer["document"]
    assert doc["title"] == "Invoice policy"
    assert doc["folder_id"] is None
    assert len(doc["content_hash"]) == 64
    read = client.get(f"/api/documents/{doc['id']}", headers=alice).json()
    assert read["text"] == "Invoices are due at the end of the month."
    assert read["folder_path"] is None
    assert read["created_at"].endswith("Z") or "+00:00" in read["created_at"]


def test_title_defaults_to_the_first_line(api: Api) -> None:
    alice = api.user()
    doc = api.post(alice, "\n  Meeting notes  \nsecond line")["document"]
    assert doc["title"] == "Meeting notes"


UPLOADS = [
    ("notes.txt", b"plain text about gardening", "text/plain", "gardening", "notes"),
    ("readme.md", b"# Heading\n\nmarkdown body", "text/markdown", "markdown body", "readme"),
    (
        "page.html",
        b"<html><head><title>A page</title><script>var x;</script></head>"
        b"<body><p>hello <b>web</b></p></body></html>",
        "text/html",
        "hello",
        "A page",
    ),
    ("paper.pdf", minimal_pdf("Quarterly report"), "application/pdf", "Quarterly report", "paper"),
    (
        "letter.docx",
        docx_bytes(["Dear reader,", "the contract is attached."], title="Contract letter"),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "contract is attached",
        "Contract letter",
    ),
    (
        "mail.eml",
        eml_bytes("Lunch on Friday", "Shall we meet at noon?"),
        "message/rfc822",
        "meet at noon",
        "Lunch on Friday",
    ),
]


@pytest.mark.parametrize(("filename", "content", "media_type", "needle", "title"), UPLOADS)
def test_upload_each_supported_type(
    client: TestClient,
    api: Api,
    filename: str,
    content: bytes,
    media_type: str,
    needle: str,
    title: str,
) -> None:
    alice = api.user()
    response = client.post(
        "/api/documents/upload", files={"file": (filename, content)}, headers=alice
    )
    assert response.status_code == 201, response.text
    doc = response.json()["document"]
    assert doc["media_type"] == media_type
    assert doc["title"] == title
    assert doc["size"] == len(content)
    read = client.get(f"/api/documents/{doc['id']}", headers=alice).json()
    assert needle in read["text"]
    assert "var x" not in read["text"]  # scripts are not text
    original = client.get(f"/api/documents/{doc['id']}/file", headers=alice)
    assert original.status_code == 200
    assert original.content == content
    assert filename in original.headers["content-disposition"]


def test_same_content_is_a_duplicate_not_a_second_document(client: TestClient, api: Api) -> None:
    alice = api.user()
    first = api.post(alice, "same words")
    second = client.post(
        "/api/documents", json={"text": "same words", "title": "other"}, headers=alice
    )
    assert second.status_code == 200
    assert second.json()["duplicate"] is True
    assert second.json()["document"]["id"] == first["document"]["id"]
    upload = client.post(
        "/api/documents/upload", files={"file": ("x.txt", b"same words")}, headers=alice
    )
    assert upload.json()["duplicate"] is True
    assert client.get("/api/documents", headers=alice).json()["total"] == 1


def test_same_content_for_two_users_is_two_documents_one_blob(api: Api) -> None:
    alice, bob = api.user("alice"), api.user("bob")
    a = api.post(alice, "shared words")
    b = api.post(bob, "shared words")
    assert b["duplicate"] is False
    assert a["document"]["id"] != b["document"]["id"]
    assert len(api.snapshot()["blobs"]) == 1


def test_json_batch_reports_created_and_duplicates_in_order(client: TestClient, api: Api) -> None:
    alice = api.user()
    api.post(alice, "already there")
    folder = api.folder(alice, "inbox")
    body = {
        "folder_id": folder,
        "documents": [
            {"text": "one"},
            {"text": "already there"},
            {"text": "one"},
            {"text": "two", "folder_id": None},
        ],
    }
    response = client.post("/api/documents/batch", json=body, headers=alice)
    assert response.status_code == 201, response.text
    out = response.json()
    assert (out["created"], out["duplicates"]) == (2, 2)
    assert [r["duplicate"] for r in out["results"]] == [False, True, True, False]
    assert out["results"][0]["document"]["folder_id"] == folder
    assert out["results"][0]["document"]["id"] == out["results"][2]["document"]["id"]


def test_multipart_batch(client: TestClient, api: Api) -> None:
    alice = api.user()
    files = [
        ("files", ("a.txt", b"alpha")),
        ("files", ("b.html", b"<p>beta</p>")),
        ("files", ("c.pdf", minimal_pdf("gamma"))),
    ]
    response = client.post("/api/documents/batch/upload", files=files, headers=alice)
    assert response.status_code == 201, response.text
    assert response.json()["created"] == 3


def test_file_unfile_retitle_and_delete(client: TestClient, api: Api) -> None:
    alice = api.user()
    doc_id = api.post(alice, "a receipt")["document"]["id"]
    parent = api.folder(alice, "money")
    child = api.folder(alice, "receipts", parent)
    filed = client.patch(f"/api/documents/{doc_id}", json={"folder_id": child}, headers=alice)
    assert filed.status_code == 200
    assert filed.json()["folder_path"] == "money/receipts"
    retitled = client.patch(f"/api/documents/{doc_id}", json={"title": "Receipt"}, headers=alice)
    assert retitled.json()["folder_id"] == child  # leaving folder_id out keeps the folder
    unfiled = client.patch(f"/api/documents/{doc_id}", json={"folder_id": None}, headers=alice)
    assert unfiled.json()["folder_id"] is None
    assert unfiled.json()["title"] == "Receipt"
    assert client.delete(f"/api/documents/{doc_id}", headers=alice).status_code == 204
    assert client.get(f"/api/documents/{doc_id}", headers=alice).status_code == 404


def test_listing_pages_and_unfiled_filter(client: TestClient, api: Api) -> None:
    alice = api.user()
    folder = api.folder(alice, "f")
    for i in range(7):
        api.post(alice, f"doc {i}", title=f"t{i}", folder_id=folder if i < 5 else None)
    page = client.get(f"/api/folders/{folder}/documents?offset=2&limit=2", headers=alice).json()
    assert page["total"] == 5
    assert [d["title"] for d in page["items"]] == ["t2", "t3"]
    unfiled = client.get("/api/documents?unfiled=true", headers=alice).json()
    assert [d["title"] for d in unfiled["items"]] == ["t5", "t6"]
    assert client.get("/api/documents?limit=3", headers=alice).json()["total"] == 7


def test_create_document_service_function(api: Api) -> None:
    from foldwise.service.documents.service import create_document
    from foldwise.service.users.service import get_by_name

    api.user()
    with api.session() as session:
        user = get_by_name(session=session, name="alice")
        assert user is not None
        doc, duplicate = create_document(session=session, user=user, data=b"raw", filename="r.txt")
        again, duplicate_again = create_document(session=session, user=user, text="raw")
        session.commit()
    assert (duplicate, duplicate_again) == (False, True)
    assert again.id == doc.id


def test_gc_blobs_removes_only_old_unreferenced_files(
    client: TestClient, api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = api.user("alice"), api.user("bob")
    gone = api.post(alice, "to be deleted")["document"]["id"]
    shared = api.post(alice, "shared content")["document"]["id"]
    api.post(bob, "shared content")
    client.delete(f"/api/documents/{gone}", headers=alice)
    client.delete(f"/api/documents/{shared}", headers=alice)  # bob still has it
    assert len(api.snapshot()["blobs"]) == 2
    young = run_cli(api, monkeypatch, "gc-blobs")
    assert "removed 0" in young.stdout  # younger than an hour: spared
    dry = run_cli(api, monkeypatch, "gc-blobs", "--min-age-minutes", "0", "--dry-run")
    assert "would remove 1" in dry.stdout
    assert len(api.snapshot()["blobs"]) == 2
    done = run_cli(api, monkeypatch, "gc-blobs", "--min-age-minutes", "0")
    assert "removed 1" in done.stdout
    assert len(api.snapshot()["blobs"]) == 1
    # Bob's document, which shares the content, still downloads.
    bob_doc = client.get("/api/documents", headers=bob).json()["items"][0]["id"]
    assert client.get(f"/api/documents/{bob_doc}/file", headers=bob).content == b"shared content"


def test_similar_documents_of_two_databases_in_one_process_are_their_own(
    tmp_path: Path,
) -> None:
    # The same user id and document ids in both: an answer keyed by user alone would serve
    # the kitchen's matrix, where the two documents share words, in the garage too.
    texts = {
        "kitchen": (["Knead the bread dough.", "Bread dough rises overnight."], [2]),
        "garage": (["Change the car oil filter.", "Rotate winter tyres."], []),
    }
    for name, ((first, second), expected) in texts.items():
        cfg = make_settings(tmp_path / name)
        migrate.upgrade(cfg.sqlalchemy_url)
        with TestClient(create_app(cfg)) as client:
            api = Api(client)
            headers = api.user()
            one = api.post(headers, first)["document"]["id"]
            assert api.post(headers, second)["document"]["id"] == one + 1 == 2
            answer = client.get(f"/ui/api/documents/{one}/similar", headers=headers)
            assert answer.status_code == 200, answer.text
            assert [d["id"] for d in answer.json()] == expected, name


def test_similar_documents_take_up_to_twenty_and_say_so_beyond(
    client: TestClient, api: Api
) -> None:
    alice = api.user()
    ids = [
        api.post(alice, f"Sourdough bread loaf number {i} with rye flour.")["document"]["id"]
        for i in range(23)
    ]
    url = f"/ui/api/documents/{ids[0]}/similar"
    assert len(client.get(url, params={"limit": 20}, headers=alice).json()) == 20
    for bad in (0, 21, 50):
        answer = client.get(url, params={"limit": bad}, headers=alice)
        assert answer.status_code == 422, (bad, answer.text)
        assert "limit" in answer.text
