"""The "which is closer?" question worth asking about each placed document: the other folder
c, the expected number of placements its answer changes and how likely the person has an
answer (core ``closer_questions``, docs/placement.md "Questions").

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25 12:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Versions made before this revision have no questions: the next recluster gives them.
    with op.batch_alter_table("tree_placements", schema=None) as batch_op:
        batch_op.add_column(sa.Column("question_folder_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("question_value", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("question_answerable", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tree_placements", schema=None) as batch_op:
        batch_op.drop_column("question_answerable")
        batch_op.drop_column("question_value")
        batch_op.drop_column("question_folder_id")
