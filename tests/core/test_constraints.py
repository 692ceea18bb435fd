import itertools

import numpy as np
import pytest

from foldwise.core import (
    ConflictingTriplesError,
    Constraints,
    FolderConstraints,
    Hierarchy,
    MLBTriple,
    TripleSet,
    close_triples,
)
from foldwise.core.constraints._constraints import triple_holds


def test_theorem1_symmetry():
    assert MLBTriple(2, 1, 3) in close_triples([(1, 2, 3)])


def test_theorem2_transitivity_inside_a_subtree():
    closed = close_triples([(1, 2, 4), (2, 3, 4)])
    assert MLBTriple(1, 3, 4) in closed


def test_theorem3_transitivity_over_levels():
    closed = close_triples([(1, 2, 3), (1, 3, 4)])
    assert MLBTriple(1, 2, 4) in closed


def test_closure_is_sound_on_random_trees():
    """Every derived triple holds in every tree that satisfies the given ones."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        paths = [tuple(rng.integers(0, 2, size=rng.integers(1, 4)).astype(str)) for _ in range(7)]
        h = Hierarchy.from_paths(paths)
        true = [t for t in itertools.permutations(range(7), 3) if triple_holds(h, t)]
        if not true:
            continue
        picked = [true[k] for k in rng.choice(len(true), size=min(4, len(true)), replace=False)]
        for t in close_triples(picked):
            assert triple_holds(h, t), (picked, t)


def test_contradiction_names_the_triples():
    with pytest.raises(ConflictingTriplesError) as err:
        TripleSet([(0, 1, 2), (0, 2, 1)])
    assert "(0, 1, 2)" in str(err.value) and "(0, 2, 1)" in str(err.value)


def test_cycle_that_no_tree_fits_is_refused():
    # ab|c, bc|a, ca|b: each pair must join first -- impossible.
    with pytest.raises(ConflictingTriplesError):
        TripleSet([(0, 1, 2), (1, 2, 0), (2, 0, 1)])


def test_bad_triples_are_clear_errors():
    with pytest.raises(ValueError, match="distinct"):
        TripleSet([(1, 1, 2)])
    with pytest.raises(ValueError, match="out of range"):
        Constraints.build(3, triples=[(0, 1, 5)])
    with pytest.raises(ValueError, match="labels for"):
        Constraints.build(3, labels=[("a",)])


def _brute_violations(paths, a, b):
    """Hierarchy triples (x, y, z), x, z across a|b, y labeled outside a and b."""
    labeled = [i for i, p in enumerate(paths) if p is not None]
    h = Hierarchy.from_paths([paths[i] for i in labeled])
    pos = {d: k for k, d in enumerate(labeled)}
    union = set(a) | set(b)
    count = 0
    for x, z in itertools.chain(itertools.product(a, b), itertools.product(b, a)):
        if x not in pos or z not in pos:
            continue
        for y in labeled:
            if y in union or y in (x, z):
                continue
            if triple_holds(h, (pos[x], pos[y], pos[z])):
                count += 1
    return count


def test_closed_form_matches_brute_force_on_consistent_clusters():
    rng = np.random.default_rng(0)
    folders = [("a",), ("a", "b"), ("a", "c"), ("a", "c", "d"), ("e",), ("e", "f")]
    for _ in range(200):
        n = 14
        paths = [folders[k] if rng.random() < 0.7 else None for k in rng.integers(0, 6, n)]
        fc = FolderConstraints.from_labels(paths)
        docs = rng.permutation(n)
        a, b = list(docs[:3]), list(docs[3:6])
        # The closed form assumes each side is itself violation-free; check only those cases.
        if _brute_violations(paths, a[:1], a[1:]) or _brute_violations(paths, b[:1], b[1:]):
            continue
        if any(_brute_violations(paths, a[:k], a[k:]) for k in range(1, 3)):
            continue
        if any(_brute_violations(paths, b[:k], b[k:]) for k in range(1, 3)):
            continue
        assert fc.merge_violations(a, b) == _brute_violations(paths, a, b)


def test_summary_violations_against_many_equal_the_one_at_a_time_form():
    """``summary_violations_many`` (biHAC's search for an admissible partner) is the scalar
    closed form for every candidate, on random folder nodes and counts of a deeper tree."""
    rng = np.random.default_rng(1)
    folders = [("a",), ("a", "b"), ("a", "b", "g"), ("a", "c"), ("a", "c", "d"), ("e",), ("e", "f")]
    paths = [folders[k] for k in rng.integers(0, len(folders), 60)]
    fc = FolderConstraints.from_labels(paths)
    nodes = np.arange(fc.folder_parent.size)
    for _ in range(100):
        n_a, lca_a = int(rng.integers(0, 5)), int(rng.choice(nodes))
        n_b, lca_b = rng.integers(0, 5, 40), rng.choice(nodes, 40)
        many = fc.summary_violations_many(n_a, lca_a, n_b, lca_b)
        one = [
            fc.summary_violations(n_a, lca_a, int(n), int(f))
            for n, f in zip(n_b, lca_b, strict=True)
        ]
        assert many.tolist() == one
    assert (fc.summary_violations_many(2, 3, n_b, lca_b) > 0).any()  # not all trivially 0
