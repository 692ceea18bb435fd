"""Proposals are flat (docs/placement.md "Extended tree"): the column for a proposal nested
in another proposal was never written, so it goes.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25 11:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tree_proposals", schema=None) as batch_op:
        batch_op.drop_column("parent_key")


def downgrade() -> None:
    with op.batch_alter_table("tree_proposals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("parent_key", sa.String(length=40), nullable=True))
