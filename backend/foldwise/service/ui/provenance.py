"""Who put a document in its folder, so the document panel says "you put it there" only
when the person did (issue 11 item 3; docs/ui.md, "No traps").

A filing is recorded by the critique that made it (``Critique.undo``, described in
``critiques/filing.py``): the newest critique still in force whose filing put the document
where it is now names the way it got there. Nothing recorded (uploaded into a folder, or put
back by an undo) says nothing about who.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from foldwise.service.critiques.models import Critique
from foldwise.service.documents.models import Document
from foldwise.service.users.models import User

FiledBy = Literal["you", "accepted", "import", "unknown", "unfiled"]

#: The critique kinds whose filing is the person's own act, by what the panel says.
_BY_KIND: dict[str, FiledBy] = {
    "move": "you",
    "accept": "accepted",
    "rename": "accepted",
    "import": "import",
}


class Filing(BaseModel):
    """How ``document_id`` came to be in its folder, and the critique that did it."""

    document_id: int
    by: FiledBy
    critique_id: int | None = None


def filing_of(*, session: Session, user: User, document: Document) -> Filing:
    """The newest critique in force that filed ``document`` into its current folder."""
    if document.folder_id is None:
        return Filing(document_id=document.id, by="unfiled")
    key = str(document.id)
    critiques = session.scalars(
        select(Critique)
        .where(Critique.user_id == user.id, Critique.undone_at.is_(None))
        .order_by(Critique.id.desc())
    )
    for critique in critiques:
        undo = critique.undo or {}
        if key not in (undo.get("filed") or {}):
            continue
        target = (undo.get("targets") or {}).get(key, undo.get("target"))
        if target != document.folder_id:
            continue  # it was moved again since, by something that recorded no filing
        by = _BY_KIND.get(critique.kind, "unknown")
        return Filing(document_id=document.id, by=by, critique_id=critique.id)
    return Filing(document_id=document.id, by="unknown")
