"""Document and folder ids are never handed out twice on SQLite (AUTOINCREMENT).

Without it SQLite gives a new row the largest id plus one, so deleting the newest document
or folder frees its id for the next one. Ids of documents and folders also live outside
foreign keys (a tree version's proposals and dendrogram leaves, rejected groups, the
placements' best and question folders, the similar-documents cache), and a reused id made a
document posted after a delete a member of a proposal it was never clustered into
(``tests/service/test_ids.py``). PostgreSQL's sequences never reuse an id: nothing to do
there.

SQLite cannot add AUTOINCREMENT to a table: batch mode rebuilds both (keys off, as
``env.py`` runs every SQLite migration), and the triggers on them (the full-text index's),
which go with the old tables, are made again from their own SQL. The rebuilt table would count on
from its largest id, which may be below a deleted one that other rows still name; the
count starts above every id the database still holds of its kind instead.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-30 20:50:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Every place an id of the table may still be named after its row was deleted: plain
#: integer columns, JSON lists, and critiques' undo records (folder ids as values, document
#: ids as keys; a bound too high only skips ids).
_UNDO_IDS = [
    "SELECT max(j.value) FROM critiques, json_tree(critiques.undo) j WHERE j.type = 'integer'",
    "SELECT max(CAST(j.key AS INTEGER)) FROM critiques, json_tree(critiques.undo) j "
    "WHERE j.key GLOB '[0-9]*'",
]
_NAMED_IDS = {
    "documents": [
        "SELECT max(id) FROM documents",
        "SELECT max(j.value) FROM tree_versions, json_each(tree_versions.doc_ids) j",
        "SELECT max(j.value) FROM tree_proposals, json_each(tree_proposals.document_ids) j",
        "SELECT max(j.value) FROM rejected_groups, json_each(rejected_groups.document_ids) j",
        *(f"SELECT max({c}) FROM critiques" for c in ("document_id", "a", "b", "c")),
        *_UNDO_IDS,
    ],
    "folders": [
        "SELECT max(id) FROM folders",
        *(
            f"SELECT max({c}_folder_id) FROM tree_placements"
            for c in ("best", "confident", "runner_up", "question")
        ),
        *(
            f"SELECT max({c}) FROM document_suggestions"
            for c in ("folder_id", "confident_folder_id", "runner_up_folder_id")
        ),
        "SELECT max(parent_folder_id) FROM tree_proposals",
        "SELECT max(parent_folder_id) FROM rejected_groups",
        "SELECT max(folder_id) FROM critiques",
        *_UNDO_IDS,
    ],
}


def _count_above_named_ids() -> None:
    bind = op.get_bind()
    for table, queries in _NAMED_IDS.items():
        named = [bind.exec_driver_sql(q).scalar() for q in queries]
        highest = max((int(v) for v in named if v is not None), default=0)
        op.execute(f"DELETE FROM sqlite_sequence WHERE name = '{table}'")
        op.execute(f"INSERT INTO sqlite_sequence (name, seq) VALUES ('{table}', {highest})")


def _rebuild(autoincrement: bool) -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    triggers = (
        bind.exec_driver_sql(
            "SELECT sql FROM sqlite_master "
            "WHERE type = 'trigger' AND tbl_name IN ('folders', 'documents')"
        )
        .scalars()
        .all()
    )
    for table in ("folders", "documents"):
        with op.batch_alter_table(
            table, recreate="always", table_kwargs={"sqlite_autoincrement": autoincrement}
        ):
            pass
    for statement in triggers:
        op.execute(statement)
    if autoincrement:
        _count_above_named_ids()


def upgrade() -> None:
    _rebuild(autoincrement=True)


def downgrade() -> None:
    _rebuild(autoincrement=False)
