"""The quality panel's counts against brute force, and its SVG (no browser needed)."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from scipy.cluster.hierarchy import linkage

from foldwise.core import Hierarchy, common_ancestor_matrix
from foldwise.service.ui.dendrogram_svg import dendrogram_svg
from foldwise.service.ui.quality import folder_triples_kept, triples_kept


def _brute(h: Hierarchy, labels: list[str]) -> tuple[int, int]:
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
    assert (total, kept) == _brute(h, labels)
    assert 0 < kept < total


def test_folder_triples_kept_on_restricted_tree() -> None:
    rng = np.random.default_rng(5)
    Z = linkage(rng.normal(size=(20, 2)), method="average")
    items = np.array([0, 2, 3, 5, 8, 9, 11, 13, 17, 19])
    h = Hierarchy.from_linkage(Z).restrict(items)
    labels = ["a", "a", "b", "b", "a", "c", "c", "b", "a", "c"]
    assert folder_triples_kept(h, labels) == _brute(h, labels)


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


def test_dendrogram_svg_is_valid_and_colours_groups() -> None:
    rng = np.random.default_rng(0)
    Z = linkage(rng.normal(size=(9, 2)), method="average")
    groups = ["howto"] * 4 + ["library"] * 4 + ["(not filed)"]
    svg = dendrogram_svg(Z, groups)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f".//{ns}polyline")) == 8
    ticks = root.findall(f".//{ns}line")
    assert len(ticks) == 9
    assert {t.get("stroke") for t in ticks} >= {"#b8bec7"}
    assert len({t.get("stroke") for t in ticks}) == 3
    assert "library" in svg and "&lt;" not in svg
