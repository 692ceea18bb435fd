"""Seeded, deterministic reclusters: the same documents give the same model bit for bit,
although its SVMs are fitted on two threads beside the estimator (``n_jobs`` 2, the
service's default; docs/placement.md, "Deterministic fits")."""

from __future__ import annotations

import numpy as np
from fastapi.testclient import TestClient
from sqlalchemy import select

from foldwise.service.queue import EmbeddedWorker
from foldwise.service.recluster.jobs.runtime import Runtime
from foldwise.service.recluster.stored_model import load_model
from foldwise.service.recluster.tree.models import PlacementModel

from .recluster_support import fast_options, recluster, rt, seed_small, worker

__all__ = ["rt", "worker"]


def test_two_people_with_the_same_documents_get_the_same_model_and_confidences(
    client: TestClient, rt: Runtime, worker: EmbeddedWorker
) -> None:
    rt.options = fast_options(n_jobs=2)
    people = [seed_small(rt, name) for name in ("alice", "bob")]
    models, confidences = [], []
    for person in people:
        recluster(client, person["headers"])
        with rt.sessions() as session:
            npz = session.scalar(
                select(PlacementModel.npz).where(PlacementModel.user_id == person["user_id"])
            )
        models.append(load_model(npz).placement)
        tree = client.get("/api/tree/extended", headers=person["headers"]).json()
        # Document ids differ by person; both posted the same texts in the same order.
        by_id = sorted(tree["placements"], key=lambda p: p["document_id"])
        confidences.append([p["confidence"] for p in by_id])

    first, second = models
    for name in ("coef_", "intercept_", "temperature_", "calibration_x_", "novelty_coef_"):
        np.testing.assert_array_equal(getattr(second, name), getattr(first, name), name)
    assert confidences[0] == confidences[1]
