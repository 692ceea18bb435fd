"""Whether a user has a stored placement model, on the user's row: the ingest request reads
it with the user it authenticates, instead of asking the placement models in a round trip of
its own (docs/recluster.md, "Instant suggestions").

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25 23:05:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "has_placement_model", sa.Boolean(), nullable=False, server_default=sa.false()
            )
        )
    op.execute(
        "UPDATE users SET has_placement_model = "
        "EXISTS (SELECT 1 FROM placement_models WHERE placement_models.user_id = users.id)"
    )


def downgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("has_placement_model")
