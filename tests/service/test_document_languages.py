"""Each document's language is detected when its text arrives and stored with it; a
recluster takes the stored detections instead of detecting again (docs/recluster.md,
"Languages detected at ingest")."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from foldwise import core
from foldwise.service.composition import app_runtime
from foldwise.service.config import Settings
from foldwise.service.documents import language, similar
from foldwise.service.documents.models import Document
from foldwise.service.recluster import instant
from foldwise.service.recluster.recluster_input import load_inputs
from foldwise.service.users.models import User

from .helpers import Api, run_cli
from .recluster_support import fast_options, seed_user

ENGLISH = "The invoice for the electricity supply has arrived; please pay the amount soon."
GERMAN = "Die Rechnung für die Stromversorgung ist eingegangen; bitte überweisen Sie den Betrag."


def _stored_language(api: Api, title: str) -> str | None:
    with api.session() as session:
        raw = session.scalar(select(Document.language_posteriors).where(Document.title == title))
    if raw is None:
        return None
    return core.LANGUAGE_CODES[int(np.frombuffer(raw, dtype=np.float32).argmax())]


def test_each_ingestion_path_stores_the_language(client: TestClient, api: Api) -> None:
    headers = api.user()
    posted = {"title": "posted", "text": GERMAN}
    assert client.post("/api/documents", json=posted, headers=headers).status_code == 201
    upload = {"file": ("uploaded.txt", ENGLISH.encode())}
    assert client.post("/api/documents/upload", files=upload, headers=headers).status_code == 201
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("Bills/imported.txt", GERMAN + " Stadtwerke Wasser.")
    zipped = {"file": ("tree.zip", archive.getvalue())}
    assert client.post("/api/import/zip", files=zipped, headers=headers).status_code == 201

    assert _stored_language(api, "posted") == "de"
    assert _stored_language(api, "uploaded") == "en"
    assert _stored_language(api, "imported") == "de"


def _store_german(session: Session, document_id: int) -> tuple[str, np.ndarray]:
    """Store German posteriors for an English document: its text and its true posteriors
    (the core, asked, detects English; a reader must hand it what is stored)."""
    text = session.scalar(select(Document.text).where(Document.id == document_id))
    assert text is not None
    english = core.language_posteriors(text).copy()
    assert core.LANGUAGE_CODES[int(english.argmax())] == "en"
    session.execute(
        update(Document)
        .where(Document.id == document_id)
        .values(language_posteriors=GERMAN_POSTERIORS)
    )
    session.commit()
    return text, english


GERMAN_POSTERIORS = np.eye(len(core.LANGUAGE_CODES), dtype=np.float32)[
    core.LANGUAGE_CODES.index("de")
].tobytes()


@pytest.mark.parametrize("reader", ["recluster", "instant re-placement", "similar documents"])
def test_every_reader_of_texts_takes_the_stored_languages(
    sqlite_settings: Settings, reader: str
) -> None:
    rt = app_runtime(sqlite_settings, fast_options())
    alice = seed_user(rt, "alice", filed={"python-howtos": 6}, new={"python-howtos": 1})
    new_id = alice["new"]["python-howtos"][0]
    with rt.sessions() as session:
        text, english = _store_german(session, new_id)
    try:
        with rt.sessions() as session:
            if reader == "recluster":
                load_inputs(session=session, user_id=alice["user_id"], options=rt.options, seed=0)
            elif reader == "instant re-placement":
                assert instant.unfiled_texts(session, alice["user_id"]) == {new_id: text}
            else:
                user = session.get(User, alice["user_id"])
                assert user is not None
                similar.similar_documents(session=session, user=user, document_id=new_id)
        assert core.language_posteriors(text).tobytes() == GERMAN_POSTERIORS
    finally:
        # The process's detections outlive the test: later tests ingest this text too.
        core.remember_language_posteriors([text], english[None, :])
        rt.close()


def test_the_backfill_stores_the_languages_of_documents_stored_without_them(
    client: TestClient, api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    headers = api.user()
    for title, text in (("english", ENGLISH), ("german", GERMAN), ("other", ENGLISH + " Ok.")):
        posted = client.post("/api/documents", json={"title": title, "text": text}, headers=headers)
        assert posted.status_code == 201
    with api.session() as session:  # as stored before migration 0010, but "other"
        session.execute(
            update(Document).where(Document.title != "other").values(language_posteriors=None)
        )
        session.commit()

    done = run_cli(api, monkeypatch, "db", "backfill-languages")

    assert done.exit_code == 0, done.stderr
    assert done.stdout.strip() == "stored the language of 2 document(s)"
    assert "2 of 2 document(s) read" in done.stderr
    assert (_stored_language(api, "english"), _stored_language(api, "german")) == ("en", "de")
    again = run_cli(api, monkeypatch, "db", "backfill-languages")
    assert again.stdout.strip() == "stored the language of 0 document(s)"


def test_the_backfill_commits_chunk_by_chunk(client: TestClient, api: Api) -> None:
    headers = api.user()
    for title in ("a", "b", "c"):
        client.post(
            "/api/documents", json={"title": title, "text": GERMAN + title}, headers=headers
        )
    with api.session() as session:
        session.execute(update(Document).values(language_posteriors=None))
        session.commit()
        seen: list[tuple[int, int]] = []
        assert language.backfill(session, chunk=2, progress=lambda *p: seen.append(p)) == 3
        assert seen == [(2, 3), (3, 3)]
        with pytest.raises(ValueError, match="chunk"):
            language.backfill(session, chunk=0)
    assert {_stored_language(api, t) for t in ("a", "b", "c")} == {"de"}
