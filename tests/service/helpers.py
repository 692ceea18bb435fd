"""Small factories for the service tests."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from foldwise.service.documents.models import Document
from foldwise.service.documents.writers import WRITERS_DIR
from foldwise.service.folders.models import Folder
from foldwise.service.users import service as users
from foldwise.service.users.models import ApiToken, User


class Api:
    """Factories and checks bound to one test client (and so to one database)."""

    def __init__(self, client: TestClient) -> None:
        self.client = client
        self.app = client.app

    def session(self) -> Session:
        """A session on the app's database."""
        return self.app.state.session_factory()  # type: ignore[attr-defined, no-any-return]

    def user(self, name: str = "alice", password: str | None = None) -> dict[str, str]:
        """Create a user; returns the bearer header for their new token."""
        with self.session() as session:
            user = users.create_user(session=session, name=name, password=password)
            _, secret = users.create_token(session=session, user=user)
            session.commit()
        return {"Authorization": f"Bearer {secret}"}

    def snapshot(self) -> dict[str, Any]:
        """Everything a request could change: row counts and contents, blob files."""
        with self.session() as session:
            rows = {
                model.__tablename__: session.scalar(select(func.count()).select_from(model))
                for model in (User, ApiToken, Folder, Document)
            }
            rows["documents_state"] = sorted(
                session.execute(select(Document.id, Document.title, Document.folder_id)).all()
            )
            rows["folders_state"] = sorted(
                session.execute(select(Folder.id, Folder.name, Folder.parent_id)).all()
            )
            rows["tokens_state"] = sorted(
                session.execute(select(ApiToken.id, ApiToken.revoked_at)).all()
            )
        blob_dir: Path = self.app.state.settings.blob_dir  # type: ignore[attr-defined]
        # The writers' locks and journals (documents/writers.py) are bookkeeping, not data.
        rows["blobs"] = sorted(
            p.name
            for p in blob_dir.rglob("*")
            if p.is_file() and WRITERS_DIR not in p.relative_to(blob_dir).parts
        )
        return rows

    def post(self, headers: dict[str, str], text: str, **fields: Any) -> dict[str, Any]:
        """Post a JSON document and return the answer (asserting success)."""
        response = self.client.post(
            "/api/documents", json={"text": text, **fields}, headers=headers
        )
        assert response.status_code in (200, 201), response.text
        return response.json()  # type: ignore[no-any-return]

    def folder(self, headers: dict[str, str], name: str, parent_id: int | None = None) -> int:
        """Create a folder and return its id."""
        response = self.client.post(
            "/api/folders", json={"name": name, "parent_id": parent_id}, headers=headers
        )
        assert response.status_code == 201, response.text
        return response.json()["id"]  # type: ignore[no-any-return]


def run_cli(api: Api, monkeypatch: Any, *args: str) -> Any:
    """Run ``foldwise ARGS`` in-process against ``api``'s database; returns the click result
    (``exit_code``, ``stdout``, ``stderr``)."""
    from typer.testing import CliRunner

    from foldwise import cli
    from foldwise.service import cli as service_cli
    from foldwise.service import db

    # The commands open sessions with db.SessionLocal, and those that store documents with
    # their runtime's; point both at this test's app.
    monkeypatch.setattr(db, "SessionLocal", api.app.state.session_factory)
    monkeypatch.setattr(service_cli, "command_runtime", lambda: api.app.state.runtime)
    return CliRunner().invoke(cli.app, list(args))


def zip_bytes(files: dict[str, bytes], **kwargs: Any) -> bytes:
    """A zip archive of ``{member name: content}``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, **kwargs) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def zip_directory(root: Path, prefix: str = "") -> bytes:
    """Zip every file under ``root`` (paths relative to it, under ``prefix``)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, prefix + path.relative_to(root).as_posix())
    return buffer.getvalue()


def minimal_pdf(text: str) -> bytes:
    """A valid one-page PDF showing ``text`` in Helvetica (built by hand, with its xref)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()


def encrypted_pdf(text: str) -> bytes:
    """``minimal_pdf(text)`` encrypted with a user password (pypdf, RC4)."""
    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=io.BytesIO(minimal_pdf(text)))
    writer.encrypt("secret", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_bytes(paragraphs: list[str], title: str | None = None) -> bytes:
    """A .docx file with these paragraphs (python-docx)."""
    import docx

    document = docx.Document()
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    if title:
        document.core_properties.title = title
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def eml_bytes(subject: str, body: str) -> bytes:
    """An e-mail message (stdlib email)."""
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"] = "a@example.org"
    message["To"] = "b@example.org"
    message["Subject"] = subject
    message.set_content(body)
    return bytes(message)
