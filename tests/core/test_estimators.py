"""The core's registry: every hierarchy builder is made by name and fitted the same way."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.cluster.hierarchy import is_valid_linkage

from foldwise import core


def _documents() -> tuple[np.ndarray, list[tuple[str, ...] | None]]:
    rng = np.random.default_rng(0)
    topics = np.repeat(np.eye(3), 6, axis=0) * 5 + rng.random((18, 3))
    X = np.hstack([topics, rng.random((18, 5))])
    y: list[tuple[str, ...] | None] = [("a",)] * 4 + [None] * 2 + [("b",)] * 4 + [None] * 2
    y += [("a", "c")] * 4 + [None] * 2
    return X, y


@pytest.mark.parametrize("method", sorted(core.ESTIMATORS))
def test_every_registered_estimator_fits_as_fit_x_y_triples(method: str) -> None:
    X, y = _documents()
    params = {"r_max": 3} if method in ("bihac", "biihac") else {}
    estimator = core.ESTIMATORS[method](**params)
    triples = [(4, 5, 10)]  # documents 4 and 5 merge before either meets 10
    assert estimator.fit(X, y, triples) is estimator
    Z = np.asarray(estimator.linkage_)
    assert Z.shape == (len(y) - 1, 4) and is_valid_linkage(Z)
    assert estimator.ignores_triples is (method in ("hac", "divisive", "ggm"))


def test_the_registry_holds_the_papers_methods() -> None:
    assert set(core.ESTIMATORS) == {"hac", "ihac", "bihac", "biihac", "divisive", "ggm"}
    assert core.ESTIMATORS["biihac"] is core.BiiHAC
