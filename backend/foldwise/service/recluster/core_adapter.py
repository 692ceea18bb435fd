"""The one seam between the service and the clustering core (docs/architecture.md sec. 2).

DB rows -> core inputs (``recluster_input.load_inputs``: exemplars per folder + unfiled
documents, labels as folder paths, explicit triples as indices); core outputs -> rows
(:func:`compute` returns plain data that :mod:`runner` writes as a tree version).
``stored_model.py``, below it, packs and reads the fitted model a version keeps. Nothing
else in the service imports ``foldwise.core``'s estimators.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from foldwise import core
from foldwise.service.memory import release_freed_memory
from foldwise.service.recluster.recluster_input import ReclusterInput
from foldwise.service.recluster.settings import ReclusterSettings
from foldwise.service.recluster.stored_model import (
    folder_id_of,
    pack_model,
)

Progress = Callable[[str, dict[str, int]], None]


def _estimator(
    method: str,
    options: ReclusterSettings,
    report: Progress,
    self_label_cv: core.CrossValidated | None = None,
) -> Any:
    """The core's estimator called ``method`` (``core.ESTIMATORS``), with the options and
    progress reports its parameters take; biiHAC's placement model may reuse
    ``self_label_cv``."""
    cls = core.ESTIMATORS[method]
    params: dict[str, Any] = {}
    if method in ("bihac", "biihac"):
        params.update(
            eta=options.eta,
            r_max=options.r_max,
            r_ni=options.r_ni,
            max_pairs=options.weight_max_pairs,
            progress=lambda run, r_max: report("weights", {"run": run, "r_max": r_max}),
        )
    if method in ("ihac", "biihac"):

        def merges(done: int, total: int) -> None:
            report("cluster", {"merges_done": done, "merges_total": total})

        params["cluster_progress" if method == "biihac" else "progress"] = merges
    if method == "biihac":
        params["n_jobs"] = options.n_jobs
        params["placement_state"] = self_label_cv
        params["placement_max_change"] = options.cv_reuse_max_change
    if method == "ggm":
        params["random_state"] = 0
    return cls(**params)


def available_methods() -> list[str]:
    """The method names a recluster accepts."""
    return sorted(core.ESTIMATORS)


@dataclass
class Proposal:
    """A proposed folder over document ids (``index`` numbers it within the version).

    A proposal nested in another (``parent_index``) lies, with that one, in the existing
    folder ``parent_folder_id`` of the outermost. ``document_ids`` are all its members, its
    nested proposals' too: what the person would file by accepting it, and what identity
    across versions and critiques compare (``core.same_proposal``).
    """

    index: int
    parent_folder_id: int | None
    name: str
    top_terms: list[str]
    document_ids: list[int]
    cohesion: float
    parent_index: int | None = None


@dataclass
class PlacementOut:
    """Where one unfiled document goes: a folder, a proposal (``proposal_index``) or the top
    (both ``None``); with the two most probable existing folders and the gap between them."""

    document_id: int
    folder_id: int | None
    proposal_index: int | None
    confidence: float
    terms: list[str]
    runner_up_folder_id: int | None
    margin: float | None
    best_folder_id: int | None = None
    #: The deepest existing folder the model is confident of (``None``: the top level).
    confident_folder_id: int | None = None
    #: Posterior of the best plus the runner-up folder.
    pair_mass: float | None = None
    #: The question worth asking: c's folder, the expected number of placements the answer
    #: changes, the probability that the person has an answer (core ``closer_questions``).
    question_folder_id: int | None = None
    question_value: float | None = None
    question_answerable: float | None = None
    #: The earlier confidence a placement kept by the model being less sure of another
    #: folder is compared with next time (core ``DocumentPlacement.kept_confidence``).
    kept_confidence: float | None = None


def placement_training(
    inputs: ReclusterInput, options: ReclusterSettings
) -> tuple[list[int], list[tuple[str, ...] | None], np.ndarray]:
    """The placement model's training: rows of ``X_all`` (the recluster's documents first,
    in the same order, so that the core's row indices and the explicit triples agree; then
    the other sampled filed documents; then a copy of each answered ``a``), their labels
    (None: unfiled) and sample weights (n_rows,): ``move_weight`` for moved documents,
    ``answer_weight`` for the answers' copies (:func:`_placement_model`)."""
    n = len(inputs.doc_ids)
    in_tree = set(inputs.rows)
    folder_of_row = _training_folders(inputs)
    extra = sorted(r for r in folder_of_row if r not in in_tree)
    answered = [
        (r, f) for r, f in inputs.answered if f in inputs.paths and options.answer_weight > 0
    ]
    fit_rows = list(inputs.rows) + extra + [r for r, _ in answered]
    labels_fit = (
        list(inputs.labels)
        + [inputs.paths[folder_of_row[r]] for r in extra]
        + [inputs.paths[f] for _, f in answered]
    )
    sample_weight = np.array(
        [
            options.move_weight if r in inputs.critiqued_rows else 1.0
            for r in fit_rows[: n + len(extra)]
        ]
        + [options.answer_weight] * len(answered)
    )
    return fit_rows, labels_fit, sample_weight


def _placement_model(
    inputs: ReclusterInput, options: ReclusterSettings
) -> tuple[core.FolderPlacement, bool]:
    """The recluster's one placement model, fitted on the placement features.

    It learns from every sampled filed document (``train_per_folder`` per folder), not only
    the exemplars in the dendrogram, and from the person's critiques: moved documents weigh
    ``move_weight``, and each answered "a is closer to b than to c" adds a copy of ``a`` as
    an example of ``b``'s folder (``answer_weight``, 0 by default): :func:`placement_training`.
    The previous version's model is kept instead when it was fitted from the same training
    (``inputs.kept_model``); the flag says whether it was.
    """
    fit_rows, labels_fit, sample_weight = placement_training(inputs, options)
    triples = np.asarray(inputs.triples, dtype=np.intp).reshape(-1, 3)
    if inputs.kept_model is not None:
        placement = core.remove_folders(inputs.kept_model.placement, inputs.gone_folders)
        if inputs.new_folders:
            placement = core.add_folders(
                placement,
                placement_features(inputs)[fit_rows],
                labels_fit,
                sample_weight=sample_weight,
            )
        placement = placement.for_collection(labels_fit, triples=triples if len(triples) else None)
        return placement, True
    # No biHAC weights: they live in the clustering's term space, and they lowered
    # placement (docs/placement.md); the model learns its own term weights.
    model = core.FolderPlacement(
        previous_representation=inputs.previous_representation,
        cross_validated=inputs.placement_cv,
        max_label_change=options.cv_reuse_max_change,
        n_jobs=options.n_jobs,
    ).fit(
        placement_features(inputs)[fit_rows],
        labels_fit,
        triples=triples if len(triples) else None,
        sample_weight=sample_weight,
    )
    return model, False


def _unfiled_rows(inputs: ReclusterInput) -> tuple[list[bytes], sp.csr_matrix] | None:
    """The unfiled documents' text digests and placement rows, for the stored model."""
    if not inputs.unfiled_keys:
        return None
    rows = sorted(inputs.unfiled_keys)
    return [inputs.unfiled_keys[r] for r in rows], placement_features(inputs)[rows]


def _training_folders(inputs: ReclusterInput) -> dict[int, int]:
    """Row of ``X_all`` -> folder id, of every filed document the placement model trains
    on."""
    return {r: f for f, rows in inputs.centroid_rows.items() for r in rows}


def _training_rows(inputs: ReclusterInput) -> list[int]:
    """Rows of ``X_all`` of every filed document the placement model trains on."""
    return sorted(_training_folders(inputs))


def placement_features(inputs: ReclusterInput) -> sp.csr_matrix:
    """The placement model's features of every row of ``X_all`` (``X_place``, or the
    clustering's own where none were made)."""
    return inputs.X_place if inputs.X_place is not None else inputs.X_all


def _open_set_features(inputs: ReclusterInput) -> sp.csr_matrix:
    return inputs.X_open if inputs.X_open is not None else placement_features(inputs)


def _neighbourhood_p(inputs: ReclusterInput) -> np.ndarray:
    """The neighbourhood test of the new documents (core ``neighbourhood_p_values``), shape
    (n_docs,), 1 for filed documents: its similarity products do not depend on the
    clustering or the placement model, so :func:`compute` runs it beside them."""
    new = [i for i, label in enumerate(inputs.labels) if label is None]
    out = np.ones(len(inputs.labels))
    if new:
        features = _open_set_features(inputs)
        rows = np.asarray(inputs.rows)[new]
        out[new] = core.neighbourhood_p_values(features[rows], features[_training_rows(inputs)])
    return out


def served_proposals(
    tree: core.ExtendedTree, doc_ids: Sequence[int]
) -> tuple[list[Proposal], dict[tuple[str, ...], int]]:
    """The proposals of ``tree`` (rows numbered as ``doc_ids``) as the service stores them,
    and the index of each proposal's path. An enclosing proposal comes before the ones
    nested in it (``parent_index``), which lie in its existing folder."""
    proposals: list[Proposal] = []
    index_of: dict[tuple[str, ...], int] = {}
    for p in tree.proposals():  # an enclosing proposal comes before the ones nested in it
        parent = index_of.get(p.path[:-1])
        index_of[p.path] = len(proposals)
        proposals.append(
            Proposal(
                index=len(proposals),
                parent_folder_id=(
                    folder_id_of(p.parent) if parent is None else proposals[parent].parent_folder_id
                ),
                name=p.name,
                top_terms=list(p.terms),
                document_ids=sorted(doc_ids[i] for i in tree.subtree_documents(p.path)),
                cohesion=round(float(p.cohesion or 0.0), 4),
                parent_index=parent,
            )
        )
    return proposals, index_of


def _served_tree(
    inputs: ReclusterInput,
    Z: np.ndarray,
    weights: np.ndarray,
    model: core.FolderPlacement,
    options: ReclusterSettings,
    neighbourhood_p: np.ndarray,
) -> tuple[list[Proposal], list[PlacementOut]]:
    """The core's extended tree (proposals nested as the core splits them), over document ids.

    The core decides every placement and proposal, the person's critiques of earlier
    proposals included (a rejected group is not proposed again, a document taken out of a
    proposal stays out of its successors: ``core.same_proposal``); here document ids become
    rows and rows and folder paths become ids.
    """
    row_of = {d: i for i, d in enumerate(inputs.doc_ids)}

    def rows(ids: set[int]) -> set[int]:
        return {row_of[d] for d in ids if d in row_of}

    folder_of = _training_folders(inputs)
    training = sorted(folder_of)
    open_set = _open_set_features(inputs)
    tree = core.extended_tree(
        Z,
        inputs.X,
        inputs.labels,
        weights=weights,
        term_names=inputs.terms,
        existing_folders=[inputs.paths[f] for f in inputs.folders],
        placement=model,
        placement_features=placement_features(inputs)[inputs.rows],
        novelty_quantile=options.novelty_quantile,
        nested_proposals=True,
        neighbourhood_p=neighbourhood_p,
        open_set_features=open_set[inputs.rows],
        filed_features=open_set[training],
        filed_folders=[inputs.paths[folder_of[r]] for r in training],
        keep_margin=options.keep_margin,
        previous_folders=[
            inputs.paths.get(inputs.previous_folder_of.get(d, -1)) if label is None else None
            for d, label in zip(inputs.doc_ids, inputs.labels, strict=True)
        ],
        previous_confidence=[inputs.previous_confidence_of.get(d, 0.0) for d in inputs.doc_ids],
        rejected=[rows(g) for g in inputs.rejected],
        taken_out=[(row_of[d], rows(ids)) for d, ids in inputs.not_in if d in row_of],
    )

    proposals, index_of = served_proposals(tree, inputs.doc_ids)
    placements = []
    for pl in tree.placements:
        proposal = index_of.get(pl.folder)
        placements.append(
            PlacementOut(
                document_id=inputs.doc_ids[pl.document],
                folder_id=None if proposal is not None else folder_id_of(pl.folder),
                proposal_index=proposal,
                confidence=round(pl.confidence, 4),
                terms=list(pl.terms),
                runner_up_folder_id=folder_id_of(pl.runner_up),
                margin=pl.margin,
                pair_mass=pl.pair_mass,
                best_folder_id=folder_id_of(pl.best_existing),
                confident_folder_id=folder_id_of(pl.confident_folder),
                question_folder_id=folder_id_of(pl.question_folder),
                question_value=pl.question_value,
                question_answerable=pl.question_answerable,
                kept_confidence=pl.kept_confidence,
            )
        )
    return proposals, placements


@dataclass
class ReclusterOutput:
    """A recluster result as plain data, ready to become rows."""

    doc_ids: list[int]
    linkage: list[list[float]]
    proposals: list[Proposal]
    placements: list[PlacementOut]
    stats: dict[str, Any]
    #: The placement model and its features as ``.npz`` bytes (:func:`pack_model`), kept
    #: for instant suggestions; ``None`` when they could not be packed.
    model_npz: bytes | None = None


def compute(
    inputs: ReclusterInput, *, method: str, options: ReclusterSettings, report: Progress
) -> ReclusterOutput:
    """Fit ``method`` on the inputs, then the placement model, then build the extended tree.

    biiHAC fits a placement model of its own for self-labeling, on the dendrogram's
    exemplars. Self-labels from this one (every sampled filed document, the classifier's
    vocabulary) were tried: the model is sure of more documents, and on python-docs the
    held-back asyncio pages were self-labeled into concurrent-execution and no longer
    proposed (tests/service/test_recluster_story.py), also when documents its open-set test
    rejects were kept out.

    The placement model does not depend on the clustering, so with ``options.n_jobs`` of 2
    or more it is fitted in a second thread while the estimator runs (liblinear, BLAS and
    the iHAC kernel release the GIL). Phase ``placement`` is the wait for it afterwards.

    The second thread then runs the neighbourhood test of the new documents
    (:func:`_neighbourhood_p`), unless it is still busy with the placement model when the
    estimator is done: then this thread runs the test while it waits. Once the placement
    model is fitted, its archive (:func:`pack_model`, 0.4 s of zlib for 2,000 filed
    documents) is written in the second thread while the extended tree is built.

    BLAS runs on one thread meanwhile: the parallelism is these threads'. With OpenBLAS's
    own two threads per call, a recluster on the 2-core bench machine, shared with other
    work, took 35-42 s of CPU instead of 19 s (its threads spin while they wait), and the
    extra threads only fought the fits for the cores.
    """
    estimator = _estimator(method, options, report, inputs.self_label_cv)
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(max_workers=1) as pool:
        placement = pool.submit(_placement_model, inputs, options) if options.n_jobs > 1 else None
        novelty = pool.submit(_neighbourhood_p, inputs) if options.n_jobs > 1 else None
        report("weights" if method in ("biihac", "bihac") else "cluster", {})
        estimator.fit(inputs.X, inputs.labels, inputs.triples)
        # biHAC's distances and block products are freed now, but glibc keeps their pages
        # while the placement model's final fit grows on the other thread: at 100,000
        # filed documents that phase peaked 650 MB lower with them returned (docs/recluster.md,
        # "Worker memory").
        release_freed_memory()
        report("open_set", {})
        # Not started yet (cancelled): the placement model still holds the second thread.
        neighbourhood_p = (
            _neighbourhood_p(inputs) if novelty is None or novelty.cancel() else novelty.result()
        )
        report("placement", {})
        model, kept = placement.result() if placement else _placement_model(inputs, options)
        self_label = getattr(estimator, "placement_", None)
        packed = (
            pool.submit(
                pack_model,
                inputs.place_features,
                model,
                self_label,
                inputs.training,
                _unfiled_rows(inputs),
            )
            if inputs.place_features is not None and options.n_jobs > 1
            else None
        )
        Z = np.asarray(estimator.linkage_, dtype=np.float64)
        weights = getattr(estimator, "weights_", None)
        if weights is None or np.shape(weights) != (inputs.X.shape[1],):
            weights = np.ones(inputs.X.shape[1])
        report("extended_tree", {})
        proposals, placements = _served_tree(
            inputs, Z, np.asarray(weights, dtype=np.float64), model, options, neighbourhood_p
        )
        if packed is not None:
            model_npz: bytes | None = packed.result()
        elif inputs.place_features is not None:
            model_npz = pack_model(
                inputs.place_features, model, self_label, inputs.training, _unfiled_rows(inputs)
            )
        else:
            model_npz = None
    stats = dict(inputs.stats)
    stats["n_documents"] = len(inputs.doc_ids)
    stats["explicit_triples_closed"] = len(inputs.triples)
    stats["placement_representation"] = model.representation_
    reused = {
        "placement": kept or model.cross_validated_reused_,
        "self_label": None if self_label is None else self_label.cross_validated_reused_,
    }
    stats["cross_validation_reused"] = reused
    stats["placement_model_kept"] = kept
    filed_total = inputs.stats.get("filed_total")
    stats["cv_filed_total"] = {
        name: inputs.cv_filed_totals.get(name) if reused[name] else filed_total
        for name in reused
        if reused[name] is not None
    }
    if kept and stats["cv_filed_total"]["placement"] is None:
        # The kept model's state was dropped for the archive's growth, but estimated again
        # it would see the same training documents: it holds for this total.
        stats["cv_filed_total"]["placement"] = filed_total
    if estimator.ignores_triples:
        stats["triples_ignored"] = True
    for name in ("n_runs_", "cluster_errors_"):
        if hasattr(estimator, name):
            value = getattr(estimator, name)
            stats[name.rstrip("_")] = (
                [float(v) for v in value] if name == "cluster_errors_" else int(value)
            )
    return ReclusterOutput(
        doc_ids=inputs.doc_ids,
        linkage=Z.tolist(),
        proposals=proposals,
        placements=placements,
        stats=stats,
        model_npz=model_npz,
    )
