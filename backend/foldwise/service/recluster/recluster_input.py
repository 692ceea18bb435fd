"""The recluster's inputs, read from the database (docs/architecture.md sec. 2, 5).

:func:`load_inputs` reads one user's folders, documents and critiques and picks the
exemplars: filed documents sampled per folder, then every unfiled document, with labels as
folder paths and explicit triples as indices (:class:`ReclusterInput`). What the previous
tree version kept (placements, the cross-validated state, the fitted model) comes with them.
:func:`representatives` picks each folder's most typical document for questions.
``core_adapter`` turns the inputs into a tree.
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from foldwise import core
from foldwise.service.critiques.models import Critique, CritiqueTriple, RejectedGroup
from foldwise.service.db import in_chunks
from foldwise.service.documents import language
from foldwise.service.documents.models import WITHOUT_TEXT, Document
from foldwise.service.folders.models import Folder
from foldwise.service.recluster.feature_rows import text_key
from foldwise.service.recluster.kept_model import (
    kept_model,
    model_despite_changes,
    newest_model,
    training_key,
    training_record,
)
from foldwise.service.recluster.settings import ReclusterSettings
from foldwise.service.recluster.stored_model import (
    StoredModel,
    TrainingRecord,
    load_cv,
)
from foldwise.service.recluster.tree.models import (
    TreePlacement,
    TreeProposal,
)
from foldwise.service.recluster.tree.versions import latest_version

log = logging.getLogger(__name__)

#: Documents per folder whose vectors define the folder's centroid, from which the exemplars
#: are picked (the centroid of 50 documents is already stable, and it bounds the work).
CENTROID_SAMPLE = 50


def stable_order(doc_ids: list[int]) -> list[int]:
    """``doc_ids`` in a fixed pseudo-random order that depends on the ids alone.

    Samples taken as prefixes of this order are the same on every recluster of the same
    input (no churn from resampling), and a new document changes a sample by at most itself.
    """
    # Knuth's multiplicative hash: cheap, deterministic, and it scatters consecutive ids.
    return sorted(doc_ids, key=lambda d: ((d * 2654435761) % 2**32, d))


@dataclass
class ReclusterInput:
    """What one recluster sees: exemplars of filed documents, then every unfiled document."""

    doc_ids: list[int]
    folder_of: list[int | None]
    X: sp.csr_matrix
    terms: list[str]
    #: Folder path (folder ids as strings, from the top) per document; ``None`` if unfiled.
    labels: list[tuple[str, ...] | None]
    #: Explicit triples over indices into ``doc_ids``, closed (001 Theorems 1-3).
    triples: list[tuple[int, int, int]]
    folders: dict[int, tuple[int | None, str]]
    #: Training sample of each folder (rows of ``X_all``) for the placement model; its
    #: first ``CENTROID_SAMPLE`` rows also define the folder's centroid.
    centroid_rows: dict[int, list[int]]
    X_all: sp.csr_matrix
    rejected: list[set[int]]
    #: Row of ``X_all`` of each document of ``doc_ids``.
    rows: list[int] = field(default_factory=list)
    #: Folder id -> its path (folder ids as strings from the top), as in ``labels``.
    paths: dict[int, tuple[str, ...]] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    #: The placement model's features of every row of ``X_all`` (a larger vocabulary;
    #: with a kept model, of the rows of ``rows`` only: ``kept_model``).
    X_place: sp.csr_matrix | None = None
    #: Rows of ``X_all`` the person filed by a move critique: they weigh more in placement.
    critiqued_rows: set[int] = field(default_factory=set)
    #: (row of an unfiled document, folder id) from "a is closer to b than to c" answers:
    #: the answer is a soft example of ``a`` in ``b``'s folder.
    answered: list[tuple[int, int]] = field(default_factory=list)
    #: Member sets of proposals a document was taken out of ("not_in"), per document id.
    not_in: list[tuple[int, set[int]]] = field(default_factory=list)
    #: Rows of ``X_all`` in the placement vocabulary fitted on every document, new ones too
    #: (the open-set test's features); ``None``: ``X_place``.
    X_open: sp.csr_matrix | None = None
    #: The fitted features of ``X_place``: they turn a later document into a row of it.
    place_features: core.TextFeatures | None = None
    #: The previous version's placement representation, kept unless the other is clearly
    #: better (``FolderPlacement.previous_representation``).
    previous_representation: str | None = None
    #: Unfiled document id -> the existing folder the previous version showed it in: it stays
    #: there unless another folder is clearly better (core ``extended_tree``'s
    #: ``previous_folders``).
    previous_folder_of: dict[int, int] = field(default_factory=dict)
    #: Unfiled document id -> the confidence a change of its folder is compared with (the
    #: previous version's, or the earlier one it kept): it also stays while the model is
    #: less sure of another folder (core ``extended_tree``'s ``previous_confidence``).
    previous_confidence_of: dict[int, float] = field(default_factory=dict)
    #: The previous version's cross-validated quantities of the placement model and of
    #: biiHAC's self-labeling model, for reuse (``FolderPlacement.cross_validated``).
    placement_cv: core.CrossValidated | None = None
    self_label_cv: core.CrossValidated | None = None
    #: Filed documents when each kept state was estimated ("placement", "self_label"): the
    #: recluster stores them again if it reuses the state, its own total if it does not.
    cv_filed_totals: dict[str, int] = field(default_factory=dict)
    #: The previous version's placement model, when it was fitted from the same training
    #: (``kept_model.training_key``) or from one that changed too little to fit it again
    #: at its size (``kept_model.model_despite_changes``): kept instead of fitted again.
    #: ``X_place`` then holds only the rows of ``rows`` (the others are zero: nothing reads
    #: them), or with ``new_folders`` every training row.
    kept_model: StoredModel | None = None
    #: Folders the kept model was not fitted on (created since): the recluster adds their
    #: SVMs to it (core ``add_folders``).
    new_folders: frozenset[tuple[str, ...]] = frozenset()
    #: Folders the kept model knows that hold no training document now (deleted, emptied,
    #: moved under another parent): the recluster removes their SVMs (core ``remove_folders``).
    gone_folders: frozenset[tuple[str, ...]] = frozenset()
    #: What the placement model was fitted from, stored with it for the next recluster
    #: (``kept_model.model_despite_changes``).
    training: TrainingRecord | None = None
    #: Row of ``X_all`` -> digest of its text (``feature_rows.text_key``), of each unfiled
    #: document whose ``X_place`` row is ``place_features.transform`` of its text: stored
    #: with the model, so that the critiques after this recluster re-place them from it.
    unfiled_keys: dict[int, bytes] = field(default_factory=dict)


def _folder_paths(folders: dict[int, tuple[int | None, str]]) -> dict[int, tuple[str, ...]]:
    paths: dict[int, tuple[str, ...]] = {}

    def path(fid: int) -> tuple[str, ...]:
        if fid not in paths:
            parent = folders[fid][0]
            # The parent is set first so that a cycle (impossible by the folder service's
            # checks) could not recurse forever.
            paths[fid] = (str(fid),)
            paths[fid] = (path(parent) if parent is not None else ()) + (str(fid),)
        return paths[fid]

    for fid in folders:
        path(fid)
    return paths


def _critique_inputs(
    session: Session, user_id: int
) -> tuple[set[int], list[tuple[int, int, int]], list[tuple[int, set[int]]]]:
    """Moved document ids, answered (a, b, c) ids and ``not_in`` (document, proposal members)."""
    rows = session.execute(
        select(
            Critique.kind,
            Critique.document_id,
            Critique.proposal_id,
            Critique.a,
            Critique.b,
            Critique.c,
        )
        .where(Critique.user_id == user_id, Critique.undone_at.is_(None))
        .order_by(Critique.id)
    ).all()
    moved = {int(d) for kind, d, *_ in rows if kind == "move" and d is not None}
    answers = [
        (int(a), int(b), int(c))
        for kind, _, _, a, b, c in rows
        if kind == "closer" and a is not None and b is not None and c is not None
    ]
    keys = {str(p) for kind, _, p, *_ in rows if kind == "not_in" and p}
    members = (
        {
            key: set(ids)
            for key, ids in session.execute(
                select(TreeProposal.key, TreeProposal.document_ids)
                .where(TreeProposal.user_id == user_id, TreeProposal.key.in_(keys))
                .order_by(TreeProposal.version_id)  # a carried-over key: the newest row wins
            ).all()
        }
        if keys
        else {}
    )
    not_in = [
        (int(d), members[str(p)])
        for kind, d, p, *_ in rows
        if kind == "not_in" and d is not None and str(p) in members
    ]
    return moved, answers, not_in


def exemplar_counts(
    folder_ids: Sequence[int], options: ReclusterSettings
) -> dict[int, tuple[int, int]]:
    """Exemplars of each folder (nearest the centroid, at random): the settings' counts, or
    fewer, at least 2 in the same proportion, once all folders' would exceed
    ``options.max_exemplars``.

    Past that budget the folders share it: each has ``budget // n`` and the oldest
    (lowest ids) one more, up to the budget. So a new folder takes one exemplar from a few
    folders, not one from each: with a floor for all, the 1,001st folder of 1,000 took
    every folder from 8 exemplars to 7, which changed the whole dendrogram and made
    biiHAC's self-labeling model cross-validate again (docs/recluster.md, "100,000
    documents").
    """
    per_folder = options.exemplars_nearest + options.exemplars_random
    n = len(folder_ids)
    if n * per_folder <= options.max_exemplars:
        return dict.fromkeys(folder_ids, (options.exemplars_nearest, options.exemplars_random))
    total = min(per_folder, max(2, options.max_exemplars // n))
    extra = max(0, options.max_exemplars - n * total)  # none once every folder is at 2

    def split(count: int) -> tuple[int, int]:
        nearest = min(count, max(1, round(count * options.exemplars_nearest / per_folder)))
        return nearest, count - nearest

    oldest_first = sorted(folder_ids)
    return {f: split(total + (i < extra)) for i, f in enumerate(oldest_first)}


def load_inputs(
    *, session: Session, user_id: int, options: ReclusterSettings, seed: int
) -> ReclusterInput:
    """Read the user's folders, documents and explicit triples, and pick the exemplars.

    Per folder, up to ``options.train_per_folder`` filed documents (a fixed sample,
    :func:`stable_order`) train the placement model: in a real archive folders hold many
    filed documents, and a classifier on all of them is the bar to beat. The first
    ``CENTROID_SAMPLE`` of them define the centroid; the ``exemplars_nearest`` nearest to it
    plus ``exemplars_random`` others join the dendrogram (docs/architecture.md sec. 5;
    fewer with many folders, :func:`exemplar_counts`), so its n grows with new documents
    and folders, not with the archive. Documents named by explicit
    triples always join, so that every triple applies. ``seed`` must depend on the input
    only (the user), so that an unchanged input gives an unchanged tree.
    """
    folders = {
        f.id: (f.parent_id, f.name)
        for f in session.execute(
            select(Folder.id, Folder.parent_id, Folder.name).where(Folder.user_id == user_id)
        )
    }
    rows = session.execute(
        select(Document.id, Document.folder_id)
        .where(Document.user_id == user_id, Document.text_status.not_in(WITHOUT_TEXT))
        .order_by(Document.id)
    ).all()
    by_folder: dict[int, list[int]] = defaultdict(list)
    unfiled: list[int] = []
    for doc_id, folder_id in rows:
        (unfiled if folder_id is None else by_folder[folder_id]).append(doc_id)
    unfiled = unfiled[-options.max_unfiled :]
    explicit = [
        (t.x, t.y, t.z)
        for t in session.scalars(select(CritiqueTriple).where(CritiqueTriple.user_id == user_id))
    ]
    moved, answers, not_in = _critique_inputs(session, user_id)
    named = {d for t in explicit for d in t}
    train = {
        f: sorted(stable_order(ids)[: options.train_per_folder]) for f, ids in by_folder.items()
    }
    for f, ids in by_folder.items():  # moved documents always train the model
        train[f] = sorted(set(train[f]) | (moved & set(ids)))
    sample = {f: stable_order(ids)[:CENTROID_SAMPLE] for f, ids in train.items()}
    folder_of_doc = {d: f for f, ids in by_folder.items() for d in ids}
    wanted = sorted({d for ids in train.values() for d in ids} | set(unfiled) | named)
    texts = _texts(session, wanted)
    wanted = [d for d in wanted if d in texts]
    if len(wanted) < 2:
        raise ValueError(f"nothing to cluster: {len(wanted)} document(s); a recluster needs 2")
    corpus = [texts[d] for d in wanted]
    # The placement model's own vocabulary: every word of two or more characters, numbers
    # and function words included, as a plain tf-idf classifier sees it (docs/placement.md).
    # Two fits of it: on every document, for the open-set test (words only new documents
    # share make a new topic's pages neighbours), and on the filed documents the model
    # trains on, for the classifier, as a classifier is fitted (docs/placement.md,
    # "Placement features of the filed documents"). The clustering's features (the
    # papers' terms) are read off the same analysis (docs/recluster.md, "The clustering's
    # features from the placement's analysis").
    place_options = {
        "min_term_count": options.placement_min_term_count,
        "max_terms": options.placement_max_terms,
        "min_term_length": 2,
        "stop_words": None,
        "keep_digits": True,
    }
    analysis = core.TextAnalysis(corpus, **place_options)  # type: ignore[arg-type]
    X_all, model = analysis.narrower_features()
    X_all = sp.csr_matrix(X_all, dtype=np.float64)
    trained = {d for ids in train.values() for d in ids if d in texts}
    row_of = {d: i for i, d in enumerate(wanted)}

    chosen: list[int] = []
    centroid_rows: dict[int, list[int]] = {}
    counts = exemplar_counts(list(train), options)
    for f, ids in train.items():
        centroid_rows[f] = [row_of[d] for d in ids if d in row_of]
        rows_f = sorted(row_of[d] for d in sample[f] if d in row_of)
        if not rows_f:
            continue
        centroid = np.asarray(X_all[rows_f].mean(axis=0)).ravel()
        sims = X_all[rows_f] @ centroid
        order = [rows_f[i] for i in np.argsort(-sims, kind="stable")]
        n_nearest, n_random = counts[f]
        near, rest = order[:n_nearest], order[n_nearest:]
        # A generator per folder: with one for all, a document filed in one folder changed
        # the draws of every folder after it.
        rng = random.Random(f"{seed}:{f}")
        chosen += near + rng.sample(rest, min(len(rest), n_random))
    labeled_rows = sorted(
        set(chosen) | {row_of[d] for d in named if d in row_of and d in folder_of_doc}
    )
    unlabeled_rows = [row_of[d] for d in wanted if d not in folder_of_doc]
    order_rows = labeled_rows + unlabeled_rows
    doc_ids = [wanted[r] for r in order_rows]
    paths = _folder_paths(folders)
    folder_of = [folder_of_doc.get(d) for d in doc_ids]
    labels = [paths[f] if f is not None else None for f in folder_of]
    index = {d: i for i, d in enumerate(doc_ids)}
    triples = [
        (index[x], index[y], index[z])
        for x, y, z in explicit
        if x in index and y in index and z in index
    ]
    closed = sorted(core.TripleSet(triples).closed) if triples else []
    rejected = [
        set(g.document_ids)
        for g in session.scalars(select(RejectedGroup).where(RejectedGroup.user_id == user_id))
    ]
    answered = [
        (row_of[a], folder_of_doc[b])
        for a, b, _ in answers
        if a in row_of and a not in folder_of_doc and b in folder_of_doc
    ]
    filed_total = sum(len(v) for v in by_folder.values())
    folder_path = {d: paths[folder_of_doc[d]] for d in sorted(trained)}
    training = training_record(
        options,
        ((d, path, d in moved, texts[d]) for d, path in folder_path.items()),
        [(wanted[r], paths[f]) for r, f in answered if f in paths and options.answer_weight > 0],
    )
    placement_key = training_key(training)
    newest = newest_model(session, user_id) if options.cv_reuse else None
    states: dict[str, tuple[core.CrossValidated, int]] = _previous_cv(
        newest, user_id, filed_total, options.cv_reuse_max_change
    )
    kept, changes = None, 0
    new_folders = gone_folders = frozenset[tuple[str, ...]]()
    if options.placement_reuse:
        labeled = {p for p in labels if p is not None} | {
            paths[f] for _, f in answered if f in paths
        }
        kept = kept_model(newest, placement_key, labeled)
        if kept is None:
            found = model_despite_changes(newest, training, folder_path, options)
            if found is not None:
                kept, changes, new_folders, gone_folders = found
        elif kept.training is not None:
            changed, removed = training.changed_since(kept.training)
            changes = len(changed) + removed
    if kept is not None and kept.training is not None:
        # The record of what the kept model was fitted from, and of what the SVMs of new
        # folders learn: their documents new to the training, as they are now. Documents
        # moved in from other folders keep their entries, and so count as changed: the
        # SVMs of those folders were fitted with them.
        in_new: list[int] = []
        if new_folders:
            fitted = set(kept.training.ids.tolist())
            in_new = [d for d, p in folder_path.items() if p in new_folders and d not in fitted]
        training = kept.training.with_documents(training, in_new)
    if kept is not None:
        # The kept model's own features, fitted on these training texts: only the
        # dendrogram's rows are read (the served tree), off the analysis above where the
        # kept features read texts alike (``TextAnalysis.transform_rows``). New folders'
        # SVMs train against every training document, so then all are.
        place_features = kept.features
        needed = sorted(set(order_rows) | ({row_of[d] for d in trained} if new_folders else set()))
        select_rows = sp.csr_matrix(
            (np.ones(len(needed)), (needed, np.arange(len(needed)))),
            shape=(len(wanted), len(needed)),
        )
        X_place = select_rows @ analysis.transform_rows(place_features, needed)
        X_open, _ = analysis.features()
    elif trained:
        # Both fits from one analysis of each text (docs/recluster.md, "One analysis for both
        # placement feature sets").
        X_open, _ = analysis.features()
        X_place, place_features = analysis.subset_features(
            [i for i, d in enumerate(wanted) if d in trained]
        )
    else:  # nothing to train on: the features of every text serve both
        X_open, place_features = analysis.features()
        X_place = X_open
    del analysis  # its term counts of every text

    previous = previous_folders(session, user_id)
    return ReclusterInput(
        doc_ids=doc_ids,
        folder_of=folder_of,
        X=X_all[order_rows],
        terms=[str(t) for t in model.vocabulary_],
        labels=labels,
        triples=[tuple(t) for t in closed],  # type: ignore[misc]
        folders=folders,
        centroid_rows=centroid_rows,
        X_all=X_all,
        rejected=rejected,
        rows=order_rows,
        paths=paths,
        X_place=sp.csr_matrix(X_place, dtype=np.float64),
        X_open=sp.csr_matrix(X_open, dtype=np.float64),
        critiqued_rows={row_of[d] for d in moved if d in row_of and d in folder_of_doc},
        answered=answered,
        not_in=not_in,
        place_features=place_features,
        previous_representation=_previous_representation(session, user_id),
        previous_folder_of={d: f for d, (f, _) in previous.items()},
        previous_confidence_of={d: c for d, (_, c) in previous.items()},
        placement_cv=states["placement"][0] if "placement" in states else None,
        self_label_cv=states["self_label"][0] if "self_label" in states else None,
        cv_filed_totals={name: total for name, (_, total) in states.items()},
        kept_model=kept,
        new_folders=new_folders,
        gone_folders=gone_folders,
        training=training,
        # Without trained documents the features are fitted on every text, unfiled ones too.
        unfiled_keys={row_of[d]: text_key(texts[d]) for d in unfiled if d in row_of}
        if trained or kept is not None
        else {},
        stats={
            "exemplars": len(labeled_rows),
            "unfiled": len(unlabeled_rows),
            "folders": len(folders),
            "filed_total": filed_total,
            "placement_training": sum(len(v) for v in centroid_rows.values()),
            "explicit_triples": len(explicit),
            "placement_key": placement_key,
            "placement_changes_since_fit": changes,
            "placement_folders_added": len(new_folders),
            "placement_folders_removed": len(gone_folders),
        },
    )


def _texts(session: Session, doc_ids: list[int]) -> dict[int, str]:
    """Text of each of ``doc_ids`` that still exists; their languages stored at ingest are
    handed to the core (``language.remember``), which then detects only the others."""
    texts: dict[int, str] = {}
    for chunk in in_chunks(doc_ids):
        texts.update(language.read_texts(session, Document.id.in_(chunk)))
    return texts


def previous_folders(
    session: Session, user_id: int, ids: Collection[int] | None = None
) -> dict[int, tuple[int, float]]:
    """Document id -> the existing folder the user's newest tree version shows it in, and
    the confidence a change of folder is compared with: the one it shows it with, or the
    earlier one where only being less sure of another folder kept it there. All documents,
    or those of ``ids``."""
    version = latest_version(session=session, user_id=user_id)
    if version is None:
        return {}
    where = [TreePlacement.version_id == version.id, TreePlacement.folder_id.is_not(None)]
    if ids is not None:
        where.append(TreePlacement.document_id.in_(list(ids)))
    rows = session.execute(
        select(
            TreePlacement.document_id,
            TreePlacement.folder_id,
            func.coalesce(TreePlacement.kept_confidence, TreePlacement.confidence),
        ).where(*where)
    )
    return {int(d): (int(f), float(c)) for d, f, c in rows if f is not None}


def _previous_cv(
    newest: tuple[bytes, dict] | None, user_id: int, filed_total: int, max_change: float
) -> dict[str, tuple[core.CrossValidated, int]]:
    """The cross-validated quantities stored with the user's newest placement model
    (``kept_model.newest_model``), by model ("placement", "self_label": biiHAC's), with the
    filed total each was estimated at.

    A state is left out once the user's filed documents grew or shrank by more than
    ``max_change`` since then. The core's own test compares the labeled documents per
    folder, which stop growing where a folder's training sample is full
    (``train_per_folder``, the 8 exemplars of biiHAC's model): new filings would not
    refresh them.
    """
    if newest is None:
        return {}
    data, stats = newest
    try:
        states = dict(zip(("placement", "self_label"), load_cv(data), strict=True))
    except ValueError:  # a damaged archive: cross-validate afresh, and say so
        log.warning("cross-validated state of user %s cannot be read", user_id, exc_info=True)
        return {}
    totals = stats.get("cv_filed_total") or {}
    kept = {}
    for name, state in states.items():
        total = totals.get(name, stats.get("filed_total"))
        if state is None or not isinstance(total, int):
            continue
        if abs(filed_total - total) <= max_change * total:
            kept[name] = (state, total)
    return kept


def _previous_representation(session: Session, user_id: int) -> str | None:
    """The placement representation of the user's newest tree version (None: none yet)."""
    version = latest_version(session=session, user_id=user_id)
    value = (version.stats or {}).get("placement_representation") if version else None
    return value if value in core.PLACEMENT_REPRESENTATIONS else None


def representatives(*, session: Session, user_id: int, folder_ids: list[int]) -> dict[int, int]:
    """For each folder, its filed document nearest its centroid (tf-idf over those folders'
    documents, a sample of ``CENTROID_SAMPLE`` each): the folder's most typical member."""
    rng = random.Random(0)
    ids: dict[int, list[int]] = {}
    for fid in folder_ids:
        docs = list(
            session.scalars(
                select(Document.id)
                .where(Document.user_id == user_id, Document.folder_id == fid)
                .order_by(Document.id)
            )
        )
        if docs:
            ids[fid] = sorted(rng.sample(docs, min(len(docs), CENTROID_SAMPLE)))
    every = [d for docs in ids.values() for d in docs]
    if not every:
        return {}
    texts = _texts(session, every)
    if len(every) < 2:
        return {fid: docs[0] for fid, docs in ids.items()}
    try:
        X, _ = core.text_features([texts[d] for d in every])
    except ValueError:  # too few terms survive the term filter: fall back to the first document
        return {fid: docs[0] for fid, docs in ids.items()}
    X = sp.csr_matrix(X, dtype=np.float64)
    out, start = {}, 0
    for fid, docs in ids.items():
        block = X[start : start + len(docs)]
        start += len(docs)
        centroid = np.asarray(block.mean(axis=0)).ravel()
        out[fid] = docs[int(np.argmax(block @ centroid))]
    return out
