"""Import reports."""

from __future__ import annotations

from pydantic import BaseModel


class ImportReport(BaseModel):
    """What an import did. ``skipped`` lists unsupported or hidden files that were left out."""

    folders_created: int
    folders_reused: int
    documents_created: int
    duplicates: int
    skipped: list[str]
