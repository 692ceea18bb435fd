"""Instant suggestions: a new document is placed by the user's last fitted model at ingest.

A recluster stores its placement model with the tree version (:func:`store_model`, plain
arrays in an ``.npz``, never a pickle). When an unfiled document with text is committed,
the session hook (``hooks.py``) calls :func:`suggest_pending` before the ingest request
answers: the newest model of the document's user places it, and the suggestion is stored as
a :class:`DocumentSuggestion` row that ``/api/tree/extended`` serves (``"source":
"instant"``) until a tree version places the document. docs/recluster.md, "Instant
suggestions".

Failures never reach the ingest: a model that cannot be loaded or applied means no
suggestion, logged. Loaded models are kept in a small per-process LRU cache keyed by
(user id, version id), so a request pays only the text's features and one matrix product.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import replace

from sqlalchemy import ColumnElement, Engine, delete, insert, select, update
from sqlalchemy.orm import Session

from foldwise.service.config import Settings
from foldwise.service.critiques.models import Critique, TreeState
from foldwise.service.db import database_of, settings_of
from foldwise.service.documents import language
from foldwise.service.documents.models import WITHOUT_TEXT, Document
from foldwise.service.folders.models import Folder
from foldwise.service.recluster import stored_model
from foldwise.service.recluster.recluster_input import previous_folders
from foldwise.service.recluster.tree.models import (
    DocumentSuggestion,
    PlacementModel,
    TreePlacement,
    TreeVersion,
)
from foldwise.service.recluster.tree.versions import latest_version
from foldwise.service.users.models import User

log = logging.getLogger(__name__)

#: Placement models kept per user: the newest serves; older ones stay for suggestions made
#: with them while a version was being written, and cost a few MB each (docs/recluster.md).
KEEP_MODELS = 2
#: Loaded models kept per process (users x versions).
CACHE_SIZE = 8

#: Keyed by (database, user id, version id, stored at): ids alone repeat across databases
#: one process serves (tests, several apps).
_Key = tuple[str, int, int, str]
_cache: OrderedDict[_Key, stored_model.StoredModel | None] = OrderedDict()
_cache_lock = threading.Lock()


def store_model(session: Session, *, user_id: int, version_id: int, npz: bytes) -> None:
    """Keep ``npz`` (``stored_model.pack_model``) as ``version_id``'s model; drop older ones
    beyond :data:`KEEP_MODELS`. Part of the caller's transaction."""
    session.add(PlacementModel(version_id=version_id, user_id=user_id, npz=npz))
    session.execute(
        update(User)
        .where(User.id == user_id, User.has_placement_model.is_(False))
        .values(has_placement_model=True)
    )
    session.flush()
    keep = select(PlacementModel.version_id).where(PlacementModel.user_id == user_id)
    newest = list(session.scalars(keep.order_by(PlacementModel.version_id.desc())))
    if len(newest) > KEEP_MODELS:
        session.execute(
            delete(PlacementModel).where(
                PlacementModel.user_id == user_id,
                PlacementModel.version_id.in_(newest[KEEP_MODELS:]),
            )
        )


def latest_model(session: Session, user_id: int) -> tuple[int, stored_model.StoredModel] | None:
    """The user's newest stored model and its version id, or ``None`` (none, or unusable)."""
    newest = session.execute(
        select(PlacementModel.version_id, PlacementModel.created_at)
        .where(PlacementModel.user_id == user_id)
        .order_by(PlacementModel.version_id.desc())
        .limit(1)
    ).first()
    if newest is None:
        return None
    version_id = int(newest[0])
    key = (database_of(session), user_id, version_id, newest[1].isoformat())
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            cached = _cache[key]
            return None if cached is None else (version_id, cached)
    data = session.scalar(
        select(PlacementModel.npz).where(
            PlacementModel.version_id == version_id, PlacementModel.user_id == user_id
        )
    )
    model: stored_model.StoredModel | None = None
    try:
        model = stored_model.load_model(bytes(data)) if data is not None else None
    except Exception:  # a damaged or foreign archive: no suggestions from it, said once
        log.exception("placement model of user %s version %s cannot be loaded", user_id, version_id)
    with _cache_lock:
        _cache[key] = model  # None too: a bad model is not re-read on every request
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return None if model is None else (version_id, model)


def users_with_models(session: Session, user_ids: Iterable[int]) -> set[int]:
    """Those of ``user_ids`` that have a stored placement model (``User.has_placement_model``).

    Called from inside a flush, so it never loads through the session: a user the request
    has loaded already (the one it authenticated) answers from the identity map, with no
    round trip; others are asked on the transaction's own connection (Core, no autoflush).
    A user without a model, a new user filling their first tree, then costs no second
    transaction after the commit (docs/recluster.md, "Instant suggestions").
    """
    found, unknown = set(), []
    for user_id in sorted(set(user_ids)):
        user = session.identity_map.get(Session.identity_key(User, user_id))
        if user is not None and "has_placement_model" in user.__dict__:
            if user.has_placement_model:
                found.add(user_id)
        else:
            unknown.append(user_id)
    if unknown:
        query = select(User.id).where(User.id.in_(unknown), User.has_placement_model)
        found.update(int(u) for u in session.connection().execute(query).scalars())
    return found


Found = tuple[int, stored_model.StoredModel]


def suggest_documents(session: Session, user_id: int, documents: Iterable[tuple[int, str]]) -> int:
    """Place unfiled ``documents`` ((id, text) of ``user_id``) with the user's newest model
    and store the suggestions, replacing earlier ones; the number stored. Part of the
    caller's transaction; raises on database errors only."""
    docs = dict(documents)
    found = latest_model(session, user_id) if docs else None
    if found is None:
        return 0
    placed = _compute(session, user_id, docs, found)
    _store(session, user_id, found[0], placed)
    return len(placed)


def _compute(
    session: Session,
    user_id: int,
    docs: dict[int, str],
    found: Found,
    closer: dict[int, list[tuple[int, int]]] | None = None,
    previous: dict[int, tuple[int, float]] | None = None,
) -> dict[int, stored_model.SuggestionOut]:
    """Suggestions of those of ``docs`` that are the user's and unfiled, in live folders;
    empty (logged) when the model fails on them. ``previous``: document id -> the folder
    the newest tree version shows it in and the confidence it is compared with
    (``recluster_input.previous_folders``); such a document stays there as the recluster
    would keep it."""
    # Only the user's own, still unfiled documents: the caller's list may be stale.
    ids = sorted(
        session.scalars(select(Document.id).where(*_unfiled(user_id), Document.id.in_(docs)))
    )
    if not ids:
        return {}
    answers = [(closer or {}).get(d, []) for d in ids] if closer else None
    live = set(session.scalars(select(Folder.id).where(Folder.user_id == user_id)))
    try:
        # A folder deleted since the model was fitted is left out: each document gets its
        # best folder that still exists, never a dead one.
        suggestions = stored_model.suggest(
            found[1],
            [docs[d] for d in ids],
            answers,
            live,
            previous=None if previous is None else [previous.get(d) for d in ids],
            keep_margin=settings_of(session).recluster.keep_margin,
        )
    except Exception:
        log.exception("instant suggestions for user %s failed", user_id)
        return {}
    if not suggestions:
        return {}
    # The confident folder may be an ancestor path of the fit's, with a folder since deleted.
    return {
        d: replace(s, confident_folder_id=_if_live(s.confident_folder_id, live))
        for d, s in zip(ids, suggestions, strict=True)
    }


def _store(
    session: Session,
    user_id: int,
    version_id: int,
    placed: dict[int, stored_model.SuggestionOut],
    clear: Iterable[int] = (),
) -> None:
    """Replace the rows of ``placed`` (and delete those of ``clear``) in one go.

    One bulk insert, not an ORM object per row: a critique can re-place thousands (the
    first after a recluster, every document posted while it ran), and when a move
    re-placed all 4,690 unfiled documents the objects' unit of work was 40% of its time
    (docs/recluster.md, "Instant suggestions and critiques: speed")."""
    ids = sorted(set(placed) | set(clear))
    if not ids:
        return
    seq = session.scalar(select(TreeState.critique_seq).where(TreeState.user_id == user_id))
    session.execute(delete(DocumentSuggestion).where(DocumentSuggestion.document_id.in_(ids)))
    if placed:
        session.execute(
            insert(DocumentSuggestion),
            [
                {
                    "document_id": document_id,
                    "user_id": user_id,
                    "version_id": version_id,
                    "critique_seq": seq or 0,
                    "folder_id": s.folder_id,
                    "confidence": min(1.0, max(0.0, s.confidence)),
                    "terms": s.terms,
                    "confident_folder_id": s.confident_folder_id,
                    "runner_up_folder_id": s.runner_up_folder_id,
                    "margin": s.margin,
                    "pair_mass": s.pair_mass,
                }
                for document_id, s in sorted(placed.items())
            ],
        )


def replace_after_critique(session: Session, user_id: int, limit: int = 5000) -> int:
    """Re-place with the version's fitted model the user's unfiled documents that answers made
    since are about, and those posted since; the number of suggestions stored.

    Answers "a is closer to b than to c" restrict ``a``'s folders. Moves are learned by the
    next recluster (debounced), which refits and recalibrates, not here: a
    passive-aggressive step per move, learned here before, moved documents posted since
    right -> wrong 105 times and wrong -> right 46 in 36 service runs on six hierarchies,
    and those the version shows 51 and 17 times (docs/placement.md, "Documents posted while
    a tree is served" and "Re-placed at once: only what a critique is about"). Of the
    documents posted since, only those the same model would place elsewhere now are
    re-placed (:func:`_posted_since_to_place`): an answer about them, or one undone (its
    restriction goes), a suggestion whose folder was deleted since (it must go to a folder
    that still exists), none at all, or one of an older model. The others keep their
    suggestion: the same model would make it again, and re-placing every one of them made
    each critique's time grow with them (docs/recluster.md, "Instant suggestions and
    critiques: speed"). Documents the version shows stay where it shows them unless an
    answer is about them or their folder was deleted since. Only documents whose folder
    changes get a new suggestion (it outranks the version's placement: its critique counter
    is newer). An answered document moves as the recluster would move it
    (``core.suggest_rows`` with the version's folders and confidences): where the answer
    rules its folder out, or to a folder at least ``keep_margin`` more probable and shown at
    ``core.MIN_MOVE_CONFIDENCE`` or more. Documents in a proposal keep it. An answer undone
    drops out, so its effect goes with it.
    """
    found = latest_model(session, user_id)
    if found is None:
        return 0
    version = session.get(TreeVersion, found[0])
    if version is None:
        return 0
    answers = session.execute(
        select(Critique.a, Critique.b, Critique.c, Critique.undone_at)
        .where(
            Critique.user_id == user_id,
            Critique.tree_version >= version.number,  # not seen by the model's recluster
            Critique.kind == "closer",
        )
        .order_by(Critique.id)
    ).all()
    # An answer undone gives its document back its unrestricted place.
    undone = {int(a) for a, _, _, at in answers if at is not None and a is not None}
    folder_of = dict(
        session.execute(
            select(Document.id, Document.folder_id).where(Document.user_id == user_id)
        ).all()
    )
    closer: dict[int, list[tuple[int, int]]] = {}
    for a, b, c, at in answers:
        if at is not None or a is None or b is None or c is None:
            continue
        fb, fc = folder_of.get(b), folder_of.get(c)
        if a in folder_of and fb is not None and fc is not None:
            closer.setdefault(int(a), []).append((int(fb), int(fc)))
    # The newest version serves the tree; the model may be an older one's.
    served = latest_version(session=session, user_id=user_id) or version
    shown = {
        pl.document_id: (pl.folder_id, pl.proposal_key)
        for pl in session.scalars(
            select(TreePlacement).where(TreePlacement.version_id == served.id)
        )
    }
    suggested = {
        int(d): (v, f)
        for d, v, f in session.execute(
            select(
                DocumentSuggestion.document_id,
                DocumentSuggestion.version_id,
                DocumentSuggestion.folder_id,
            ).where(DocumentSuggestion.user_id == user_id)
        )
    }
    newest = sorted(session.scalars(select(Document.id).where(*_unfiled(user_id))))[-limit:]
    # A document the version shows in an existing folder and no answer is about stays
    # there until the next recluster; its suggestion from an answer since undone goes: the
    # version serves it again. One in a proposal keeps it whatever the model says. One
    # whose folder was deleted since (NULL, outside any proposal) is placed again.
    stays: set[int] = set()
    to_place = _posted_since_to_place(
        [d for d in newest if d not in shown], closer, undone, suggested, found[0]
    )
    for d in newest:
        if d not in shown or shown[d][1] is not None:
            continue
        if shown[d][0] is not None and d not in closer:
            stays.add(d)
        else:
            to_place.append(d)
    clear = sorted(d for d in stays if d in suggested)
    placed = _compute(
        session,
        user_id,
        unfiled_texts(session, user_id, sorted(to_place)),
        found,
        closer,
        # Only answered documents can have a place to keep among those re-placed.
        previous_folders(session, user_id, closer),
    )
    changed: dict[int, stored_model.SuggestionOut] = {}
    for d, s in placed.items():
        if d not in shown:
            changed[d] = s  # served from its suggestion anyway: keep it current
        elif shown[d][1] is not None:
            continue  # in a proposal: the dendrogram's call, until the next recluster
        elif s.folder_id != shown[d][0]:
            # An answered document moves by the recluster's own rule
            # (``core.suggest_rows(previous=...)``), so that the next recluster does not
            # put it back where the version has it.
            changed[d] = s
        elif d in suggested:
            clear.append(d)  # back where the version has it (an undo): the version serves
    _store(session, user_id, found[0], changed, clear)
    return len(changed)


def _posted_since_to_place(
    posted: list[int],
    closer: dict[int, list[tuple[int, int]]],
    undone: set[int],
    suggested: dict[int, tuple[int, int | None]],
    model_version_id: int,
) -> list[int]:
    """Those of ``posted`` (unfiled documents the served version does not place) whose
    suggestion the model ``model_version_id`` would not make again as it stands: an answer
    made since is about them (``closer``), or one undone since (``undone``: the ingest's
    suggestion comes back), or their suggestion is missing, in a folder deleted since
    (``folder_id`` set to NULL), or another model's. ``suggested``: document id ->
    (version id, folder id) of its stored suggestion."""
    out = []
    for d in posted:
        version_id, folder_id = suggested.get(d, (None, None))
        if d in closer or d in undone or folder_id is None or version_id != model_version_id:
            out.append(d)
    return out


def _if_live(folder_id: int | None, live: set[int]) -> int | None:
    return folder_id if folder_id in live else None


def replace_pending(engine: Engine, cfg: Settings, users: Iterable[int]) -> None:
    """:func:`replace_after_critique` for each user after a critique committed, each in its
    own transaction; logs and swallows failures (the critique stands regardless)."""
    for user_id in sorted(users):
        try:
            with Session(bind=engine, info={"settings": cfg}, expire_on_commit=False) as session:
                replace_after_critique(session, user_id)
                session.commit()
        except Exception:
            log.exception("re-placement after a critique of user %s failed", user_id)


def suggest_pending(engine: Engine, cfg: Settings, pending: dict[int, dict[int, str]]) -> None:
    """Suggest for documents just committed (user id -> {document id: text}), each user in
    its own transaction on a new session; logs and swallows every failure (ingest already
    succeeded and must not fail because of a suggestion)."""
    for user_id in sorted(pending):
        try:
            with Session(bind=engine, info={"settings": cfg}, expire_on_commit=False) as session:
                suggest_documents(session, user_id, pending[user_id].items())
                session.commit()
        except Exception:
            log.exception("instant suggestions for user %s were not stored", user_id)


def unfiled_texts(
    session: Session, user_id: int, ids: Iterable[int] | None = None
) -> dict[int, str]:
    """Texts of the user's unfiled documents that have text (all, or those of ``ids``)."""
    where = _unfiled(user_id)
    if ids is not None:
        where.append(Document.id.in_(list(ids)))
    return dict(language.read_texts(session, *where))


def _unfiled(user_id: int) -> list[ColumnElement[bool]]:
    """Conditions on ``Document`` rows: the user's unfiled documents that have text."""
    return [
        Document.user_id == user_id,
        Document.folder_id.is_(None),
        Document.text_status.not_in(WITHOUT_TEXT),
    ]


def clear_cache() -> None:
    """Forget every loaded model (tests; a process that wants its memory back)."""
    with _cache_lock:
        _cache.clear()
