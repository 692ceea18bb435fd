"""A user with more documents than one SQL statement may bind: a recluster reads them in
chunks (``db.in_chunks``). SQLite binds at most 32,766 parameters by default and PostgreSQL
65,535; here SQLite's limit is lowered so that a few hundred documents cross it."""

from __future__ import annotations

import random
import sqlite3
from typing import Any

from sqlalchemy import event

from foldwise.service.composition import app_runtime
from foldwise.service.config import Settings
from foldwise.service.imports.archive import Entry, Listing
from foldwise.service.imports.service import import_listing
from foldwise.service.recluster.recluster_input import load_inputs, representatives
from foldwise.service.users import service as users

from .recluster_support import fast_options

TOPICS = {
    "garden": "soil seed compost tomato prune hedge lawn mulch bulb weed",
    "tax": "invoice receipt deduction refund income return audit pension vat ledger",
    "travel": "flight hotel passport luggage train ticket visa airport booking map",
}
#: Parameters one statement may bind in this test (chunks are 500 ids).
LIMIT = 520


def _few_variables(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, LIMIT)


def test_a_recluster_reads_more_documents_than_one_statement_may_bind(
    sqlite_settings: Settings,
) -> None:
    rng = random.Random(0)
    entries = [
        Entry(
            (folder,),
            f"{folder}-{i}.txt",
            " ".join(rng.choices(words.split(), k=30) + rng.choices(["the", "and"], k=5)).encode(),
        )
        for folder, words in TOPICS.items()
        for i in range(250)
    ]
    rt = app_runtime(sqlite_settings, fast_options())
    try:
        with rt.sessions() as session:
            user = users.create_user(session=session, name="alice")
            import_listing(session=session, user=user, listing=Listing(entries=entries))
            session.commit()
            user_id = user.id
        event.listen(rt.engine, "connect", _few_variables)
        rt.engine.dispose()  # new connections, with the limit
        with rt.sessions() as session:
            inputs = load_inputs(session=session, user_id=user_id, options=rt.options, seed=user_id)
            typical = representatives(
                session=session,
                user_id=user_id,
                folder_ids=sorted({f for f in inputs.folder_of if f is not None}),
            )
    finally:
        rt.close()

    assert inputs.stats["placement_training"] == len(entries) > LIMIT
    assert inputs.X_place.shape[0] == len(entries)
    assert len(typical) == len(TOPICS)
