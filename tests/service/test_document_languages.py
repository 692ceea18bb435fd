"""Each document's language is detected when its text arrives and stored with it; a
recluster takes the stored detections instead of detecting again (docs/recluster.md,
"Languages detected at ingest")."""

from __future__ import annotations

import io
import zipfile

import numpy as np
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from foldwise import core
from foldwise.service.composition import app_runtime
from foldwise.service.config import Settings
from foldwise.service.documents.models import Document
from foldwise.service.recluster import core_adapter

from .helpers import Api
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


def test_a_recluster_takes_the_stored_languages(sqlite_settings: Settings) -> None:
    rt = app_runtime(sqlite_settings, fast_options())
    try:
        alice = seed_user(rt, "alice", filed={"python-howtos": 6}, new={"python-howtos": 1})
        new_id = alice["new"]["python-howtos"][0]
        # Stored as German, though the text is English: the recluster must take what is
        # stored, not detect again.
        german = np.zeros(len(core.LANGUAGE_CODES), dtype=np.float32)
        german[core.LANGUAGE_CODES.index("de")] = 1.0
        with rt.sessions() as session:
            text = session.scalar(select(Document.text).where(Document.id == new_id))
            assert text is not None
            assert core.LANGUAGE_CODES[int(core.language_posteriors(text).argmax())] == "en"
            session.execute(
                update(Document)
                .where(Document.id == new_id)
                .values(language_posteriors=german.tobytes())
            )
            session.commit()
            core_adapter.load_inputs(
                session=session, user_id=alice["user_id"], options=rt.options, seed=0
            )
        assert core.language_posteriors(text).tolist() == german.tolist()
    finally:
        rt.close()
