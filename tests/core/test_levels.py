"""Level assignment's folder tree (003 sec. 3.1, eq. 9)."""

from __future__ import annotations

import numpy as np

from foldwise.core.placement._levels import (
    FolderTree,
    assign_folder_levels,
    common_depths,
    folder_tree,
)

FOLDERS = [("a",), ("a", "x"), ("a", "x", "p"), ("a", "y"), ("b", "z"), ("c",)]


def test_subtree_marks_each_folder_under_every_prefix_of_it() -> None:
    tree = FolderTree(FOLDERS)
    subtree = tree.subtree.toarray()
    assert subtree.shape == (len(tree.paths), len(FOLDERS))
    for v, path in enumerate(tree.paths):
        expected = [f[: len(path)] == path for f in FOLDERS]
        np.testing.assert_array_equal(subtree[v], expected)
    # ("b",) is a prefix only; every folder is its own node
    assert tree.class_of[tree.paths.index(("b",))] == -1
    assert [tree.paths[v] for v in np.flatnonzero(tree.class_of >= 0)] == FOLDERS


def test_the_tree_of_a_folder_list_is_built_once() -> None:
    first = folder_tree(tuple(FOLDERS))
    assert folder_tree(tuple(list(FOLDERS))) is first
    assert folder_tree(tuple(FOLDERS[:-1])) is not first


def test_levels_descend_while_the_subtree_mass_passes_rho() -> None:
    proba = np.array(
        [
            [0.0, 0.1, 0.7, 0.1, 0.1, 0.0],  # a/x/p: .9 under a, .8 under a/x, .7 itself
            [0.3, 0.2, 0.2, 0.1, 0.1, 0.1],  # .8 under a, then at most .4 (a/x): stops at a
            [0.1, 0.1, 0.0, 0.1, 0.3, 0.4],  # no subtree above .5: the root
        ]
    )
    placed = assign_folder_levels(proba, FOLDERS, rho=0.5)
    assert placed.folder == [("a", "x", "p"), ("a",), ()]
    np.testing.assert_allclose(placed.confidence, [0.7, 0.8, 1.0])
    assert placed.best_folder == [("a", "x", "p"), ("a",), ("c",)]


def test_common_depths_are_the_shared_prefix_lengths() -> None:
    rng = np.random.default_rng(0)
    folders = [tuple(rng.choice(list("ab"), size=rng.integers(1, 4))) for _ in range(30)]
    folders += [("a", "b", "a", "b")]  # deeper than the others
    expected = np.array(
        [[next((d for d in range(min(len(f), len(g))) if f[d] != g[d]), min(len(f), len(g)))
          for g in folders] for f in folders]
    )  # fmt: skip
    np.testing.assert_array_equal(common_depths(folders), expected)
    assert common_depths([]).shape == (0, 0)
