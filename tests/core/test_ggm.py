import warnings

import numpy as np
import pytest
from scipy import sparse
from scipy.cluster.hierarchy import is_monotonic, is_valid_linkage
from scipy.special import softmax
from sklearn.metrics import adjusted_rand_score

from foldwise.core import (
    ProbabilisticHierarchy,
    assign_levels,
    component_linkage,
    cut_at_level,
    document_linkage,
    sample_dependent_clusters,
)
from foldwise.core.probabilistic._ggm_mixture import (
    log_gaussian,
    n_parameters,
    regularize_covariance,
)

# 003 Fig. 2: components 1 and 4 wide, 2 narrower, 3 peaked; priors 0.3, 0.3, 0.1, 0.3
# (the caption's "P(k) = 0.3 for k = 1, 2, 3 and P(3) = 0.1" means k = 1, 2, 4).
# The paper gives no means; these reproduce its table for all three measures.
FIG2_WEIGHTS = np.array([0.3, 0.3, 0.1, 0.3])
FIG2_MEANS = np.array([[0.0, 0.0], [0.0, 8.0], [5.0, 3.0], [3.0, 0.0]])
FIG2_COVS = np.array([np.eye(2) * s**2 for s in (2.0, 1.0, 0.4, 2.0)])

# two groups of two overlapping blobs: the known hierarchy {{0, 1}, {2, 3}}
BLOB_CENTERS = np.array([[0, 0, 0], [2.5, 0, 0], [10, 0, 0], [12.5, 0, 0]], dtype=float)


def blobs(seed, n_per=150, sd=0.7):
    rng = np.random.default_rng(seed)
    blob = np.repeat(np.arange(4), n_per)
    return BLOB_CENTERS[blob] + rng.normal(size=(blob.size, 3)) * sd, blob


def merged_sets(Z, K):
    """Component sets created by each merge, as in 003's table (0-based)."""
    sets = [frozenset([k]) for k in range(K)]
    for a, b in Z[:, :2].astype(int):
        sets.append(sets[a] | sets[b])
    return sets[K:]


@pytest.mark.parametrize(
    ("similarity", "level3"),
    [("l2", {0, 1, 3}), ("modified_l2", {0, 2, 3}), ("confusion", {0, 2, 3})],
)
def test_fig2_merge_order(similarity, level3):
    # 003 Fig. 2 table (1-based there): level 2 forms 5 = {1, 4} for every measure; level 3
    # forms {1, 2, 4} under L2 (it ignores the low prior of 3) and {1, 3, 4} otherwise
    kwargs = {}
    if similarity == "confusion":
        rng = np.random.default_rng(0)
        comp = rng.choice(4, size=20000, p=FIG2_WEIGHTS)
        noise = rng.standard_normal((comp.size, 2))
        samples = FIG2_MEANS[comp] + noise * np.sqrt(FIG2_COVS[comp, 0, 0])[:, None]
        log_joint = log_gaussian(samples, FIG2_MEANS, FIG2_COVS) + np.log(FIG2_WEIGHTS)
        kwargs = {"posteriors": softmax(log_joint, axis=1), "true_component": comp}
    Z, scores = component_linkage(FIG2_WEIGHTS, FIG2_MEANS, FIG2_COVS, similarity, **kwargs)
    sets = merged_sets(Z, 4)
    assert sets[0] == {0, 3}
    assert sets[1] == level3
    assert is_valid_linkage(Z) and list(Z[:, 2]) == [1, 2, 3]
    assert scores.shape == (3,)


@pytest.mark.parametrize("similarity", ["modified_l2", "confusion", "sample"])
def test_blob_hierarchy_is_recovered(similarity):
    X, blob = blobs(seed=0)
    model = ProbabilisticHierarchy(
        n_dims=None, similarity=similarity, n_init=2, random_state=0
    ).fit(X)
    assert model.n_components_ == 4  # chosen by AIC
    assert min(model.aic_, key=model.aic_.get) == 4
    first_two = merged_sets(model.component_linkage_, 4)[:2]
    blob_of = [np.bincount(blob[model.labels_ == k]).argmax() for k in range(4)]
    assert {frozenset(blob_of[k] // 2 for k in s) for s in first_two} == {
        frozenset({0}),
        frozenset({1}),
    }
    Z = model.linkage_
    assert Z.shape == (len(X) - 1, 4)
    assert is_valid_linkage(Z) and is_monotonic(Z)
    assert adjusted_rand_score(blob // 2, cut_at_level(Z, 1)) == 1.0
    assert adjusted_rand_score(blob, cut_at_level(Z, 3)) > 0.85


def test_level_assignment_with_rho_09_is_rarely_wrong():
    X, blob = blobs(seed=1)
    model = ProbabilisticHierarchy(n_dims=None, n_init=2, random_state=1).fit(X)
    X_new, blob_new = blobs(seed=11)
    placed = model.assign_level(X_new, rho=0.9)
    K = model.n_components_
    blob_of = np.array([np.bincount(blob[model.labels_ == k]).argmax() for k in range(K)])
    members = merged_sets(model.component_linkage_, K)
    node_sets = [frozenset([k]) for k in range(K)] + members
    wrong = [
        blob_new[i] not in {blob_of[k] for k in node_sets[v]} for i, v in enumerate(placed.node)
    ]
    assert np.mean(wrong) <= 0.10
    assert (placed.posterior > 0.9).all()
    # most documents are placed at a component; the uncertain ones higher up
    assert np.mean(placed.level == 1) > 0.7 and placed.level.max() > 1


def test_assign_levels_on_a_known_tree():
    # components 0, 1 merge first (node 3), then with 2 (node 4)
    Z = np.array([[0, 1, 1, 2], [2, 3, 2, 3]], dtype=float)
    post = np.array([[0.95, 0.05, 0.0], [0.5, 0.45, 0.05], [0.4, 0.2, 0.4]])
    placed = assign_levels(post, Z, rho=0.9)
    np.testing.assert_array_equal(placed.level, [1, 2, 3])
    np.testing.assert_array_equal(placed.node, [0, 3, 4])
    np.testing.assert_allclose(placed.posterior, [0.95, 0.95, 1.0])
    with pytest.raises(ValueError, match="rho must be in"):
        assign_levels(post, Z, rho=1.0)


def test_sample_dependent_cluster_accumulates_posteriors():
    post = np.array([[0.5, 0.3, 0.2], [0.05, 0.92, 0.03]])
    # A(1) = 0.5, A(2) = 0.8, A(3) = 1.0: m = min l with A(l) > rho (003 sec. 3.5)
    np.testing.assert_array_equal(
        sample_dependent_clusters(post, 0.7), [[True, True, False], [False, True, False]]
    )
    np.testing.assert_array_equal(
        sample_dependent_clusters(post, 0.9), [[True, True, True], [False, True, False]]
    )


def test_document_linkage_follows_the_component_tree():
    rng = np.random.default_rng(0)
    component = np.array([0, 0, 1, 2, 2, 2, 0])
    coords = rng.normal(size=(7, 2))
    # component 3 has no documents and is skipped
    Zc = np.array([[0, 3, 1, 2], [1, 2, 2, 2], [4, 5, 3, 4]], dtype=float)
    Z = document_linkage(Zc, component, coords)
    assert is_valid_linkage(Z) and is_monotonic(Z)
    assert adjusted_rand_score(component, cut_at_level(Z, 2)) == 1.0
    assert set(cut_at_level(Z, 1)[[2, 3, 4, 5]]) != set(cut_at_level(Z, 1)[[0, 1, 6]])


def topic_corpus(seed=0, n_per=60):
    """Sparse tf-idf-like documents from three topics with their own vocabulary."""
    rng = np.random.default_rng(seed)
    vocab = [f"{t}{j}" for t in ("sql", "http", "math") for j in range(20)] + [
        f"common{j}" for j in range(40)
    ]
    rows, topic = [], []
    for t in range(3):
        for _ in range(n_per):
            counts = np.zeros(len(vocab))
            counts[t * 20 : t * 20 + 20] = rng.poisson(1.0, 20)
            counts[60:] = rng.poisson(0.3, 40)
            rows.append(counts)
            topic.append(t)
    X = sparse.csr_matrix(np.log1p(np.array(rows)))
    return X, np.array(topic), vocab


def test_text_with_labels_keywords_and_prototypes():
    X, topic, vocab = topic_corpus()
    y = [f"folder{t}" if i % 4 == 0 else None for i, t in enumerate(topic)]
    model = ProbabilisticHierarchy(n_dims=5, lambda_=0.8, n_init=2, random_state=0).fit(X, y)
    K = model.n_components_
    assert model.linkage_.shape == (X.shape[0] - 1, 4)
    assert adjusted_rand_score(topic, cut_at_level(model.linkage_, 2)) > 0.9
    assert model.class_given_component_.shape == (K, 3)
    # P(y|k) is sharp: each component belongs to one folder
    assert (model.class_given_component_.max(axis=1) > 0.9).all()
    keywords = model.keywords_(vocab, n_keywords=5)
    assert len(keywords) == 2 * K - 1
    for k in range(K):
        t = np.bincount(topic[model.labels_ == k]).argmax()
        prefix = ("sql", "http", "math")[t]
        assert sum(w.startswith(prefix) for w in keywords[k]) >= 4
    assert len(model.prototypes_) == 2 * K - 1
    for k in range(K):
        assert (model.labels_[model.prototypes_[k]] == k).all()
    assert len(model.prototypes_[-1]) == 5
    placed = model.assign_level(X[:10])
    assert placed.level.shape == (10,)


def test_degenerate_inputs():
    with pytest.raises(ValueError, match="n_components=50 is larger than n_samples=20"):
        ProbabilisticHierarchy(n_components=50, n_dims=None).fit(
            np.random.default_rng(0).normal(size=(20, 2))
        )
    with pytest.raises(ValueError, match="n_samples=1"):
        ProbabilisticHierarchy(n_dims=None).fit(np.ones((1, 2)))
    with pytest.raises(ValueError, match="lambda_ must be in"):
        ProbabilisticHierarchy(lambda_=1.5).fit(np.eye(3))
    with pytest.raises(ValueError, match="similarity must be one of"):
        ProbabilisticHierarchy(similarity="kl").fit(np.eye(3))
    with pytest.raises(ValueError, match="gamma must be in"):
        ProbabilisticHierarchy(gamma=1.0).fit(np.eye(3))
    # identical documents: Sigma_0 gets a ridge, AIC keeps one component
    with pytest.warns(UserWarning, match="overall covariance"):
        model = ProbabilisticHierarchy(n_dims=None, random_state=0).fit(np.ones((30, 2)))
    assert model.n_components_ == 1 and is_valid_linkage(model.linkage_)
    X, _ = blobs(seed=2, n_per=20)
    with pytest.warns(UserWarning, match="no labeled document"):
        ProbabilisticHierarchy(n_dims=None, random_state=0).fit(X, [None] * len(X))
    with pytest.raises(ValueError, match="lambda_=0"):
        ProbabilisticHierarchy(n_dims=None, lambda_=0.0, random_state=0).fit(X)
    # one class: every labeled document in one folder
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = ProbabilisticHierarchy(n_dims=None, random_state=0).fit(X, ["a"] * len(X))
    assert model.class_given_component_.shape[1] == 1
    with pytest.warns(UserWarning, match="n_dims=10 exceeds"):
        ProbabilisticHierarchy(n_dims=10, random_state=0).fit(np.abs(X[:, :3]) + 0.1)


def test_covariance_regularization_meets_the_condition_bound():
    sigma0 = np.diag([2.0, 1.0, 0.5])
    singular = np.outer([1.0, 2.0, 0.0], [1.0, 2.0, 0.0])
    reg = regularize_covariance(singular, sigma0)
    eig = np.linalg.eigvalsh(reg)
    assert eig[0] > 0 and eig[-1] / eig[0] < 1 / (3 * np.finfo(float).eps)
    # the smallest alpha: a well-conditioned matrix is left alone
    assert regularize_covariance(sigma0, sigma0) is sigma0
    assert np.allclose(reg - singular, (reg - singular)[0, 0] / 2 * sigma0)


def test_parameter_count_includes_means():
    # 003 sec. 2.1's K (d (d + 1) / 2 + C) - 1, plus the K d mean coordinates
    assert n_parameters(3, 2, 2) == 3 * (3 + 2) - 1 + 3 * 2


def test_estimator_contract():
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError

    model = ProbabilisticHierarchy(similarity="l2", rho=0.8, n_dims=None, random_state=0)
    assert clone(model).get_params() == model.get_params()
    with pytest.raises(NotFittedError):
        model.assign_level(np.zeros((1, 2)))
    # one component: every document sits at level 1 of a one-node tree
    X = np.random.default_rng(0).normal(size=(30, 2))
    fitted = ProbabilisticHierarchy(n_components=1, n_dims=None, random_state=0).fit(X)
    assert fitted.fit(X) is fitted
    placed = fitted.assign_level(X)
    assert (placed.level == 1).all() and (placed.node == 0).all()
    assert fitted.component_linkage_.shape == (0, 4) and is_valid_linkage(fitted.linkage_)


@pytest.mark.parametrize("similarity", ["modified_l2", "confusion"])
def test_class_hierarchy_holds_the_class_components(similarity):
    # folder "left" holds blobs 0 and 1, folder "right" blobs 2 and 3; half the docs labeled
    X, blob = blobs(seed=0, n_per=100)
    y = [("left" if b < 2 else "right") if i % 2 else None for i, b in enumerate(blob)]
    model = ProbabilisticHierarchy(
        n_dims=None, similarity=similarity, n_init=2, random_state=0
    ).fit(X, y)
    K = model.n_components_
    blob_of = np.array([np.bincount(blob[model.labels_ == k]).argmax() for k in range(K)])
    tree = model.class_hierarchy("left")
    assert set(blob_of[tree.components]) == {0, 1}
    assert tree.linkage.shape == (tree.components.size - 1, 4)
    assert tree.weights.sum() == pytest.approx(1.0)
    X_new, blob_new = blobs(seed=5, n_per=50)
    placed = model.assign_level_in_class(X_new[blob_new < 2], "left", rho=0.9)
    assert np.mean(placed.level == 1) > 0.7
    assert (placed.posterior > 0.9).all()
    with pytest.raises(ValueError, match="label 'up' is not among"):
        model.class_hierarchy("up")


def test_copies_of_a_document_do_not_take_a_component():
    # 60 copies of one point would collapse a component onto it (singular covariance)
    X, _ = blobs(seed=0)
    X = np.vstack([X, np.repeat(X[:1], 60, axis=0)])
    model = ProbabilisticHierarchy(n_dims=None, n_init=2, random_state=0).fit(X)
    assert model.n_components_ == 4
    assert (model.labels_[-60:] == model.labels_[0]).all()
    # the same on sparse text, through the LSI basis
    Xt, topic, _ = topic_corpus()
    Xt = sparse.vstack([Xt, sparse.csr_matrix(np.repeat(Xt[:1].toarray(), 60, axis=0))])
    text = ProbabilisticHierarchy(n_dims=5, n_init=2, random_state=0).fit(Xt)
    assert adjusted_rand_score(topic, cut_at_level(text.linkage_, 2)[: len(topic)]) > 0.9


def test_unlabeled_documents_help_with_few_labels():
    # 003 Fig. 4: with few labeled examples, the unlabeled ones cut the classification
    # error. Two classes, each two opposite blobs (XOR); 12 labeled of 400.
    def xor(seed, n_per):
        rng = np.random.default_rng(seed)
        centers = np.array([[0, 0], [3, 0], [0, 3], [3, 3]], dtype=float)
        blob = np.repeat(np.arange(4), n_per)
        X = centers[blob] + rng.normal(size=(blob.size, 2)) * 0.8
        return X, np.where(np.isin(blob, [0, 3]), "x", "o")

    X, c = xor(0, 100)
    labeled = set(np.random.default_rng(0).choice(len(X), 12, replace=False).tolist())
    y = [c[i] if i in labeled else None for i in range(len(X))]
    X_test, c_test = xor(100, 200)
    errors = {}
    for lam in (0.0, 1.0):
        model = ProbabilisticHierarchy(n_dims=None, lambda_=lam, n_init=2, random_state=0)
        model.fit(X, y)
        errors[lam] = np.mean(np.array(model.predict_label(X_test)) != c_test)
        proba = model.predict_label_proba(X_test)
        assert proba.shape == (len(X_test), 2)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert errors[1.0] < 0.15 < 0.3 < errors[0.0]
    with pytest.raises(ValueError, match="fit without labels"):
        ProbabilisticHierarchy(n_dims=None, random_state=0).fit(X).predict_label(X_test)
