"""The user's tree state: the tree version critiques are made on, and the count of critiques
(and undos) that makes a running recluster's result stale (docs/architecture.md sec. 9).
Keyword-only functions; callers commit."""

from __future__ import annotations

from sqlalchemy import update
from sqlalchemy.orm import Session

from foldwise.service.critiques.models import TreeState
from foldwise.service.db import utcnow


def tree_state(*, session: Session, user_id: int) -> TreeState:
    """The user's tree state row, created at version 0 on first use."""
    state = session.get(TreeState, user_id)
    if state is None:
        state = TreeState(user_id=user_id, version=0, critique_seq=0)
        session.add(state)
        session.flush()
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
