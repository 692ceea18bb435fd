"""Tree versions: each finished recluster stores one (``jobs/store.py``); the newest serves."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from foldwise.service.recluster.tree.models import TreeVersion


def latest_version(*, session: Session, user_id: int) -> TreeVersion | None:
    """The user's newest tree version, if any."""
    return session.scalar(
        select(TreeVersion)
        .where(TreeVersion.user_id == user_id)
        .order_by(TreeVersion.number.desc())
        .limit(1)
    )
