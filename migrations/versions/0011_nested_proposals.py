"""Proposals nest (docs/placement.md "Nested proposals"): a proposal may lie in another
proposal of the same tree version, named by its key.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28 14:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tree_proposals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("parent_key", sa.String(length=40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tree_proposals", schema=None) as batch_op:
        batch_op.drop_column("parent_key")
