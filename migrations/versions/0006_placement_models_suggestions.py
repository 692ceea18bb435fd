"""Instant suggestions: each tree version's placement model as plain arrays, and where it
puts documents that arrived since (docs/recluster.md, "Instant suggestions").

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 05:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Versions made before this revision have no model: their users get instant
    # suggestions from the next recluster on.
    op.create_table(
        "placement_models",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("npz", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_placement_models_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["tree_versions.id"],
            name=op.f("fk_placement_models_version_id_tree_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("version_id", name=op.f("pk_placement_models")),
    )
    with op.batch_alter_table("placement_models", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_placement_models_user_id"), ["user_id"], unique=False)

    op.create_table(
        "document_suggestions",
        sa.Column("document_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("critique_seq", sa.Integer(), nullable=False),
        sa.Column("folder_id", sa.Integer(), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("terms", sa.JSON(), nullable=False),
        sa.Column("confident_folder_id", sa.Integer(), nullable=True),
        sa.Column("runner_up_folder_id", sa.Integer(), nullable=True),
        sa.Column("margin", sa.Float(), nullable=True),
        sa.Column("pair_mass", sa.Float(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["document_id"],
            ["documents.id"],
            name=op.f("fk_document_suggestions_document_id_documents"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["folder_id"],
            ["folders.id"],
            name=op.f("fk_document_suggestions_folder_id_folders"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_document_suggestions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["tree_versions.id"],
            name=op.f("fk_document_suggestions_version_id_tree_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("document_id", name=op.f("pk_document_suggestions")),
    )
    with op.batch_alter_table("document_suggestions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_document_suggestions_user_id"), ["user_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("document_suggestions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_document_suggestions_user_id"))
    op.drop_table("document_suggestions")
    with op.batch_alter_table("placement_models", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_placement_models_user_id"))
    op.drop_table("placement_models")
