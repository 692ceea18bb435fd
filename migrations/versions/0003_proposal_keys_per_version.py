"""Proposal keys are unique per tree version, not per user: a proposal keeps its key across
reclusters while its members stay mostly the same (docs/recluster.md, "Proposal identity").
Placements keep the posterior mass of their two best folders (which question to ask).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24 12:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tree_proposals", schema=None) as batch_op:
        batch_op.drop_constraint("uq_tree_proposals_user_key", type_="unique")
        batch_op.create_unique_constraint("uq_tree_proposals_version_key", ["version_id", "key"])
        batch_op.create_index("ix_tree_proposals_user_key", ["user_id", "key"])
    with op.batch_alter_table("tree_placements", schema=None) as batch_op:
        batch_op.add_column(sa.Column("pair_mass", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tree_placements", schema=None) as batch_op:
        batch_op.drop_column("pair_mass")
    # Older versions' rows would repeat a carried-over key: keep only the newest row per key.
    op.execute(
        "DELETE FROM tree_proposals WHERE id NOT IN "
        "(SELECT MAX(id) FROM tree_proposals GROUP BY user_id, key)"
    )
    with op.batch_alter_table("tree_proposals", schema=None) as batch_op:
        batch_op.drop_index("ix_tree_proposals_user_key")
        batch_op.drop_constraint("uq_tree_proposals_version_key", type_="unique")
        batch_op.create_unique_constraint("uq_tree_proposals_user_key", ["user_id", "key"])
