import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.cluster.hierarchy import is_valid_linkage, linkage
from scipy.spatial.distance import pdist, squareform

from foldwise.core import (
    Constraints,
    Hierarchy,
    TripleSet,
    cosine_distances,
    hac_linkage,
    ihac_from_distances,
    ihac_linkage,
)
from foldwise.core.constraints._constraints import triple_holds
from foldwise.core.hac._ihac import unit_rows


def _random_docs(rng, n, f=40):
    X = sp.random(n, f, density=0.3, random_state=rng, format="csr", dtype=np.float64)
    dense = np.abs(X.toarray())
    dense[0] = 0  # a document with no usable term
    return sp.csr_matrix(dense)


def _same_merges(Za, Zb, dist):
    """Same merge sets in the same order, except where distances tie."""
    assert np.allclose(Za[:, 2], Zb[:, 2], atol=1e-9)
    for k in range(len(Za)):
        if tuple(Za[k, :2]) != tuple(Zb[k, :2]):
            ties = np.isclose(Za[:, 2], Za[k, 2], atol=1e-9).sum()
            assert ties > 1, f"merge {k} differs without a tie: {Za[k]} vs {Zb[k]}"


@pytest.mark.parametrize("seed", range(8))
def test_unconstrained_ihac_reproduces_scipy_average_linkage(seed):
    rng = np.random.default_rng(seed)
    X = _random_docs(rng, int(rng.integers(3, 80)))
    D = cosine_distances(X, dtype=np.float64)
    reference = linkage(squareform(D, checks=False), method="average")
    Z, violated = ihac_from_distances(D.copy())
    assert is_valid_linkage(Z)
    assert not violated.any()
    _same_merges(Z, reference, D)


def test_hac_linkage_on_points_matches_scipy_exactly():
    rng = np.random.default_rng(1)
    P = rng.normal(size=(50, 4))
    D = squareform(pdist(P))
    Z, _ = ihac_from_distances(D.copy())
    assert np.array_equal(Z[:, :2], linkage(pdist(P), method="average")[:, :2])


def _hierarchy_triples(paths):
    labeled = [i for i, p in enumerate(paths) if p is not None]
    h = Hierarchy.from_paths([paths[i] for i in labeled])
    for x, y, z in itertools.permutations(range(len(labeled)), 3):
        if triple_holds(h, (x, y, z)):
            yield labeled[x], labeled[y], labeled[z]


@pytest.mark.parametrize("seed", range(6))
def test_ihac_with_folder_labels_violates_no_implied_triple(seed):
    rng = np.random.default_rng(seed)
    n = 30
    X = _random_docs(rng, n)
    folders = [("a",), ("a", "b"), ("a", "c"), ("d",), ("d", "e"), ("d", "e", "f")]
    paths = [folders[k] if rng.random() < 0.5 else None for k in rng.integers(0, 6, n)]
    Z, violated = ihac_linkage(X, labels=paths)
    assert not violated.any()
    dendrogram = Hierarchy.from_linkage(Z)
    broken = [t for t in _hierarchy_triples(paths) if not triple_holds(dendrogram, t)]
    assert broken == []
    # and the constraints changed something: plain HAC on the same data breaks some of them
    assert is_valid_linkage(Z)
    plain = Hierarchy.from_linkage(hac_linkage(X))
    assert [t for t in _hierarchy_triples(paths) if not triple_holds(plain, t)] != []


def test_greedy_dead_end_of_001_fig9_is_avoided_by_lookahead():
    # ab|c and cd|a with b, d closest: merging b+d first leaves no admissible merge.
    P = np.array([[0.0, 0.0], [3.0, 0.0], [6.5, 0.0], [3.2, 0.0]])  # a, b, c, d
    D = squareform(pdist(P))
    triples = TripleSet([(0, 1, 2), (2, 3, 0)])
    Z, violated = ihac_from_distances(D.copy(), Constraints(4, None, triples))
    assert not violated.any()
    assert triples.violated_by(Hierarchy.from_linkage(Z)) == []


@pytest.mark.parametrize("seed", range(30))
def test_random_consistent_triples_give_violation_free_dendrograms(seed):
    """Triples taken from a random tree are consistent, so no merge may violate one."""
    rng = np.random.default_rng(seed)
    n = 12
    paths = [tuple(rng.integers(0, 2, size=rng.integers(1, 4)).astype(str)) for _ in range(n)]
    truth = Hierarchy.from_paths(paths)
    candidates = [t for t in itertools.permutations(range(n), 3) if triple_holds(truth, t)]
    picked = [candidates[k] for k in rng.choice(len(candidates), size=6, replace=False)]
    triples = TripleSet(picked)
    D = squareform(pdist(rng.normal(size=(n, 2))))
    Z, violated = ihac_from_distances(D.copy(), Constraints(n, None, triples))
    assert not violated.any()
    assert triples.violated_by(Hierarchy.from_linkage(Z)) == []


def test_conflict_between_folders_and_triples_falls_back_to_fewest_violations():
    # Folders say 0 and 1 belong together apart from 2; the triple says 0 is closer to 2.
    X = np.eye(3) + 0.1
    labels = [("a",), ("a",), ("b",)]
    Z, violated = ihac_linkage(X, labels=labels, triples=[(0, 2, 1)])
    assert is_valid_linkage(Z)
    # Merging {0, 1} first breaks only the explicit triple; {0, 2} would break both folder
    # triples (0, 1, 2) and (1, 0, 2), {1, 2} all three. The fewest is one: {0, 1} first.
    assert sorted(Z[0, :2].astype(int).tolist()) == [0, 1]
    dendrogram = Hierarchy.from_linkage(Z)
    broken = [t for t in [(0, 2, 1), (0, 1, 2), (1, 0, 2)] if not triple_holds(dendrogram, t)]
    assert broken == [(0, 2, 1)]
    assert violated.sum() == 1


def test_too_few_documents_is_a_clear_error():
    with pytest.raises(ValueError, match="at least 2"):
        hac_linkage(np.ones((1, 3)))


@pytest.mark.parametrize("seed", range(40))
def test_folders_and_triples_from_one_tree_never_dead_end(seed):
    """Folder labels and explicit triples that come from the same tree are jointly
    satisfiable, so iHAC must not need the fewest-violations fallback."""
    rng = np.random.default_rng(100 + seed)
    n = 16
    paths = [tuple(rng.integers(0, 2, size=rng.integers(1, 4)).astype(str)) for _ in range(n)]
    truth = Hierarchy.from_paths(paths)
    labels = [p if rng.random() < 0.4 else None for p in paths]
    candidates = [t for t in itertools.permutations(range(n), 3) if triple_holds(truth, t)]
    picked = [candidates[k] for k in rng.choice(len(candidates), size=8, replace=False)]
    D = squareform(pdist(rng.normal(size=(n, 2))))
    constraints = Constraints.build(n, labels, picked)
    Z, violated = ihac_from_distances(D.copy(), constraints)
    assert not violated.any()
    assert constraints.triples.violated_by(Hierarchy.from_linkage(Z)) == []


def test_non_finite_distances_are_refused():
    D = np.zeros((3, 3))
    D[2, 1] = np.nan
    with pytest.raises(ValueError, match="finite"):
        ihac_from_distances(D)


@pytest.mark.parametrize("block_rows", [1, 7, 1024])
def test_sparse_cosine_distances_equal_scipys_for_any_block_size(block_rows):
    """Oracle: scipy's cosine distances; the sparse path fills the lower triangle from the
    upper one block by block, which must give a symmetric matrix with every entry set."""
    rng = np.random.default_rng(4)
    X = _random_docs(rng, 30)
    D = cosine_distances(X, dtype=np.float64, block_rows=block_rows)
    dense = X.toarray()
    used = dense.any(axis=1)
    reference = squareform(pdist(dense[used], metric="cosine"))
    np.testing.assert_allclose(D[np.ix_(used, used)], reference, atol=1e-6)  # float32 rows
    np.testing.assert_array_equal(D, D.T)
    assert np.all(np.diag(D) == 0)
    # The same bits as one full sparse product (what it computed before the mirroring).
    U = sp.csr_matrix(unit_rows(X, np.ones(X.shape[1])))
    full = np.clip(1.0 - (U @ U.T).toarray().astype(np.float64), 0.0, 2.0)
    np.fill_diagonal(full, 0.0)
    np.testing.assert_array_equal(D, full)
