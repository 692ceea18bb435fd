"""The user's tree state row (``critiques/tree_state.py``) is made on first use: by a GET of
the extended tree as much as by an import or a critique. A new user's first requests often
come together (the page loads the tree while the person drops a zip on it), so the first
use must not fail when another request makes the row at the same moment."""

from __future__ import annotations

import threading

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from foldwise.service.critiques.models import TreeState
from foldwise.service.critiques.tree_state import tree_state
from foldwise.service.recluster.jobs.runtime import Runtime
from foldwise.service.users import service as users

from .recluster_support import rt

__all__ = ["rt"]

THREADS = 8


def test_the_first_use_is_safe_when_requests_race(client: TestClient, rt: Runtime) -> None:
    """Eight sessions look for the row at once, none finds it, all make it: each gets the
    one row and commits, where before all but one failed with an IntegrityError (answered
    409 "conflicts with a concurrent change")."""
    with rt.sessions() as session:
        user_id = users.create_user(session=session, name="carol").id
        session.commit()
    ready = threading.Barrier(THREADS)
    failures: list[BaseException] = []
    seqs: list[int] = []

    def first_use() -> None:
        try:
            with rt.sessions() as session:
                ready.wait()
                state = tree_state(session=session, user_id=user_id)
                seqs.append(state.critique_seq)
                session.commit()
        except BaseException as exc:  # reported below, from the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=first_use) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not failures, failures
    assert seqs == [0] * THREADS
    with rt.sessions() as session:
        assert session.scalar(select(func.count()).select_from(TreeState)) == 1
        assert session.get(TreeState, user_id).version == 0
