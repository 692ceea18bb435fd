"""Kept cross-validation in the service: a recluster after a few moves reuses the previous
version's cross-validated placement quantities (docs/recluster.md, "Kept cross-validation")."""

from __future__ import annotations

from typing import Any

import numpy as np
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from foldwise.core.placement._kept import KEEP_MARGIN, MIN_MOVE_CONFIDENCE
from foldwise.service.config import ReclusterSettings
from foldwise.service.imports.archive import Entry, Listing
from foldwise.service.imports.service import import_listing
from foldwise.service.queue import EmbeddedWorker
from foldwise.service.recluster.jobs.runtime import Runtime
from foldwise.service.recluster.recluster_input import ReclusterInput, load_inputs
from foldwise.service.recluster.stored_model import TrainingRecord, load_model
from foldwise.service.recluster.tree.models import PlacementModel, TreePlacement
from foldwise.service.recluster.tree.versions import latest_version
from foldwise.service.users.models import User

from .recluster_support import (
    SMALL_FILED,
    corpus_files,
    fast_options,
    recluster,
    rt,
    seed_small,
    worker,
)

__all__ = ["rt", "worker"]


def _reused(client: TestClient, headers: dict[str, str]) -> dict[str, bool | None]:
    versions = client.get("/api/tree/versions", headers=headers).json()
    return versions[0]["stats"]["cross_validation_reused"]


def _file_one(
    client: TestClient, user: dict, headers: dict[str, str], index: int = 0
) -> tuple[int, int]:
    """The person files new document ``index`` of the first folder in it (18 filed: a
    change of 1/18); its id and the folder's."""
    folders = {f["name"]: f["id"] for f in client.get("/api/folders", headers=headers).json()}
    folder, ids = next(iter(sorted(user["new"].items())))
    moved = client.patch(
        f"/api/documents/{ids[index]}", headers=headers, json={"folder_id": folders[folder]}
    )
    assert moved.status_code == 200, moved.text
    return ids[index], folders[folder]


def test_a_recluster_after_a_move_reuses_the_cross_validation(
    client: TestClient, rt: Runtime, worker: EmbeddedWorker
) -> None:
    alice = seed_small(rt, "alice")
    headers = alice["headers"]
    recluster(client, headers)
    assert _reused(client, headers) == {"placement": False, "self_label": False}
    _file_one(client, alice, headers)
    recluster(client, headers)
    assert _reused(client, headers) == {"placement": True, "self_label": True}
    # The moved document is filed and stays where the person put it.
    tree = client.get("/api/tree/extended", headers=headers).json()
    moved = next(iter(sorted(alice["new"].items())))[1][0]
    assert moved not in {p["document_id"] for p in tree["placements"]}

    rt.options = fast_options(cv_reuse=False)
    recluster(client, headers)
    assert _reused(client, headers) == {"placement": False, "self_label": False}


def test_an_unreadable_stored_state_means_a_fresh_cross_validation(
    client: TestClient, rt: Runtime, worker: EmbeddedWorker
) -> None:
    alice = seed_small(rt, "alice")
    headers = alice["headers"]
    recluster(client, headers)
    with rt.sessions() as session:
        session.execute(
            update(PlacementModel)
            .where(PlacementModel.user_id == alice["user_id"])
            .values(npz=b"PK\x03\x04 damaged")
        )
        session.commit()
    job = recluster(client, headers)
    assert job["state"] == "done"
    assert _reused(client, headers) == {"placement": False, "self_label": False}


def test_filings_beyond_the_training_samples_still_refresh_the_cross_validation(
    client: TestClient, rt: Runtime, worker: EmbeddedWorker
) -> None:
    """With full training samples (3 per folder here) new filings leave every labeled count
    as it was; the service still cross-validates afresh once the filed documents grew by
    more than the allowed change since the state was estimated."""
    rt.options = fast_options(train_per_folder=3)
    alice = seed_small(rt, "alice")
    headers = alice["headers"]
    recluster(client, headers)
    versions = client.get("/api/tree/versions", headers=headers).json()
    assert versions[0]["stats"]["cv_filed_total"] == {"placement": 18, "self_label": 18}

    def file_more(per_folder: int) -> None:
        # Copies of the folders' own pages, a line longer so that they are new documents.
        entries = [
            Entry((folder,), f"more-{f.name}", f.read_bytes() + b"\nSee also the index.")
            for folder in sorted(SMALL_FILED)
            for f in corpus_files(folder)[:per_folder]
        ]
        with rt.sessions() as session:
            user = session.get(User, alice["user_id"])
            import_listing(session=session, user=user, listing=Listing(entries=entries))
            session.commit()

    file_more(per_folder=0)  # nothing: the same counts
    recluster(client, headers)
    assert _reused(client, headers) == {"placement": True, "self_label": True}
    file_more(per_folder=1)  # 18 -> 21 filed, +17% > 10%
    recluster(client, headers)
    assert _reused(client, headers) == {"placement": False, "self_label": False}
    versions = client.get("/api/tree/versions", headers=headers).json()
    assert versions[0]["stats"]["cv_filed_total"] == {"placement": 21, "self_label": 21}
    # Every folder's training sample was full before and after: the core alone would reuse.
    assert (
        versions[0]["stats"]["placement_training"]
        == versions[1]["stats"]["placement_training"]
        == 9
    )


def _models(rt: Runtime, user_id: int) -> list:
    """The user's stored placement models, oldest first."""
    with rt.sessions() as session:
        archives = session.scalars(
            select(PlacementModel.npz)
            .where(PlacementModel.user_id == user_id)
            .order_by(PlacementModel.version_id)
        ).all()
    return [load_model(bytes(a)) for a in archives]


def _coef(rt: Runtime, user_id: int) -> list:
    """Coefficients of the user's stored placement models, oldest first."""
    return [model.placement.coef_ for model in _models(rt, user_id)]


def test_a_recluster_after_new_documents_alone_keeps_the_placement_model(
    client: TestClient, rt: Runtime, worker: EmbeddedWorker
) -> None:
    """Same training documents, folders, texts and moves: the previous version's model is
    kept, not fitted again; a move changes the training, and the model is fitted anew."""
    alice = seed_small(rt, "alice")
    headers = alice["headers"]
    recluster(client, headers)
    text = corpus_files("python-howtos")[-1].read_text()
    posted = client.post("/api/documents", json={"text": text}, headers=headers)
    assert posted.status_code == 201, posted.text
    recluster(client, headers)
    versions = client.get("/api/tree/versions", headers=headers).json()
    assert [v["stats"]["placement_model_kept"] for v in versions[:2]] == [True, False]
    assert versions[0]["stats"]["placement_key"] == versions[1]["stats"]["placement_key"]
    coef = _coef(rt, alice["user_id"])
    np.testing.assert_array_equal(coef[-1], coef[-2])
    tree = client.get("/api/tree/extended", headers=headers).json()
    assert posted.json()["document"]["id"] in {p["document_id"] for p in tree["placements"]}

    _file_one(client, alice, headers)
    recluster(client, headers)
    versions = client.get("/api/tree/versions", headers=headers).json()
    assert versions[0]["stats"]["placement_model_kept"] is False
    assert versions[0]["stats"]["placement_key"] != versions[1]["stats"]["placement_key"]

    rt.options = fast_options(placement_reuse=False)
    recluster(client, headers)  # nothing changed, but keeping is off
    versions = client.get("/api/tree/versions", headers=headers).json()
    assert versions[0]["stats"]["placement_model_kept"] is False
    assert versions[0]["stats"]["placement_key"] == versions[1]["stats"]["placement_key"]


def test_a_kept_model_gives_the_dendrogram_the_features_a_fresh_fit_gives(
    client: TestClient, rt: Runtime, worker: EmbeddedWorker
) -> None:
    """With a kept model only the dendrogram's rows are analysed, by the model's own
    features; they equal the rows of the placement features fitted afresh."""
    alice = seed_small(rt, "alice")
    headers = alice["headers"]
    recluster(client, headers)
    text = corpus_files("python-howtos")[-1].read_text()
    assert client.post("/api/documents", json={"text": text}, headers=headers).status_code == 201

    def inputs(**options: Any) -> ReclusterInput:
        with rt.sessions() as session:
            return load_inputs(
                session=session,
                user_id=alice["user_id"],
                # Fewer exemplars than filed documents: the rest only train the model.
                options=fast_options(exemplars_nearest=2, exemplars_random=0, **options),
                seed=alice["user_id"],
            )

    kept, fresh = inputs(), inputs(placement_reuse=False)
    assert kept.kept_model is not None and fresh.kept_model is None
    assert kept.rows == fresh.rows
    assert kept.X_place is not None and fresh.X_place is not None
    assert kept.X_place.shape == fresh.X_place.shape
    assert (kept.X_place[kept.rows] != fresh.X_place[fresh.rows]).nnz == 0
    others = sorted(set(range(kept.X_place.shape[0])) - set(kept.rows))
    assert others and kept.X_place[others].nnz == 0  # the training rows are not analysed
    assert list(kept.place_features.terms_) == list(fresh.place_features.terms_)


def test_above_the_update_size_a_few_filings_keep_the_model(
    client: TestClient, rt: Runtime, worker: EmbeddedWorker
) -> None:
    """Where a fit is costly (``placement_update_min_pairs``, lowered here), a recluster
    after a filing keeps the model fitted before it; a folder changed by more than
    ``FOLDER_MAX_CHANGE``, or the training by more than ``placement_update_max_share``,
    makes a fit anew."""
    rt.options = fast_options(placement_update_min_pairs=0, placement_update_max_share=1.0)
    alice = seed_small(rt, "alice")
    headers = alice["headers"]
    recluster(client, headers)

    def stats() -> dict[str, Any]:
        return client.get("/api/tree/versions", headers=headers).json()[0]["stats"]

    doc_id, _ = _file_one(client, alice, headers)  # 1 of its folder's 7 changed: 14% <= 20%
    recluster(client, headers)
    assert (stats()["placement_model_kept"], stats()["placement_changes_since_fit"]) == (True, 1)
    first, second = _models(rt, alice["user_id"])
    np.testing.assert_array_equal(second.placement.coef_, first.placement.coef_)
    assert first.training is not None and second.training is not None
    assert doc_id not in second.training.ids  # the record is still the fit's
    np.testing.assert_array_equal(second.training.digests, first.training.digests)

    _file_one(client, alice, headers, index=1)  # 2 of 8: over 20% of the folder
    recluster(client, headers)
    assert (stats()["placement_model_kept"], stats()["placement_changes_since_fit"]) == (False, 0)
    third = _models(rt, alice["user_id"])[-1]
    assert third.training is not None and doc_id in third.training.ids

    rt.options = fast_options(placement_update_min_pairs=0, placement_update_max_share=0.01)
    folders = {f["name"]: f["id"] for f in client.get("/api/folders", headers=headers).json()}
    folder = sorted(SMALL_FILED)[-1]  # another folder than the first's
    filed = client.patch(
        f"/api/documents/{alice['new'][folder][0]}",
        headers=headers,
        json={"folder_id": folders[folder]},
    )
    assert filed.status_code == 200, filed.text
    recluster(client, headers)  # 1 of 21 changed: over 1% of the training
    assert stats()["placement_model_kept"] is False


def test_a_training_record_names_what_changed() -> None:
    def record(pairs: dict[int, int]) -> TrainingRecord:
        ids = np.array(sorted(pairs), dtype=np.int64)
        digests = np.array([pairs[d] for d in sorted(pairs)], dtype=np.uint64)
        return TrainingRecord(ids, digests, "ab" * 32)

    earlier = record({1: 10, 2: 20, 3: 30})
    now = record({1: 10, 2: 21, 4: 40})  # 2 refiled, 3 removed, 4 added
    assert now.changed_since(earlier) == ([2, 4], 1)
    assert earlier.changed_since(earlier) == ([], 0)
    back = TrainingRecord.from_arrays(now.to_arrays())
    assert back.settings == now.settings
    np.testing.assert_array_equal(back.digests, now.digests)
    # What a model given new folders' SVMs learned from: those documents as they are now.
    taken = earlier.with_documents(now, [2, 4])
    assert (taken.ids.tolist(), taken.digests.tolist()) == ([1, 2, 3, 4], [10, 21, 30, 40])
    assert now.changed_since(taken) == ([], 1)


def test_above_the_update_size_a_new_folder_gets_its_svm_added_to_the_kept_model(
    client: TestClient, rt: Runtime, worker: EmbeddedWorker
) -> None:
    """A folder created since the fit (here: made, three new documents filed in it and one
    filed document moved in) does not make a fit anew where a fit is costly: the recluster
    adds the folder's SVM to the kept model, and the record takes the documents new to the
    training as they are; the moved one keeps its entry."""
    rt.options = fast_options(placement_update_min_pairs=0, placement_update_max_share=1.0)
    alice = seed_small(rt, "alice")
    headers = alice["headers"]
    recluster(client, headers)
    made = client.post("/api/folders", headers=headers, json={"name": "asyncio"})
    assert made.status_code == 201, made.text
    asyncio = next(ids for folder, ids in alice["new"].items() if "asyncio" in folder)
    first_training = _models(rt, alice["user_id"])[0].training
    assert first_training is not None
    moved_in = int(first_training.ids[0])  # a filed document the model trained on
    for doc_id in [*asyncio[:3], moved_in]:
        filed = client.patch(
            f"/api/documents/{doc_id}", headers=headers, json={"folder_id": made.json()["id"]}
        )
        assert filed.status_code == 200, filed.text
    recluster(client, headers)

    stats = client.get("/api/tree/versions", headers=headers).json()[0]["stats"]
    assert stats["placement_model_kept"] is True
    assert (stats["placement_folders_added"], stats["placement_changes_since_fit"]) == (1, 4)
    first, second = _models(rt, alice["user_id"])
    new = [f for f in second.placement.folders_ if f not in first.placement.folders_]
    assert [f[-1] for f in new] == [str(made.json()["id"])]
    old = [second.placement.folders_.index(f) for f in first.placement.folders_]
    np.testing.assert_array_equal(second.placement.coef_[old], first.placement.coef_)
    assert first.training is not None and second.training is not None
    assert set(asyncio[:3]) <= set(second.training.ids.tolist())
    assert not set(asyncio[:3]) & set(first.training.ids.tolist())
    # The document moved in keeps the fit's entry: its old folder's SVM learned it there.
    assert second.training.digests[0] == first.training.digests[0]

    recluster(client, headers)  # nothing changed: the extended model is kept as it is
    stats = client.get("/api/tree/versions", headers=headers).json()[0]["stats"]
    assert (stats["placement_model_kept"], stats["placement_folders_added"]) == (True, 0)
    third = _models(rt, alice["user_id"])[-1]
    np.testing.assert_array_equal(third.placement.coef_, second.placement.coef_)


def test_above_the_update_size_a_folder_deleted_or_moved_loses_its_svm(
    client: TestClient, rt: Runtime, worker: EmbeddedWorker
) -> None:
    """A folder deleted since the fit (its documents unfiled) is gone from the next tree even
    where a fit is costly and the model is kept: its SVM is removed, so that no document is
    placed in it (before, the kept model served the deleted folder's id)."""
    rt.options = fast_options(placement_update_min_pairs=0, placement_update_max_share=1.0)
    alice = seed_small(rt, "alice")
    headers = alice["headers"]
    recluster(client, headers)
    folders = {f["name"]: f["id"] for f in client.get("/api/folders", headers=headers).json()}
    gone = folders["what-s-new-in-python"]
    deleted = client.delete(f"/api/folders/{gone}", headers=headers)
    assert deleted.status_code in (200, 204), deleted.text
    recluster(client, headers)

    stats = client.get("/api/tree/versions", headers=headers).json()[0]["stats"]
    assert stats["placement_model_kept"] is True
    assert stats["placement_folders_removed"] == 1
    first, second = _models(rt, alice["user_id"])
    assert [f[-1] for f in first.placement.folders_ if f not in second.placement.folders_] == [
        str(gone)
    ]
    tree = client.get("/api/tree/extended", headers=headers).json()
    placed = {p["document_id"]: p for p in tree["placements"]}
    assert deleted.json()["documents_unfiled"] == SMALL_FILED["what-s-new-in-python"]
    live = set(folders.values()) - {gone}
    for p in placed.values():
        assert {p["best_folder_id"], p["confident_folder_id"]} <= live | {None}
        assert p["folder_id"] in live or isinstance(p["folder_id"], str)
    assert gone not in {f["id"] for f in tree["folders"]}

    # A folder moved under another changes its path: the old path's SVM goes, the new
    # one's is added, and the folder is served once, under its new parent.
    moved, parent = folders["python-howtos"], folders["the-python-tutorial"]
    patched = client.patch(f"/api/folders/{moved}", headers=headers, json={"parent_id": parent})
    assert patched.status_code == 200, patched.text
    recluster(client, headers)
    stats = client.get("/api/tree/versions", headers=headers).json()[0]["stats"]
    assert stats["placement_model_kept"] is True
    assert (stats["placement_folders_added"], stats["placement_folders_removed"]) == (1, 1)
    third = _models(rt, alice["user_id"])[-1]
    assert sum(f[-1] == str(moved) for f in third.placement.folders_) == 1


def test_the_service_keeps_placements_by_the_cores_margin_unless_told_otherwise(
    monkeypatch: Any,
) -> None:
    """``FOLDWISE_RECLUSTER_KEEP_MARGIN`` unset is the core's ``KEEP_MARGIN`` (the settings
    restate it so that reading them imports no numpy); set, it is the value given."""
    monkeypatch.delenv("FOLDWISE_RECLUSTER_KEEP_MARGIN", raising=False)
    assert ReclusterSettings().keep_margin == KEEP_MARGIN
    monkeypatch.setenv("FOLDWISE_RECLUSTER_KEEP_MARGIN", "0.25")
    assert ReclusterSettings().keep_margin == 0.25


def test_a_placement_stays_while_the_model_is_less_sure_of_another_folder(
    client: TestClient, rt: Runtime, worker: EmbeddedWorker
) -> None:
    """The recluster reads the folder and the confidence the newest tree showed each new
    document with. A document shown in its runner-up folder at confidence 1 stays there
    (the model is less sure of its best folder), also on the next recluster with no new
    input; shown there at 0, it goes to the best folder, which is more than
    ``keep_margin`` ahead (docs/placement.md, "Placements that stay")."""
    alice = seed_small(rt, "alice")
    headers = alice["headers"]
    recluster(client, headers)
    with rt.sessions() as session:
        rows = session.scalars(select(TreePlacement).where(TreePlacement.folder_id.is_not(None)))
        far = next(
            pl
            for pl in rows
            if pl.margin is not None
            and pl.margin > 0.2
            and pl.runner_up_folder_id not in (None, pl.folder_id)
            # Where the model is less sure of it than not, it would stay in either case.
            and pl.confidence >= MIN_MOVE_CONFIDENCE
        )
        document, best, runner_up = far.document_id, far.folder_id, far.runner_up_folder_id

    def shown_after(confidence: float) -> int | None:
        with rt.sessions() as session:
            newest = latest_version(session=session, user_id=alice["user_id"])
            session.execute(
                update(TreePlacement)
                .where(
                    TreePlacement.version_id == newest.id,
                    TreePlacement.document_id == document,
                )
                .values(folder_id=runner_up, confidence=confidence, kept_confidence=None)
            )
            session.commit()
            inputs = load_inputs(
                session=session, user_id=alice["user_id"], options=rt.options, seed=0
            )
            assert inputs.previous_folder_of[document] == runner_up
            assert inputs.previous_confidence_of[document] == confidence
        return shown_now()

    def shown_now() -> int | None:
        recluster(client, headers)
        tree = client.get("/api/tree/extended", headers=headers).json()
        return next(p["folder_id"] for p in tree["placements"] if p["document_id"] == document)

    assert shown_after(1.0) == runner_up
    # It shows its own, lower confidence there, and keeps the one it is compared with.
    with rt.sessions() as session:
        newest = latest_version(session=session, user_id=alice["user_id"])
        kept = session.scalars(
            select(TreePlacement).where(
                TreePlacement.version_id == newest.id, TreePlacement.document_id == document
            )
        ).one()
        assert kept.kept_confidence == 1.0 and kept.confidence < 1.0
    assert shown_now() == runner_up
    assert shown_after(0.0) == best


def test_the_next_recluster_reads_the_previous_representation_naive_bayes_included(
    client: TestClient, rt: Runtime, worker: EmbeddedWorker
) -> None:
    """The newest version's placement representation is the next fit's previous one, so
    that a near tie keeps it; "plain+nb" (docs/placement.md, "Naive Bayes beside the
    SVMs") as much as the other two, and a value the core does not know as none."""
    alice = seed_small(rt, "alice")
    recluster(client, alice["headers"])

    def previous_after(stored: str) -> str | None:
        with rt.sessions() as session:
            newest = latest_version(session=session, user_id=alice["user_id"])
            newest.stats = {**(newest.stats or {}), "placement_representation": stored}
            session.commit()
            inputs = load_inputs(
                session=session, user_id=alice["user_id"], options=rt.options, seed=0
            )
            return inputs.previous_representation

    assert previous_after("plain+nb") == "plain+nb"
    assert previous_after("plain") == "plain"
    assert previous_after("dense") is None
