"""Documents say where their text came from: scans wait for OCR in the worker, with
progress, and a missing Tesseract is a state, not an error (docs/ocr.md).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25 04:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Every document stored so far had its text extracted from the file.
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "text_status", sa.String(length=24), server_default="extracted", nullable=False
            )
        )
        batch_op.add_column(sa.Column("text_note", sa.String(length=500), nullable=True))
        batch_op.add_column(
            sa.Column("ocr_pages_done", sa.Integer(), server_default="0", nullable=False)
        )
        batch_op.add_column(
            sa.Column("ocr_pages_total", sa.Integer(), server_default="0", nullable=False)
        )
        batch_op.create_index("ix_documents_text_status", ["text_status"], unique=False)


def downgrade() -> None:
    # Scans without text yet keep their empty text; before this revision nothing reads them.
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.drop_index("ix_documents_text_status")
        batch_op.drop_column("ocr_pages_total")
        batch_op.drop_column("ocr_pages_done")
        batch_op.drop_column("text_note")
        batch_op.drop_column("text_status")
