"""The user's tree state: the tree version critiques are made on, and the count of critiques
(and undos) that makes a running recluster's result stale (docs/architecture.md sec. 9).
Keyword-only functions; callers commit."""

from __future__ import annotations

from sqlalchemy import update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from foldwise.service.critiques.models import TreeState
from foldwise.service.db import utcnow


def tree_state(*, session: Session, user_id: int) -> TreeState:
    """The user's tree state row, created at version 0 on first use.

    A new user's first requests often come together (the page loads the extended tree while
    the person drops a zip on it), and each makes the row on first use. A plain insert made
    all but the first fail with an IntegrityError, answered 409 (a UI test's first import
    did, once), so the row is inserted with ``ON CONFLICT DO NOTHING`` (PostgreSQL and
    SQLite alike) and then read.
    """
    state = session.get(TreeState, user_id)
    if state is None:
        dialect = session.get_bind().dialect.name
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        session.execute(
            insert(TreeState)
            .values(user_id=user_id, version=0, critique_seq=0, updated_at=utcnow())
            .on_conflict_do_nothing(index_elements=[TreeState.user_id])
        )
        state = session.get(TreeState, user_id)
        assert state is not None  # inserted here or by the concurrent request
    return state


def bump_critique_seq(*, session: Session, user_id: int) -> int:
    """Count one more critique (or undo); a running job's result is then stale.

    An ``UPDATE ... SET x = x + 1`` rather than read-modify-write: it takes the row lock on
    PostgreSQL and the write lock on SQLite, so it serialises with a job's compare-and-set.
    """
    tree_state(session=session, user_id=user_id)
    session.execute(
        update(TreeState)
        .where(TreeState.user_id == user_id)
        .values(critique_seq=TreeState.critique_seq + 1, updated_at=utcnow())
    )
    session.expire_all()
    return tree_state(session=session, user_id=user_id).critique_seq
