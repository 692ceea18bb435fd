"""Measures against brute-force definitions (001 sec. 5.1, 002 sec. 4.2, 004 eq. 2)."""

import itertools
import math

import numpy as np
import pytest
from scipy.cluster.hierarchy import linkage
from sklearn.metrics import adjusted_rand_score

from foldwise.core import (
    Hierarchy,
    adjusted_rand_index,
    common_ancestor_matrix,
    cophenetic_merge_index,
    corrected_rand_index,
    folder_triples_kept,
    h_correlation,
    hai,
    hierarchical_f_score,
    mlb_triples_per_node,
    rand_index,
    triples_kept,
)

# --- brute-force definitions, straight from the papers -------------------------------------


def ancestors(h, item):
    """Root path of an item's node, deepest first."""
    path, v = [], int(h.item_node[item])
    while v >= 0:
        path.append(v)
        v = int(h.parent[v])
    return path


def brute_ca(h, x, y):
    up = set(ancestors(h, x))
    return next(v for v in ancestors(h, y) if v in up)


def node_items(h):
    """Items in each node's subtree, as sets."""
    out = [set() for _ in range(h.n_nodes)]
    for item in range(h.n_items):
        for v in ancestors(h, item):
            out[v].add(item)
    return out


def brute_mlb(h):
    """MLB triple -> its node ca(d1, d3) via 001 sec. 3 Properties 1 and 2 on clusters."""
    clusters = [c for c in node_items(h) if c]
    triples = {}
    for x, y, z in itertools.permutations(range(h.n_items), 3):
        prop1 = all(y in c for c in clusters if x in c and z in c)
        prop2 = any(x in c and y in c and z not in c for c in clusters)
        if prop1 and prop2:
            triples[(x, y, z)] = brute_ca(h, x, z)
    return triples


def brute_weights(triples, weighting):
    per_node = {}
    for v in triples.values():
        per_node[v] = per_node.get(v, 0) + 1
    return {t: 1.0 / per_node[v] if weighting == "node" else 1.0 for t, v in triples.items()}


def brute_h_correlation(learned, reference, symmetric, weighting):
    """001 eq. 6 / eq. 8 with eq. 9 weights, over explicit triple sets."""
    mlb_l, mlb_r = brute_mlb(learned), brute_mlb(reference)
    w_l, w_r = brute_weights(mlb_l, weighting), brute_weights(mlb_r, weighting)
    shared = mlb_l.keys() & mlb_r.keys()
    if symmetric:
        den = sum(w_l.values()) + sum(w_r.values())
        return sum(w_l[t] + w_r[t] for t in shared) / den if den else math.nan
    den = sum(w_r.values())
    return sum(w_r[t] for t in shared) / den if den else math.nan


def brute_hai(h1, h2):
    """004 eq. 2 with d_H = |smallest common node| / N, or 0 in a leaf node."""
    n = h1.n_items

    def d(h, a, b):
        if a == b:
            return 0.0
        members = node_items(h)
        v = brute_ca(h, a, b)
        is_leaf = not any(members[c] for c in range(h.n_nodes) if h.parent[c] == v)
        return 0.0 if is_leaf else len(members[v]) / n

    total = sum(abs(d(h1, i, j) - d(h2, i, j)) for i in range(n) for j in range(n))
    return 1.0 - total / n**2


def brute_f_score(learned, reference, items):
    """Per folder, the best 2|C∩K| / (|C| + |K|) over learned nodes, on ``items`` only."""
    items = set(int(i) for i in items)
    classes = [c & items for c in node_items(reference)]
    clusters = [k & items for k in node_items(learned)]
    full = node_items(reference)
    scores, leaf = {}, {}
    for v, c in enumerate(classes):
        if reference.parent[v] < 0 or not c:
            continue
        scores[v] = max(2 * len(c & k) / (len(c) + len(k)) for k in clusters)
        leaf[v] = not any(full[u] for u in range(reference.n_nodes) if reference.parent[u] == v)
    return scores, leaf


def brute_rand(a, b, skip=frozenset()):
    agree = total = 0
    for i, j in itertools.combinations(range(len(a)), 2):
        if (i, j) in skip:
            continue
        total += 1
        agree += (a[i] == a[j]) == (b[i] == b[j])
    return agree / total


# --- random cases -------------------------------------------------------------------------


def random_folders(rng, n, alphabet="ab", max_depth=3):
    """A folder tree with documents on leaves, inner folders and the root."""
    paths = [
        tuple(rng.choice(list(alphabet), size=rng.integers(0, max_depth + 1))) for _ in range(n)
    ]
    return Hierarchy.from_paths(paths)


def random_dendrogram(rng, n, method="average"):
    return Hierarchy.from_linkage(linkage(rng.normal(size=(n, 2)), method=method))


def random_pair(rng, kind, n):
    if kind == "dendrogram-vs-folders":
        return random_dendrogram(rng, n), random_folders(rng, n)
    if kind == "folders-vs-folders":
        return random_folders(rng, n, "abc", 2), random_folders(rng, n)
    return random_dendrogram(rng, n, "single"), random_dendrogram(rng, n, "complete")


KINDS = ["dendrogram-vs-folders", "folders-vs-folders", "dendrogram-vs-dendrogram"]


# --- H-correlation ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", KINDS)
def test_h_correlation_matches_brute_force(seed, kind):
    rng = np.random.default_rng(seed)
    learned, reference = random_pair(rng, kind, 9)
    for symmetric, weighting in itertools.product([False, True], ["node", "equal"]):
        expected = brute_h_correlation(learned, reference, symmetric, weighting)
        got = h_correlation(learned, reference, symmetric=symmetric, weighting=weighting)
        assert got == pytest.approx(expected, rel=1e-12), (symmetric, weighting)


@pytest.mark.parametrize("kind", KINDS)
def test_h_correlation_matches_brute_force_on_deeper_trees(kind):
    # 30 items: levels of many items and many distinct keys each, either tree the deeper
    rng = np.random.default_rng(7)
    learned, reference = random_pair(rng, kind, 30)
    for first, second in ((learned, reference), (reference, learned)):
        expected = brute_h_correlation(first, second, True, "node")
        assert h_correlation(first, second, symmetric=True) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_h_correlation_items_restricts_both_hierarchies(seed):
    rng = np.random.default_rng(100 + seed)
    learned, reference = random_pair(rng, "dendrogram-vs-folders", 14)
    items = np.sort(rng.choice(14, size=8, replace=False))
    expected = brute_h_correlation(
        learned.restrict(items), reference.restrict(items), False, "node"
    )
    assert h_correlation(learned, reference, items=items) == pytest.approx(expected, rel=1e-12)


def test_mlb_triples_per_node_counts_brute_force_triples():
    rng = np.random.default_rng(7)
    h = random_folders(rng, 10)
    per_node = np.zeros(h.n_nodes)
    for v in brute_mlb(h).values():
        per_node[v] += 1
    np.testing.assert_array_equal(mlb_triples_per_node(h), per_node)


def four_documents():
    # reference: a/b holds 0 and 1, document 2 sits on folder a itself, document 3 in c
    reference = Hierarchy.from_paths([("a", "b"), ("a", "b"), ("a",), ("c",)])
    # learned: {0, 1} first, then 3 joins, 2 last
    learned = Hierarchy.from_linkage(np.array([[0, 1, 1.0, 2], [4, 3, 2.0, 3], [5, 2, 3.0, 4]]))
    return learned, reference


def test_h_correlation_hand_computed_node_and_equal_weights():
    learned, reference = four_documents()
    # node a: triples (0,1,2), (1,0,2), both kept; root: 6 triples (d1, d2 in {0,1,2}, d3 = 3),
    # kept are (0,1,3) and (1,0,3). Node weights: (1 + 2/6) / 2 nodes; equal: 4 / 8.
    assert h_correlation(learned, reference) == pytest.approx(2 / 3)
    assert h_correlation(learned, reference, weighting="equal") == pytest.approx(1 / 2)
    # learned triples: 2 at node {0,1,3}, 6 at the root; the 4 shared weigh 1/2 and 1/6 there
    assert h_correlation(learned, reference, symmetric=True, weighting="equal") == pytest.approx(
        (4 + 4) / (8 + 8)
    )
    assert h_correlation(learned, reference, symmetric=True) == pytest.approx(
        (4 / 3 + 4 / 3) / (2 + 2)
    )


def test_h_correlation_three_documents_order_of_merges():
    reference = Hierarchy.from_paths([("a",), ("a",), ("b",)])
    first_01 = Hierarchy.from_linkage(np.array([[0, 1, 1.0, 2], [3, 2, 2.0, 3]]))
    first_12 = Hierarchy.from_linkage(np.array([[1, 2, 1.0, 2], [3, 0, 2.0, 3]]))
    assert h_correlation(first_01, reference) == 1.0
    assert h_correlation(first_12, reference) == 0.0


def test_h_correlation_of_a_hierarchy_with_itself_is_one():
    rng = np.random.default_rng(3)
    h = random_dendrogram(rng, 30)
    assert h_correlation(h, h, symmetric=True) == pytest.approx(1.0)
    folders = random_folders(rng, 30)
    assert h_correlation(folders, folders) == pytest.approx(1.0)


def test_h_correlation_ignores_merge_heights():
    # iHAC can merge at a lower height than an earlier merge; only the nesting counts
    learned, reference = four_documents()
    inverted = Hierarchy.from_linkage(np.array([[0, 1, 3.0, 2], [4, 3, 1.0, 3], [5, 2, 2.0, 4]]))
    assert h_correlation(inverted, reference) == h_correlation(learned, reference)


def test_h_correlation_is_nan_without_reference_triples():
    flat = Hierarchy.from_paths([("a",)] * 4)
    learned = random_dendrogram(np.random.default_rng(0), 4)
    assert math.isnan(h_correlation(learned, flat))
    # symmetric: the dendrogram's own triples make a denominator, none is shared
    assert h_correlation(learned, flat, symmetric=True) == 0.0
    two = Hierarchy.from_paths([("a",), ("b",)])
    assert math.isnan(h_correlation(two, two, symmetric=True))


def test_h_correlation_rejects_bad_input():
    learned, reference = four_documents()
    with pytest.raises(ValueError, match="weighting"):
        h_correlation(learned, reference, weighting="nodes")
    with pytest.raises(ValueError, match="item counts"):
        h_correlation(learned, Hierarchy.from_paths([("a",)] * 3))


# --- common ancestors ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_common_ancestor_matrix_matches_root_paths(seed):
    rng = np.random.default_rng(seed)
    for h in random_pair(rng, "dendrogram-vs-folders", 12):
        expected = [[brute_ca(h, x, y) for y in range(12)] for x in range(12)]
        np.testing.assert_array_equal(common_ancestor_matrix(h), expected)
        np.testing.assert_array_equal(common_ancestor_matrix(h, [5, 2]), np.array(expected)[[5, 2]])


def test_cophenetic_merge_index_hand_computed():
    Z = np.array([[0, 1, 1.0, 2], [2, 3, 2.0, 3]])
    np.testing.assert_array_equal(cophenetic_merge_index(Z), [[-1, 0, 1], [0, -1, 1], [1, 1, -1]])


def test_cophenetic_merge_index_matches_replayed_merges():
    rng = np.random.default_rng(5)
    n = 15
    Z = linkage(rng.normal(size=(n, 2)), method="ward")
    members = {i: {i} for i in range(n)}
    expected = np.full((n, n), -1)
    for k, (a, b) in enumerate(Z[:, :2].astype(int)):
        for x in members[a]:
            for y in members[b]:
                expected[x, y] = expected[y, x] = k
        members[n + k] = members.pop(a) | members.pop(b)
    got = cophenetic_merge_index(Z)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, expected)


# --- hierarchical F-score -----------------------------------------------------------------


def test_f_score_hand_computed():
    reference = Hierarchy.from_paths([("a", "x"), ("a", "x"), ("a", "y"), ("c",)])
    learned = Hierarchy.from_linkage(np.array([[0, 1, 1.0, 2], [4, 3, 2.0, 3], [5, 2, 3.0, 4]]))
    score = hierarchical_f_score(learned, reference, np.arange(4))
    # leaves a/x, a/y, c each match a cluster exactly; class a = {0,1,2} best matches the
    # root {0,1,2,3}: 2 * 3 / (3 + 4)
    assert score.leaf == pytest.approx(1.0)
    assert score.higher == pytest.approx(6 / 7)
    # on documents 0, 2, 3 only: a = {0, 2} best matches the root {0,2,3}: 2 * 2 / (2 + 3)
    score = hierarchical_f_score(learned, reference, [0, 2, 3])
    assert score.higher == pytest.approx(4 / 5)
    assert score.leaf == pytest.approx(1.0)
    # folder c has no document among the items: skipped, not scored 0
    score = hierarchical_f_score(learned, reference, [0, 1, 2])
    assert [reference.names[v] for v in score.folders] == ["a", "a/x", "a/y"]
    assert list(score.is_leaf) == [False, True, True]


@pytest.mark.parametrize("seed", range(4))
def test_f_score_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    learned, reference = random_pair(rng, "dendrogram-vs-folders", 16)
    items = np.sort(rng.choice(16, size=10, replace=False))
    score = hierarchical_f_score(learned, reference, items)
    scores, leaf = brute_f_score(learned, reference, items)
    assert list(score.folders) == sorted(scores)
    np.testing.assert_allclose(score.scores, [scores[v] for v in score.folders])
    assert list(score.is_leaf) == [leaf[v] for v in score.folders]
    leaf_scores = [s for v, s in scores.items() if leaf[v]]
    higher_scores = [s for v, s in scores.items() if not leaf[v]]
    assert score.leaf == pytest.approx(np.mean(leaf_scores) if leaf_scores else np.nan, nan_ok=True)
    assert score.higher == pytest.approx(
        np.mean(higher_scores) if higher_scores else np.nan, nan_ok=True
    )
    # the reported cluster reaches the reported score
    members = node_items(learned)
    classes = node_items(reference)
    sel = set(items.tolist())
    for v, k, s in zip(score.folders, score.clusters, score.scores, strict=True):
        c, cl = classes[v] & sel, members[k] & sel
        assert 2 * len(c & cl) / (len(c) + len(cl)) == pytest.approx(s)


# --- HAI ----------------------------------------------------------------------------------


def test_hai_hand_computed():
    folders = Hierarchy.from_paths([("a",), ("a",), ("b",), ("b",)])
    dendrogram = Hierarchy.from_linkage(np.array([[0, 1, 1.0, 2], [2, 3, 1.0, 2], [4, 5, 2.0, 4]]))
    assert hai(folders, folders) == 1.0
    # pairs inside a and b: 0 in the leaf folders, 2/4 in the dendrogram; 4 ordered pairs
    assert hai(folders, dendrogram) == pytest.approx(1 - 4 * 0.5 / 16)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", KINDS)
def test_hai_matches_brute_force(seed, kind):
    rng = np.random.default_rng(seed)
    h1, h2 = random_pair(rng, kind, 10)
    assert hai(h1, h2) == pytest.approx(brute_hai(h1, h2), rel=1e-12)
    items = [1, 3, 4, 7, 8, 9]
    expected = brute_hai(h1.restrict(items), h2.restrict(items))
    assert hai(h1, h2, items) == pytest.approx(expected, rel=1e-12)


# --- Rand ---------------------------------------------------------------------------------


def test_rand_hand_computed():
    a, b = [0, 0, 1, 1], [0, 0, 0, 1]
    # agree on (0,1), (0,3), (1,3); disagree on (0,2), (1,2), (2,3)
    assert rand_index(a, b) == pytest.approx(3 / 6)
    # 002 sec. 4.2: the constrained pair (0, 1) is left out
    assert corrected_rand_index(a, b, constrained_pairs=[(1, 0), (0, 1), (2, 2)]) == (
        pytest.approx(2 / 5)
    )
    # Hubert & Arabie: sum C(n_ij, 2) = 1 equals its expectation 2 * 3 / 6
    assert adjusted_rand_index(a, b) == pytest.approx(0.0)


@pytest.mark.parametrize("seed", range(3))
def test_rand_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 3, size=12), rng.integers(0, 4, size=12)
    pairs = rng.integers(0, 12, size=(6, 2))
    skip = frozenset((min(p), max(p)) for p in pairs.tolist() if p[0] != p[1])
    assert rand_index(a, b) == pytest.approx(brute_rand(a, b))
    assert corrected_rand_index(a, b, constrained_pairs=pairs) == pytest.approx(
        brute_rand(a, b, skip)
    )
    assert corrected_rand_index(a, b, constrained_pairs=np.zeros((0, 2))) == pytest.approx(
        rand_index(a, b)
    )
    assert adjusted_rand_index(a, b) == pytest.approx(adjusted_rand_score(a, b))


# --- triples a hierarchy keeps (the quality panel's counts) ---------------------------------


def brute_folder_triples(h: Hierarchy, labels: list[str]) -> tuple[int, int]:
    depth = h.depth()
    ca = common_ancestor_matrix(h)
    total = kept = 0
    for x, y, z in itertools.permutations(range(h.n_items), 3):
        if labels[x] == labels[y] != labels[z]:
            total += 1
            kept += depth[ca[x, y]] > depth[ca[x, z]]
    return total, kept


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_folder_triples_kept_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 14
    Z = linkage(rng.normal(size=(n, 3)), method="average")
    labels = [str(v) for v in rng.integers(0, 3, size=n)]
    h = Hierarchy.from_linkage(Z)
    total, kept = folder_triples_kept(h, labels)
    assert (total, kept) == brute_folder_triples(h, labels)
    assert 0 < kept < total


def test_folder_triples_kept_on_restricted_tree() -> None:
    rng = np.random.default_rng(5)
    Z = linkage(rng.normal(size=(20, 2)), method="average")
    items = np.array([0, 2, 3, 5, 8, 9, 11, 13, 17, 19])
    h = Hierarchy.from_linkage(Z).restrict(items)
    labels = ["a", "a", "b", "b", "a", "c", "c", "b", "a", "c"]
    assert folder_triples_kept(h, labels) == brute_folder_triples(h, labels)


def test_perfect_tree_keeps_every_folder_triple() -> None:
    h = Hierarchy.from_paths([("a",), ("a",), ("b",), ("b",), ("b",)])
    total, kept = folder_triples_kept(h, ["a", "a", "b", "b", "b"])
    assert total == kept == 2 * 3 + 6 * 2


def test_triples_kept() -> None:
    # ((0, 1), 2), 3: 0 is closer to 1 than to 2, not the other way round.
    Z = np.array([[0, 1, 0.1, 2], [2, 4, 0.2, 3], [3, 5, 0.3, 4]], dtype=float)
    h = Hierarchy.from_linkage(Z)
    assert triples_kept(h, np.array([[0, 1, 2]])) == 1
    assert triples_kept(h, np.array([[0, 2, 1]])) == 0
    assert triples_kept(h, np.array([[0, 1, 2], [2, 0, 3], [3, 0, 1]])) == 2
