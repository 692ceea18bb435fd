"""Each document's language posteriors, detected when its text arrives: a worker's first
recluster no longer detects every document's language (docs/recluster.md, "Languages detected
at ingest"). Documents stored before stay ``NULL`` and are detected when they are read.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27 09:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.add_column(sa.Column("language_posteriors", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.drop_column("language_posteriors")
