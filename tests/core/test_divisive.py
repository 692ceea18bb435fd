import warnings

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, is_monotonic, is_valid_linkage, linkage
from scipy.spatial.distance import pdist, squareform
from sklearn.metrics import adjusted_rand_score

from foldwise.core import (
    ConstrainedDivisive,
    close_constraints,
    constrained_divisive_tree,
    corrected_rand_index,
    cut_at_level,
    divisive_stability,
    folder_level_partition,
    partition_constraints,
    rand_index,
)
from foldwise.core.divisive._divisive_stability import _pair_agreements


def three_blobs(seed=0, n=10, centers=((0, 0), (4, 0), (2, 3.4)), sd=0.6):
    """002 sec. 4.1: three 2-D Gaussian clusters a, b, c (Fig. 4)."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(c, sd, size=(n, 2)) for c in centers])
    return X, np.repeat(np.arange(len(centers)), n)


def naive_diana(D):
    """Textbook splinter-group divisive clustering; partitions after each split."""
    clusters = [list(range(D.shape[0]))]
    partitions = []
    while any(len(c) > 1 for c in clusters):
        c = max(clusters, key=lambda c: D[np.ix_(c, c)].max())
        clusters.remove(c)
        avg = [D[i, c].sum() / (len(c) - 1) for i in c]
        S = [c[int(np.argmax(avg))]]
        R = [i for i in c if i not in S]
        while len(R) > 1:
            diff = [D[i, R].sum() / (len(R) - 1) - D[i, S].mean() for i in R]
            h = int(np.argmax(diff))
            if diff[h] <= 0:
                break
            S.append(R.pop(h))
        clusters += [S, R]
        partitions.append({frozenset(x) for x in clusters})
    return partitions


def as_sets(labels):
    return {frozenset(np.flatnonzero(labels == k).tolist()) for k in np.unique(labels)}


def test_unconstrained_tree_matches_textbook_diana_at_every_level():
    rng = np.random.default_rng(3)
    D = squareform(pdist(rng.normal(size=(14, 3))))
    Z = constrained_divisive_tree(D)
    assert is_valid_linkage(Z) and is_monotonic(Z)
    for level, expected in enumerate(naive_diana(D), start=1):
        assert as_sets(cut_at_level(Z, level)) == expected


def test_three_blobs_found_at_level_two():
    X, blob = three_blobs()
    model = ConstrainedDivisive(metric="euclidean").fit(X)
    assert model.linkage_.shape == (29, 4)
    assert adjusted_rand_score(blob, cut_at_level(model.linkage_, 2)) == 1.0


def test_cut_at_level_agrees_with_fcluster_on_agglomerative_tree():
    rng = np.random.default_rng(0)
    Z = linkage(rng.normal(size=(20, 2)), method="average")
    for level in range(0, 19):
        expected = fcluster(Z, level + 1, criterion="maxclust")
        assert adjusted_rand_score(expected, cut_at_level(Z, level)) == 1.0


def test_folder_constraints_decide_first_split_only():
    # unconstrained, a|bc or ab|c depends on the sample; folders say {a, b} | {c}
    X, blob = three_blobs(seed=1)
    y = [("ab", "a" if b == 0 else "b") if b < 2 else ("c",) for b in blob]
    model = ConstrainedDivisive(level=1, metric="euclidean").fit(X, y)
    assert model.constrained_levels_ == (1,)
    assert adjusted_rand_score(blob >= 2, cut_at_level(model.linkage_, 1)) == 1.0
    # level 2 is unconstrained and separates a from b
    assert adjusted_rand_score(blob, cut_at_level(model.linkage_, 2)) == 1.0
    # with a third of the documents labeled, no labeled pair is split against its folder
    partial = [p if i % 3 == 0 else None for i, p in enumerate(y)]
    first = cut_at_level(ConstrainedDivisive(metric="euclidean").fit(X, partial).linkage_, 1)
    labeled = np.arange(0, len(X), 3)
    same_folder = (blob[labeled, None] >= 2) == (blob[None, labeled] >= 2)
    assert np.array_equal(first[labeled, None] == first[None, labeled], same_folder)


def test_must_links_move_together_and_cannot_links_hold_on_their_level():
    X, _ = three_blobs(seed=2)
    # must-link a document of c with one of a; cannot-link two documents of b
    ml, cl = [(0, 25)], [(10, 11)]
    model = ConstrainedDivisive(must_link=ml, cannot_link=cl, metric="euclidean").fit(X)
    first = cut_at_level(model.linkage_, 1)
    assert first[0] == first[25]
    assert first[10] != first[11]


def test_each_constraint_set_is_used_only_at_its_level():
    X, _ = three_blobs(seed=0)
    plain = cut_at_level(ConstrainedDivisive(metric="euclidean").fit(X).linkage_, 1)
    # a cannot-link inside one cluster at level 3 leaves the first split alone ...
    model = ConstrainedDivisive(level=(1, 3), cannot_link={3: [(0, 1)]}, metric="euclidean").fit(X)
    assert adjusted_rand_score(plain, cut_at_level(model.linkage_, 1)) == 1.0
    assert model.constrained_levels_ == (3,)
    # ... and, at level 1, a must-link across the plain first split pulls the pair together
    across = (int(np.flatnonzero(plain == 0)[0]), int(np.flatnonzero(plain == 1)[0]))
    model = ConstrainedDivisive(must_link={1: [across]}, metric="euclidean").fit(X)
    first = cut_at_level(model.linkage_, 1)
    assert first[across[0]] == first[across[1]]


def test_folder_level_partition_reads_paths_at_depth():
    paths = [("a", "x"), ("a", "y"), ("b",), None, ("a",)]
    np.testing.assert_array_equal(folder_level_partition(paths, 1), [0, 0, 1, -1, 0])
    # ("b",) and ("a",) sit above depth 2: no block there
    np.testing.assert_array_equal(folder_level_partition(paths, 2), [0, 1, -1, -1, -1])
    with pytest.raises(ValueError, match="level must be >= 1, got 0"):
        folder_level_partition(paths, 0)


def test_partition_constraints_close_to_the_full_pairwise_set():
    labels = np.array([0, 1, 0, -1, 2, 1])
    must, cannot = partition_constraints(labels)
    closed = close_constraints(6, must, cannot)
    comp = closed.component
    for i in range(6):
        for j in range(6):
            if i != j and labels[i] >= 0 and labels[j] >= 0:
                assert (comp[i] == comp[j]) == (labels[i] == labels[j])
                if labels[i] != labels[j]:
                    ri, rj = closed.cannot_row[comp[i]], closed.cannot_row[comp[j]]
                    assert closed.cannot[ri, rj]
    assert closed.cannot_row[comp[3]] == -1


def test_contradictory_or_out_of_range_constraints_raise():
    with pytest.raises(ValueError, match=r"cannot_link \(0, 2\) contradicts"):
        close_constraints(3, must_link=[(0, 1), (1, 2)], cannot_link=[(0, 2)])
    with pytest.raises(ValueError, match=r"must_link pair \(0, 7\) is outside range\(3\)"):
        close_constraints(3, must_link=[(0, 7)])
    with pytest.raises(ValueError, match="needs one level"):
        ConstrainedDivisive(level=(1, 2), must_link=[(0, 1)]).fit(np.eye(3))


def test_degenerate_inputs_warn_or_raise():
    with pytest.raises(ValueError, match="n_samples=1"):
        ConstrainedDivisive().fit(np.ones((1, 3)))
    with pytest.warns(UserWarning, match="distance 0"):
        model = ConstrainedDivisive(metric="euclidean").fit(np.ones((5, 2)))
    assert is_valid_linkage(model.linkage_) and not model.linkage_[:, 2].any()
    X, _ = three_blobs()
    with pytest.warns(UserWarning, match="no labeled document"):
        ConstrainedDivisive(metric="euclidean").fit(X, [None] * len(X))
    # one folder holding every document: the constrained split cannot keep them together
    with pytest.warns(UserWarning, match="every document is in one folder at level 1"):
        model = ConstrainedDivisive(metric="euclidean").fit(X, [("only",)] * len(X))
    assert is_valid_linkage(model.linkage_)
    with pytest.raises(ValueError, match="level must be an int >= 1"):
        ConstrainedDivisive(level=0).fit(X)


def test_sparse_cosine_input():
    from scipy import sparse

    rng = np.random.default_rng(0)
    X = sparse.random(40, 30, density=0.2, random_state=0, format="csr")
    X = X + sparse.csr_matrix(np.repeat(np.eye(2), 20, axis=0) @ rng.random((2, 30)) * 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Z = ConstrainedDivisive().fit(X).linkage_
    assert is_valid_linkage(Z) and is_monotonic(Z)


def test_stability_like_002_table_1():
    # 002 Table 1: constraints from the two-cluster partition make the first split stable
    X, blob = three_blobs(seed=0)
    reference = (blob == 2).astype(int)  # {a, b} | {c}
    kwargs = dict(n_runs=20, levels=(1, 5, 10), random_state=1)
    plain = divisive_stability(X, reference, constraint_fraction=0.0, **kwargs)
    constrained = divisive_stability(X, reference, constraint_fraction=0.05, **kwargs)
    assert plain.reference_corrected_rand < 0.9
    assert constrained.reference_corrected_rand == 1.0
    assert constrained.correct_decisions >= plain.correct_decisions + 10
    assert set(constrained.rand) == {1, 5, 10}
    assert all(0.8 <= v <= 1 for v in constrained.rand.values())


def test_fast_pair_counts_match_the_measures_module():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 3, 30), rng.integers(0, 4, 30)
    agree, total = _pair_agreements(a, b)
    assert agree / total == pytest.approx(rand_index(a, b))
    pairs = np.array([[0, 1], [2, 5], [7, 3]])
    assert corrected_rand_index(a, b, constrained_pairs=pairs) <= 1


def test_stability_rejects_bad_arguments():
    X, blob = three_blobs()
    with pytest.raises(ValueError, match="holdout must be in"):
        divisive_stability(X, blob, holdout=1.5)
    with pytest.raises(ValueError, match="needs a reference"):
        divisive_stability(X, None, constraint_fraction=0.05)


def test_stability_with_folder_paths_and_levels_beyond_the_data():
    X, blob = three_blobs(seed=0, n=4)
    reference = [("ab",) if b < 2 else ("c",) for b in blob]
    result = divisive_stability(
        X, reference, constraint_fraction=0.1, levels=(1, 5, 20), n_runs=5, random_state=0
    )
    assert result.n_runs == 5 and 0 <= result.correct_decisions <= 5
    assert 0.5 <= result.reference_rand <= 1
    assert np.isnan(result.rand[20])  # 11 documents kept: no level 20
    assert not np.isnan(result.rand[5])


def test_precomputed_distances_are_not_modified():
    X, _ = three_blobs(seed=4)
    D = squareform(pdist(X)).astype(np.float32)
    D[0, 0] = 1e-7  # a rounding artefact the estimator zeroes in its own copy
    before = D.copy()
    Z = ConstrainedDivisive(metric="precomputed").fit(D).linkage_
    np.testing.assert_array_equal(D, before)
    Z_euclid = ConstrainedDivisive(metric="euclidean").fit(X).linkage_
    assert adjusted_rand_score(cut_at_level(Z, 2), cut_at_level(Z_euclid, 2)) == 1.0
