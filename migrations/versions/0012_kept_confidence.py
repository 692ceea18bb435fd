"""A placement kept only because the model is less sure of another folder remembers the
earlier confidence the next recluster compares with (docs/placement.md, "Placements that
stay").

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-29 21:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tree_placements", schema=None) as batch_op:
        batch_op.add_column(sa.Column("kept_confidence", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tree_placements", schema=None) as batch_op:
        batch_op.drop_column("kept_confidence")
