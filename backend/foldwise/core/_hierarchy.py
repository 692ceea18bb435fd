"""Rooted trees with items attached to nodes: folder hierarchies and dendrograms.

Both the reference folder hierarchy (documents may sit on inner folders, 000 sec. 2) and a
dendrogram (a scipy linkage matrix) become a :class:`Hierarchy`, so that every measure and
every constraint test is written once against one representation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

FolderPath = tuple[str, ...]


@dataclass(frozen=True)
class Hierarchy:
    """A rooted tree of ``n_nodes`` nodes with ``n_items`` items attached to nodes.

    Parameters
    ----------
    parent : ndarray of shape (n_nodes,), int
        Parent node of each node; ``-1`` for the root. Parents need not precede children.
    item_node : ndarray of shape (n_items,), int
        The node each item is attached to (a leaf or an inner node).
    names : tuple of str, optional
        A readable name per node (folder path joined by ``/`` for folder trees).
    """

    parent: NDArray[np.intp]
    item_node: NDArray[np.intp]
    names: tuple[str, ...] = field(default=())

    @property
    def n_nodes(self) -> int:
        return int(self.parent.shape[0])

    @property
    def n_items(self) -> int:
        return int(self.item_node.shape[0])

    @property
    def root(self) -> int:
        return int(np.flatnonzero(self.parent < 0)[0])

    def depth(self) -> NDArray[np.intp]:
        """Depth of each node, root = 0. Shape (n_nodes,)."""
        depth = np.full(self.n_nodes, -1, dtype=np.intp)
        for node in range(self.n_nodes):
            path = []
            v = node
            while v >= 0 and depth[v] < 0:
                path.append(v)
                v = int(self.parent[v])
            base = -1 if v < 0 else int(depth[v])
            for offset, u in enumerate(reversed(path), start=1):
                depth[u] = base + offset
        return depth

    def children(self) -> list[list[int]]:
        """Child node lists, indexed by node."""
        kids: list[list[int]] = [[] for _ in range(self.n_nodes)]
        for node, p in enumerate(self.parent):
            if p >= 0:
                kids[int(p)].append(node)
        return kids

    def subtree_item_counts(self) -> NDArray[np.intp]:
        """Number of items in each node's subtree (the node's cluster size). Shape (n_nodes,)."""
        counts = np.bincount(self.item_node, minlength=self.n_nodes).astype(np.intp)
        for node in self.postorder():
            p = int(self.parent[node])
            if p >= 0:
                counts[p] += counts[node]
        return counts

    def postorder(self) -> list[int]:
        """Nodes ordered children before parents."""
        order = np.argsort(-self.depth(), kind="stable")
        return [int(v) for v in order]

    def restrict(self, items: NDArray[np.intp] | Sequence[int]) -> Hierarchy:
        """The same tree with only ``items`` kept (re-indexed 0..len(items)-1).

        Nodes are kept as they are; measures treat nodes without items as absent.
        """
        items = np.asarray(items, dtype=np.intp)
        return Hierarchy(self.parent, self.item_node[items], self.names)

    @classmethod
    def from_paths(cls, paths: Sequence[FolderPath]) -> Hierarchy:
        """A folder hierarchy from one folder path per item.

        Every prefix of every path becomes a node; the empty path is the root. An item whose
        path is ``("a",)`` sits directly in folder ``a`` even if ``a`` has subfolders.
        """
        index: dict[FolderPath, int] = {(): 0}
        parent: list[int] = [-1]
        for path in paths:
            for depth in range(1, len(path) + 1):
                prefix = tuple(path[:depth])
                if prefix not in index:
                    index[prefix] = len(parent)
                    parent.append(index[prefix[:-1]])
        names = [""] * len(parent)
        for path, node in index.items():
            names[node] = "/".join(path)
        item_node = np.array([index[tuple(p)] for p in paths], dtype=np.intp)
        return cls(np.asarray(parent, dtype=np.intp), item_node, tuple(names))

    @classmethod
    def from_linkage(cls, Z: NDArray[np.floating]) -> Hierarchy:
        """A dendrogram from a scipy linkage matrix of shape (n-1, 4).

        Node ``i < n`` is the leaf of item ``i``; node ``n + k`` is the cluster formed by
        merge ``k``; the root is node ``2n - 2``.
        """
        Z = np.asarray(Z)
        n = Z.shape[0] + 1
        parent = np.full(2 * n - 1, -1, dtype=np.intp)
        for k in range(n - 1):
            parent[int(Z[k, 0])] = n + k
            parent[int(Z[k, 1])] = n + k
        return cls(parent, np.arange(n, dtype=np.intp))


def folder_paths_of(labels: Sequence[str]) -> list[FolderPath]:
    """Split ``"a/b/c"`` style folder labels into path tuples; ``""`` is the root."""
    return [tuple(part for part in label.split("/") if part) for label in labels]
