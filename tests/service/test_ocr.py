"""Scanned documents: images and image-only PDFs are stored at once and OCRed by the worker.

Real Tesseract (Debian's tesseract-ocr, -eng, -deu), real queue, real Pillow renderings of
text; the missing-Tesseract case is configured (a command that does not exist), not mocked.
"""

from __future__ import annotations

import io
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from PIL import Image, ImageDraw, ImageFont
from sqlalchemy import select

from conftest import unavailable
from foldwise.core import LANGUAGE_CODES
from foldwise.service.app import create_app
from foldwise.service.documents.models import Document
from foldwise.service.queue import EmbeddedWorker
from foldwise.service.recluster.jobs.models import ReclusterJob
from foldwise.service.recluster.jobs.runtime import Runtime

from .conftest import make_settings
from .helpers import Api
from .recluster_support import fast_options

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
FINAL = {"ocr_done", "no_text_ocr_missing", "ocr_failed"}


def _font(size: int = 36) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    if FONT.is_file():
        return ImageFont.truetype(str(FONT), size)
    return ImageFont.load_default(size=size)  # Pillow's own scalable font


def render(lines: list[str]) -> Image.Image:
    """A white page with ``lines`` in black, as a scanner would give it (grayscale)."""
    image = Image.new("L", (1400, 120 + 70 * len(lines)), 255)
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((60, 60 + 70 * i), line, fill=0, font=_font())
    return image


def png(lines: list[str]) -> bytes:
    buffer = io.BytesIO()
    render(lines).save(buffer, "PNG")
    return buffer.getvalue()


def image_pdf(pages: list[list[str]]) -> bytes:
    """A PDF whose pages are images only (no text layer), as Pillow writes it."""
    images = [render(lines) for lines in pages]
    buffer = io.BytesIO()
    images[0].save(buffer, "PDF", resolution=150, save_all=True, append_images=images[1:])
    return buffer.getvalue()


@pytest.fixture
def tesseract() -> None:
    if shutil.which("tesseract") is None:
        unavailable(
            "Tesseract is not installed "
            "(apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu)"
        )


@pytest.fixture
def rt(client: TestClient) -> Runtime:
    """The runtime of the test's app, with fast recluster options."""
    runtime: Runtime = client.app.state.runtime  # type: ignore[attr-defined]
    runtime.options = fast_options()
    return runtime


@pytest.fixture
def worker(rt: Runtime) -> Iterator[EmbeddedWorker]:
    embedded = EmbeddedWorker(rt.queue, workers=1)
    embedded.start()
    yield embedded
    embedded.stop()


def upload(client: TestClient, headers: dict[str, str], name: str, data: bytes) -> Any:
    response = client.post("/api/documents/upload", files={"file": (name, data)}, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()["document"]


def wait_text(client: TestClient, headers: dict[str, str], doc_id: int) -> dict[str, Any]:
    """Poll the document until its OCR is over (generous: CI machines are slow)."""
    deadline = time.monotonic() + 300
    while True:
        doc = client.get(f"/api/documents/{doc_id}", headers=headers).json()
        if doc["text_status"] in FINAL:
            return doc  # type: ignore[no-any-return]
        assert time.monotonic() < deadline, doc
        time.sleep(0.2)


@pytest.mark.slow
def test_png_is_stored_then_read_by_the_worker(
    client: TestClient, api: Api, tesseract: None, rt: Runtime, worker: EmbeddedWorker
) -> None:
    headers = api.user()
    doc = upload(client, headers, "receipt.png", png(["Hardware store receipt", "Hammer nails"]))
    assert doc["text_status"] in ("ocr_pending", "ocr_running", "ocr_done")
    assert doc["media_type"] == "image/png" and doc["ocr_pages_total"] == 1
    done = wait_text(client, headers, doc["id"])
    assert done["text_status"] == "ocr_done", done
    assert done["ocr_pages_done"] == 1
    for word in ("Hardware", "store", "receipt", "Hammer", "nails"):
        assert word in done["text"], done["text"]
    assert "eng" in done["text_note"]


@pytest.mark.slow
def test_image_only_pdf_is_read_page_by_page_in_german_too(
    client: TestClient, api: Api, tesseract: None, rt: Runtime, worker: EmbeddedWorker
) -> None:
    headers = api.user()
    data = image_pdf([["Stromrechnung der Stadtwerke"], ["Gebühren für März bis Freitag"]])
    doc = upload(client, headers, "scan.pdf", data)
    assert doc["ocr_pages_total"] == 2
    done = wait_text(client, headers, doc["id"])
    assert done["text_status"] == "ocr_done" and done["ocr_pages_done"] == 2, done
    for word in ("Stromrechnung", "Stadtwerke", "Gebühren", "März", "Freitag"):
        assert word in done["text"], done["text"]
    # The language of the text that arrived is stored with it (a scan has none before).
    with api.session() as session:
        stored = session.scalar(
            select(Document.language_posteriors).where(Document.id == doc["id"])
        )
    assert stored is not None
    assert LANGUAGE_CODES[int(np.frombuffer(stored, dtype=np.float32).argmax())] == "de"


@pytest.mark.slow
def test_text_that_arrives_schedules_the_recluster_that_places_it(
    client: TestClient, api: Api, tesseract: None, rt: Runtime, worker: EmbeddedWorker
) -> None:
    rt.options = fast_options(auto=True)
    headers = api.user()
    api.post(headers, "Garden notes: roses, tulips and the lawn mower.")
    doc = upload(client, headers, "garden.png", png(["Garden roses and tulips"]))
    done = wait_text(client, headers, doc["id"])
    assert done["text_status"] == "ocr_done", done
    deadline = time.monotonic() + 120
    while True:  # the automatic job that started after the text came counts the scan
        with api.session() as session:
            jobs = list(session.scalars(select(ReclusterJob).order_by(ReclusterJob.id)))
        if any(j.state in ("done", "failed") and j.n_documents == 2 for j in jobs):
            break
        assert time.monotonic() < deadline, [(j.state, j.n_documents) for j in jobs]
        time.sleep(0.2)


@pytest.mark.slow
def test_a_scan_is_among_similar_documents_once_its_text_arrives(
    client: TestClient, api: Api, tesseract: None, rt: Runtime
) -> None:
    headers = api.user()
    note = api.post(headers, "Hardware store receipt: hammer, nails and a saw.")["document"]
    doc = upload(client, headers, "receipt.png", png(["Hardware store receipt", "Hammer nails"]))

    def similar_ids() -> list[int]:
        response = client.get(f"/ui/api/documents/{note['id']}/similar", headers=headers)
        assert response.status_code == 200, response.text
        return [d["id"] for d in response.json()]

    # Asked before the worker runs: the scan has no text yet, so nothing is like the note.
    assert similar_ids() == []
    embedded = EmbeddedWorker(rt.queue, workers=1)
    embedded.start()
    try:
        assert wait_text(client, headers, doc["id"])["text_status"] == "ocr_done"
    finally:
        embedded.stop()
    # Nothing was added or deleted, yet the matrix of the first answer is not served again.
    assert similar_ids() == [doc["id"]]


def test_without_tesseract_the_scan_is_kept_and_says_so(tmp_path: Path) -> None:
    cfg = make_settings(tmp_path / "data", tesseract_cmd=str(tmp_path / "no-such-tesseract"))
    from foldwise.service import migrate

    migrate.upgrade(cfg.sqlalchemy_url)
    with TestClient(create_app(cfg)) as client:
        rt: Runtime = client.app.state.runtime  # type: ignore[attr-defined]
        rt.options = fast_options()
        embedded = EmbeddedWorker(rt.queue, workers=1)
        embedded.start()
        try:
            headers = Api(client).user()
            doc = upload(client, headers, "letter.png", png(["A letter"]))
            done = wait_text(client, headers, doc["id"])
        finally:
            embedded.stop()
    assert done["text_status"] == "no_text_ocr_missing"
    assert done["text_note"] == "no text: OCR not installed"
    assert done["text"] == ""
    download = client.get(f"/api/documents/{doc['id']}/file", headers=headers)
    assert download.status_code == 200 and download.content.startswith(b"\x89PNG")


def test_bad_images_are_refused_and_nothing_is_stored(client: TestClient, api: Api) -> None:
    headers = api.user()
    before = api.snapshot()
    truncated = png(["Truncated"])[:200]
    huge = io.BytesIO()
    Image.new("1", (9000, 7000), 1).save(huge, "PNG")  # 63 million pixels, a few KB
    for name, data, needle in (
        ("cut.png", truncated, "not a readable image"),
        ("huge.png", huge.getvalue(), "pixels"),
        ("fake.jpg", b"not a jpeg at all", "not a readable image"),
    ):
        response = client.post(
            "/api/documents/upload", files={"file": (name, data)}, headers=headers
        )
        assert response.status_code == 422, (name, response.text)
        assert needle in response.json()["detail"], (name, response.text)
    assert api.snapshot() == before
