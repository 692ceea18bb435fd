import numpy as np
import pytest
import scipy.sparse as sp
from scipy.cluster.hierarchy import is_valid_linkage, linkage
from scipy.spatial.distance import squareform

from foldwise.core import HAC, IHAC, BiHAC, BiiHAC, Hierarchy, adapt_weights, cosine_distances
from foldwise.core.constraints._constraints import Constraints, triple_holds
from foldwise.core.hac import _bihac
from foldwise.core.hac._bihac import _adapt_along, _start_of_run, _training_error, bihac
from foldwise.core.hac._ihac import ihac_from_distances


def _topics(rng, n_per=8, noise_terms=30):
    """Three topics whose terms are weak against shared noise terms, so plain cosine mixes
    them up and the weights have something to learn."""
    blocks = []
    for topic in range(3):
        X = np.zeros((n_per, 12 + noise_terms))
        X[:, topic * 4 : topic * 4 + 4] = rng.uniform(0.2, 0.4, size=(n_per, 4))
        mask = rng.random((n_per, noise_terms)) < 0.3
        X[:, 12:] = rng.uniform(0, 1, size=(n_per, noise_terms)) * mask
        blocks.append(X)
    folders = [(f"t{k // n_per}",) for k in range(3 * n_per)]
    return sp.csr_matrix(np.vstack(blocks)), folders


def test_weight_step_keeps_the_simplex_and_moves_x_toward_y():
    rng = np.random.default_rng(0)
    w = np.ones(6)
    cx, cy, cz = rng.random(6), rng.random(6), rng.random(6)

    def sim(w, a, b):
        return (w * a * b).sum() / np.sqrt((w * a * a).sum() * (w * b * b).sum())

    before = sim(w, cx, cy) - sim(w, cx, cz)
    w2 = adapt_weights(w, cx, cy, cz, eta=0.5)
    assert np.all(w2 >= 0) and np.isclose(w2.sum(), 6)
    assert sim(w2, cx, cy) - sim(w2, cx, cz) > before


def _numpy_weight_step(w, cx, cy, cz, eta):
    """000 eq. 5-7 and eq. 3 as numpy expressions: the oracle of the compiled step."""

    def unit(c):
        norm = np.sqrt(np.dot(w, c * c))
        return c / norm if norm > 0 else c

    ux, uy, uz = unit(cx), unit(cy), unit(cz)
    sim_xy, sim_xz = float(np.dot(w, ux * uy)), float(np.dot(w, ux * uz))
    delta = ux * (uy - uz) - 0.5 * sim_xy * (ux**2 + uy**2) + 0.5 * sim_xz * (ux**2 + uz**2)
    w = np.maximum(w + eta * delta, 0.0)
    return w * (w.size / w.sum())


def test_the_compiled_weight_step_gives_numpys_bits():
    rng = np.random.default_rng(3)
    for n_terms, density in ((7, 1.0), (500, 0.2), (5000, 0.05)):
        w = rng.exponential(size=n_terms)
        w *= n_terms / w.sum()
        cx, cy, cz = (rng.random(n_terms) * (rng.random(n_terms) < density) for _ in range(3))
        if n_terms == 7:
            cz = np.zeros(n_terms)  # a zero centroid keeps its zero "unit" vector
        for eta in (0.5, 5.0):
            got = adapt_weights(w, cx, cy, cz, eta)
            np.testing.assert_array_equal(got, _numpy_weight_step(w, cx, cy, cz, eta))


def test_cluster_sums_are_bincounts_bits():
    rng = np.random.default_rng(4)
    X = sp.random(60, 400, density=0.1, format="csr", random_state=5, dtype=np.float32)
    rows = [int(r) for r in rng.choice(60, size=25, replace=False)]
    expected = np.asarray(X[rows].toarray().astype(np.float64).sum(axis=0))
    got = _bihac._row_sum(X, rows)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    # Entries added in row order, as np.bincount adds them.
    starts = [X.indptr[r] for r in rows]
    pos = np.concatenate([np.arange(a, X.indptr[r + 1]) for a, r in zip(starts, rows, strict=True)])
    oracle = np.bincount(X.indices[pos], weights=X.data[pos], minlength=X.shape[1])
    np.testing.assert_array_equal(got, oracle)


@pytest.mark.parametrize("Est", [IHAC, BiiHAC])
def test_no_labels_reproduces_scipy(Est):
    rng = np.random.default_rng(2)
    X, _ = _topics(rng)
    D = cosine_distances(X, dtype=np.float64)
    reference = linkage(squareform(D, checks=False), method="average")
    Z = Est().fit(X).linkage_
    assert np.allclose(Z[:, 2], reference[:, 2], atol=1e-5)
    differing = [k for k in range(len(Z)) if tuple(Z[k, :2]) != tuple(reference[k, :2])]
    for k in differing:  # only where similarities tie
        assert np.isclose(reference[:, 2], reference[k, 2], atol=1e-6).sum() > 1


def test_bihac_learns_weights_that_lower_the_training_error():
    rng = np.random.default_rng(1)
    X, folders = _topics(rng)
    labels = [f if k % 8 < 3 else None for k, f in enumerate(folders)]
    model = BiHAC(r_max=15).fit(X, labels)
    assert model.weights_.shape == (X.shape[1],)
    assert np.isclose(model.weights_.sum(), X.shape[1]) and (model.weights_ >= 0).all()
    assert min(model.cluster_errors_) < model.cluster_errors_[0]
    # topic terms gained weight over the noise terms
    assert model.weights_[:12].mean() > model.weights_[12:].mean()
    assert is_valid_linkage(model.linkage_)


@pytest.mark.parametrize("beside_from", [0, 10_000])  # every collection, none
@pytest.mark.parametrize("r_ni", [2, 50])
def test_runs_are_those_of_the_paper_one_after_the_other(r_ni, beside_from, monkeypatch):
    """Each run's error is computed beside the start of the next (from
    ``ERROR_BESIDE_MIN_LABELED`` labeled documents): the same runs, errors, weights and
    kept dendrogram as the plain loop of 000 Fig. 5."""
    monkeypatch.setattr(_bihac, "ERROR_BESIDE_MIN_LABELED", beside_from)
    rng = np.random.default_rng(0)
    X, folders = _topics(rng, noise_terms=80)  # errors that wander: patience stops the runs
    labels = [f if k % 8 < 3 else None for k, f in enumerate(folders)]
    result = bihac(X, labels, r_max=12, r_ni=r_ni)

    constraints = Constraints.build(X.shape[0], labels, None)
    w, errors, kept, since_best = np.ones(X.shape[1]), [], None, 0
    for _ in range(12):
        U, D = _start_of_run(X, w)
        Z, _ = ihac_from_distances(D)
        adapted, n_adapt = _adapt_along(X, U, Z, w, constraints, 5.0)
        error = _training_error(Z, constraints, labels)
        if kept is None or error < min(errors):
            kept, since_best = (Z, w.copy()), 0
        else:
            since_best += 1
        errors.append(error)
        if n_adapt == 0 or since_best >= r_ni:
            break
        w = adapted
    assert result.cluster_errors == errors
    np.testing.assert_array_equal(result.linkage, kept[0])
    np.testing.assert_array_equal(result.weights, kept[1])
    # r_ni 2: stopped by patience after a run that adapted (the next run was started, then
    # dropped); r_ni 50: stopped by a run that adapted nothing.
    assert (len(errors), result.adaptations[-1] > 0) == ((8, True) if r_ni == 2 else (10, False))


@pytest.mark.parametrize(("max_pairs_per_n2", "runs"), [(None, 15), (5, 5), (1, 2), (0, 2)])
def test_max_pairs_bounds_the_runs_by_the_square_of_the_collection(max_pairs_per_n2, runs):
    """r_max runs, or max_pairs // n^2 of them, never fewer than 2; the runs made are a
    prefix of the unbounded ones (the same errors)."""
    rng = np.random.default_rng(3)
    X, folders = _topics(rng, noise_terms=60)
    labels = [f if k % 2 == 0 else None for k, f in enumerate(folders)]
    n2 = X.shape[0] ** 2
    unbounded = BiHAC(r_max=15, r_ni=15).fit(X, labels)
    assert unbounded.n_runs_ == 15  # the learning would go on: the bound is what stops it
    max_pairs = None if max_pairs_per_n2 is None else max(max_pairs_per_n2 * n2, 1)
    bounded = BiHAC(r_max=15, r_ni=15, max_pairs=max_pairs).fit(X, labels)
    assert bounded.n_runs_ == runs
    assert bounded.cluster_errors_ == unbounded.cluster_errors_[:runs]
    with pytest.raises(ValueError, match="max_pairs"):
        BiHAC(max_pairs=0).fit(X, labels)


def test_biihac_satisfies_every_folder_triple():
    rng = np.random.default_rng(4)
    X, folders = _topics(rng)
    labels = [f if k % 8 < 3 else None for k, f in enumerate(folders)]
    model = BiiHAC(r_max=5).fit(X, labels)
    tree = Hierarchy.from_linkage(model.linkage_)
    labeled = [k for k, p in enumerate(labels) if p]
    for x in labeled:
        for y in labeled:
            for z in labeled:
                if len({x, y, z}) == 3 and labels[x] == labels[y] != labels[z]:
                    assert triple_holds(tree, (x, y, z))
    assert not model.violations_.any()
    assert HAC().fit(X).linkage_.shape == model.linkage_.shape


@pytest.mark.parametrize("bad", [np.ones((1, 3)), np.array([[np.nan, 1.0], [1.0, 0.0]])])
def test_bad_documents_are_clear_errors(bad):
    with pytest.raises(ValueError):
        BiiHAC().fit(bad)


def test_bad_parameters_name_the_value():
    with pytest.raises(ValueError, match="eta"):
        BiHAC(eta=0).fit(np.eye(3))


def test_zero_vectors_and_identical_documents_give_a_valid_dendrogram():
    X = sp.csr_matrix(np.array([[0, 0, 0], [0, 0, 0], [1, 0, 1], [1, 0, 1], [0, 2, 0]], float))
    labels = [("a",), None, ("a",), ("b",), None]
    model = BiiHAC(r_max=3).fit(X, labels)
    assert is_valid_linkage(model.linkage_)
    assert np.isfinite(model.linkage_).all()


def test_self_labeling_keeps_real_constraints_and_skips_triple_items():
    rng = np.random.default_rng(5)
    X, folders = _topics(rng, n_per=10)
    labels = [f if k % 10 < 3 else None for k, f in enumerate(folders)]
    triples = [(4, 5, 15)]  # new documents of topic 0 closer to each other than to topic 1
    model = BiiHAC(r_max=5, self_label=0.5).fit(X, labels, triples=triples)
    assert model.placement_ is not None
    assert len(model.self_labeled_) > 0
    assert not {4, 5, 15} & set(model.self_labeled_.tolist())
    assert not model.violations_.any()
    tree = Hierarchy.from_linkage(model.linkage_)
    assert triple_holds(tree, (4, 5, 15))
    plain = BiiHAC(r_max=5, self_label=None).fit(X, labels, triples=triples)
    assert plain.placement_ is None and len(plain.self_labeled_) == 0
    with pytest.raises(ValueError, match="self_label"):
        BiiHAC(self_label=1.5).fit(X, labels)


def test_biihac_with_threads_gives_the_same_tree():
    """With n_jobs=2 the self-labeling model is fitted while the weights are learned."""
    rng = np.random.default_rng(4)
    X, folders = _topics(rng)
    labels = [f if i % 3 else None for i, f in enumerate(folders)]
    one = BiiHAC(r_max=5).fit(X, labels)
    two = BiiHAC(r_max=5, n_jobs=2).fit(X, labels)
    np.testing.assert_array_equal(two.linkage_, one.linkage_)
    np.testing.assert_array_equal(two.weights_, one.weights_)
    np.testing.assert_array_equal(two.self_labeled_, one.self_labeled_)


@pytest.mark.parametrize("with_triples", [False, True])
def test_the_partner_search_is_the_first_admissible_cluster_by_similarity(with_triples):
    """Oracle for ``_closest_admissible``: every current cluster tested one at a time in order
    of similarity (stable), the first without violations, replayed along a real linkage."""
    from foldwise.core.constraints import Constraints
    from foldwise.core.hac._bihac import _closest_admissible, _ClusterState, _PartnerSearch
    from foldwise.core.hac._ihac import distances_of_unit_rows, ihac_from_distances

    rng = np.random.default_rng(3)
    X, folders = _topics(rng, n_per=12)
    labels = [f if rng.random() < 0.5 else None for f in folders]
    unlabeled = [i for i, f in enumerate(labels) if f is None]
    triples = [tuple(int(v) for v in rng.choice(unlabeled, 3, replace=False)) for _ in range(15)]
    n = X.shape[0]
    constraints = Constraints.build(n, labels, triples if with_triples else None)
    U = sp.csr_matrix(X.multiply(1 / np.sqrt(X.multiply(X).sum(axis=1))))
    Z, _ = ihac_from_distances(distances_of_unit_rows(U))
    state = _ClusterState(n, constraints)
    search = _PartnerSearch(U, state)

    def similarity(c, k):  # average cosine (000 sec. 3)
        return float((U[state.members[c]] @ U[state.members[k]].T).toarray().mean())

    def reference(c, exclude):
        sims = {k: similarity(c, k) for k in state.members if k not in (c, exclude)}
        for k in sorted(sims, key=lambda k: -sims[k]):  # sorted() is stable
            if state.violations(c, k) == 0:
                return k
        return None

    checked = fallbacks = 0
    for step in range(n - 1):
        a, b = int(Z[step, 0]), int(Z[step, 1])
        if state.violations(a, b):
            for c, other in ((a, b), (b, a)):
                got = _closest_admissible(state, U, search, c, other)
                assert got == reference(c, other)
                checked += 1
                best = max(
                    (k for k in state.members if k not in (c, other)),
                    key=lambda k: similarity(c, k),
                    default=None,
                )
                fallbacks += best is not None and got != best
        state.merge(a, b, n + step, state.violations(a, b) > 0)
    assert checked and fallbacks  # the vectorised fallback was exercised, not only the argmax
