import numpy as np
from scipy.cluster.hierarchy import linkage

from foldwise.core import Hierarchy


def test_from_paths_puts_items_on_inner_folders():
    h = Hierarchy.from_paths([("a",), ("a", "b"), ("c",)])
    assert h.names[h.item_node[0]] == "a"
    assert h.names[h.item_node[1]] == "a/b"
    assert h.parent[h.item_node[1]] == h.item_node[0]
    assert list(h.subtree_item_counts()[[0, h.item_node[0]]]) == [3, 2]


def test_from_linkage_root_holds_every_item():
    rng = np.random.default_rng(0)
    Z = linkage(rng.normal(size=(6, 2)), method="average")
    h = Hierarchy.from_linkage(Z)
    assert h.root == 10
    assert h.subtree_item_counts()[h.root] == 6
    assert h.depth()[h.root] == 0
