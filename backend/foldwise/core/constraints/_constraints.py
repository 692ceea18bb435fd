"""Must-link-before (MLB) constraints: explicit triples and a labeled folder hierarchy.

An MLB triple ``(x, y, z)`` says that ``x`` and ``y`` are joined in a more specific cluster
than ``x`` and ``z`` (001 eq. 1, Properties 1-2): every cluster holding ``x`` and ``z`` holds
``y``, and some cluster holds ``x`` and ``y`` but not ``z``.

Two sources, two representations:

* :class:`TripleSet`: triples a person states directly (critiques), closed under 001
  Theorems 1-3 and checked for consistency with Aho et al.'s BUILD algorithm.
* :class:`FolderConstraints`: the triples implied by a labeled folder hierarchy. These are
  never materialised (5 labeled documents in 50 folders already imply ~10^7 triples); a merge
  is tested in closed form from per-cluster counts (docs/architecture.md sec. 3).

:class:`Constraints` is their union, in the array form the iHAC kernel consumes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from foldwise.core._hierarchy import FolderPath, Hierarchy


class MLBTriple(NamedTuple):
    """``(x, y, z)``: ``x`` is closer to ``y`` than to ``z`` (001 eq. 1). Item indices."""

    x: int
    y: int
    z: int


class ConflictingTriplesError(ValueError):
    """A triple set that no hierarchy can satisfy.

    Attributes
    ----------
    conflicts : list of tuple of MLBTriple
        Groups of triples that contradict each other, e.g. ``((a, b, c), (a, c, b))``.
    """

    def __init__(self, conflicts: list[tuple[MLBTriple, ...]]) -> None:
        self.conflicts = conflicts
        shown = "; ".join(" vs ".join(map(_fmt, group)) for group in conflicts[:5])
        more = f" (and {len(conflicts) - 5} more)" if len(conflicts) > 5 else ""
        super().__init__(f"contradictory MLB triples: {shown}{more}")


def _fmt(t: tuple[int, int, int]) -> str:
    return f"({t[0]}, {t[1]}, {t[2]})"


def _as_triple(t: Iterable[int]) -> MLBTriple:
    x, y, z = (int(v) for v in t)
    if len({x, y, z}) < 3:
        raise ValueError(f"an MLB triple needs three distinct items, got {_fmt((x, y, z))}")
    if min(x, y, z) < 0:
        raise ValueError(f"item indices must be non-negative, got {_fmt((x, y, z))}")
    return MLBTriple(x, y, z)


def close_triples(triples: Iterable[Iterable[int]]) -> set[MLBTriple]:
    """The closure of ``triples`` under 001 Theorems 1-3.

    Theorem 1 (symmetry):               (a, b, c)               => (b, a, c)
    Theorem 2 (inside a subtree):       (a, b, d) and (b, c, d) => (a, c, d)
    Theorem 3 (over hierarchy levels):  (a, b, c) and (a, c, d) => (a, b, d)

    Runs to a fixpoint with a work list; each new triple is joined only with the triples that
    share its items, so the cost follows the size of the closure, not its square.
    """
    closed: set[MLBTriple] = set()
    by_first: dict[int, set[MLBTriple]] = defaultdict(set)  # a -> triples (a, *, *)
    by_third: dict[int, set[MLBTriple]] = defaultdict(set)  # d -> triples (*, *, d)
    todo = [_as_triple(t) for t in triples]
    while todo:
        t = todo.pop()
        if t in closed:
            continue
        closed.add(t)
        by_first[t.x].add(t)
        by_third[t.z].add(t)
        a, b, c = t
        derived = [MLBTriple(b, a, c)]  # Theorem 1
        # Theorem 2 with t as (a, b, d): join (b, c', d); with t as (b, c, d): join (a', b, d).
        for u in list(by_third[c]):
            if u.x == b and u.y != a:
                derived.append(MLBTriple(a, u.y, c))
            if u.y == a and u.x != b:
                derived.append(MLBTriple(u.x, b, c))
        # Theorem 3 with t as (a, b, c): join (a, c, d); with t as (a, c, d): join (a, b', c).
        for u in list(by_first[a]):
            if u.y == c and u.z != b:
                derived.append(MLBTriple(a, b, u.z))
            if u.z == b and u.y != c:
                derived.append(MLBTriple(a, u.y, c))
        todo.extend(d for d in derived if d not in closed and len(set(d)) == 3)
    return closed


def build_components(triples: Sequence[MLBTriple]) -> list[MLBTriple] | None:
    """Aho et al.'s BUILD: ``None`` if the triples fit one rooted tree, else a stuck group.

    A triple ``(x, y, z)`` is the rooted triplet xy|z. On each leaf set, link ``x`` and ``y``
    of every triple inside it; if everything ends in one component, no tree satisfies these
    triples and they are returned.
    """
    groups: list[tuple[set[int], list[MLBTriple]]] = []
    leaves = {v for t in triples for v in t}
    groups.append((leaves, list(triples)))
    while groups:
        leaf_set, inside = groups.pop()
        if len(leaf_set) < 3 or not inside:
            continue
        parent = {v: v for v in leaf_set}

        def find(v: int, parent: dict[int, int] = parent) -> int:
            while parent[v] != v:
                parent[v] = parent[parent[v]]
                v = parent[v]
            return v

        for t in inside:
            rx, ry = find(t.x), find(t.y)
            if rx != ry:
                parent[rx] = ry
        parts: dict[int, set[int]] = defaultdict(set)
        for v in leaf_set:
            parts[find(v)].add(v)
        if len(parts) == 1:
            return inside
        for part in parts.values():
            within = [t for t in inside if t.x in part and t.y in part and t.z in part]
            groups.append((part, within))
    return None


class TripleSet:
    """An explicit, consistent set of MLB triples, closed under 001 Theorems 1-3.

    Parameters
    ----------
    triples : iterable of (x, y, z)
        Item indices; each triple needs three distinct items.

    Raises
    ------
    ConflictingTriplesError
        If the set contradicts itself; the error names the conflicting triples.
    """

    def __init__(self, triples: Iterable[Iterable[int]] = ()) -> None:
        self.given = frozenset(_as_triple(t) for t in triples)
        closed = close_triples(self.given)
        conflicts = sorted(
            {
                tuple(sorted((t, MLBTriple(t.x, t.z, t.y))))
                for t in closed
                if MLBTriple(t.x, t.z, t.y) in closed
            }
        )
        if conflicts:
            raise ConflictingTriplesError([tuple(c) for c in conflicts])
        stuck = build_components(sorted(closed))
        if stuck is not None:
            raise ConflictingTriplesError([tuple(sorted(set(stuck) & self.given) or stuck)])
        self.closed = frozenset(closed)

    def __len__(self) -> int:
        return len(self.closed)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(sorted(self.closed))

    def as_array(self) -> NDArray[np.int32]:
        """The closed set as an int32 array of shape (n_triples, 3)."""
        if not self.closed:
            return np.zeros((0, 3), dtype=np.int32)
        return np.array(sorted(self.closed), dtype=np.int32)

    def violated_by(self, hierarchy: Hierarchy) -> list[MLBTriple]:
        """The closed triples that ``hierarchy`` does not satisfy."""
        depth = hierarchy.depth()
        return [t for t in sorted(self.closed) if not triple_holds(hierarchy, t, depth)]


def triple_holds(
    hierarchy: Hierarchy, t: tuple[int, int, int], depth: NDArray[np.intp] | None = None
) -> bool:
    """Whether ``hierarchy`` satisfies the MLB triple ``t`` (001 Properties 1-2).

    ``depth`` is ``hierarchy.depth()``, passed in when testing many triples.
    """
    if depth is None:
        depth = hierarchy.depth()

    def ancestors(item: int) -> list[int]:
        chain, v = [], int(hierarchy.item_node[item])
        while v >= 0:
            chain.append(v)
            v = int(hierarchy.parent[v])
        return chain

    ax = ancestors(t[0])
    ay, az = set(ancestors(t[1])), set(ancestors(t[2]))
    ca_xy = next(v for v in ax if v in ay)
    ca_xz = next(v for v in ax if v in az)
    return bool(depth[ca_xy] > depth[ca_xz])


@dataclass(frozen=True)
class FolderConstraints:
    """The MLB triples implied by labeled documents in a folder hierarchy, never materialised.

    Built from one folder path per document (``None`` for unlabeled documents). Documents may
    sit on inner folders (000 sec. 2). Folder node 0 is the root.

    Attributes
    ----------
    doc_folder : ndarray of shape (n_docs,), int32
        Folder node of each labeled document, ``-1`` for unlabeled ones.
    folder_parent, folder_depth : ndarray of shape (n_folders,), int32
    folder_total : ndarray of shape (n_folders,), int32
        Labeled documents in each folder's subtree.
    folder_names : tuple of str
    """

    doc_folder: NDArray[np.int32]
    folder_parent: NDArray[np.int32]
    folder_depth: NDArray[np.int32]
    folder_total: NDArray[np.int32]
    folder_names: tuple[str, ...]

    @classmethod
    def from_labels(cls, labels: Sequence[FolderPath | None]) -> FolderConstraints:
        labeled = [i for i, p in enumerate(labels) if p is not None]
        tree = Hierarchy.from_paths([tuple(labels[i]) for i in labeled])  # type: ignore[arg-type]
        doc_folder = np.full(len(labels), -1, dtype=np.int32)
        doc_folder[labeled] = tree.item_node
        return cls(
            doc_folder=doc_folder,
            folder_parent=tree.parent.astype(np.int32),
            folder_depth=tree.depth().astype(np.int32),
            folder_total=tree.subtree_item_counts().astype(np.int32),
            folder_names=tree.names,
        )

    @property
    def n_labeled(self) -> int:
        return int((self.doc_folder >= 0).sum())

    def merge_violations(self, a: Sequence[int], b: Sequence[int]) -> int:
        """How many implied triples merging document sets ``a`` and ``b`` violates.

        Reference implementation of the closed form the kernel uses (docs/architecture.md sec. 3):
        with N the deepest folder holding every labeled document of the union, a side whose
        labeled documents lie below a child c of N must hold all labeled documents of c;
        each one missing is violated once per (x in that side, z in the other side).
        """
        fa = self.doc_folder[np.asarray(a, dtype=np.intp)]
        fb = self.doc_folder[np.asarray(b, dtype=np.intp)]
        fa, fb = fa[fa >= 0], fb[fb >= 0]
        if fa.size == 0 or fb.size == 0:
            return 0
        return self.summary_violations(fa.size, self._lca_all(fa), fb.size, self._lca_all(fb))

    def summary_violations(self, n_a: int, lca_a: int, n_b: int, lca_b: int) -> int:
        """:meth:`merge_violations` from each side's labeled count and lowest common folder."""
        if n_a == 0 or n_b == 0:
            return 0
        top = self.lca(lca_a, lca_b)
        count = 0
        for own, other, lca in ((n_a, n_b, lca_a), (n_b, n_a, lca_b)):
            if lca != top:
                child = self._child_toward(top, lca)
                count += own * other * (int(self.folder_total[child]) - own)
        return count

    def summary_violations_many(
        self, n_a: int, lca_a: int, n_b: NDArray[np.int64], lca_b: NDArray[np.int64]
    ) -> NDArray[np.int64]:
        """:meth:`summary_violations` of one side against many, shape (len(n_b),).

        biHAC looks for the most similar cluster a violating one may merge with instead
        (``_bihac._closest_admissible``); at a thousand folders most candidates are
        inadmissible, and testing them one at a time in Python was half of a run.
        """
        n_b = np.asarray(n_b, dtype=np.int64)
        lca_b = np.asarray(lca_b, dtype=np.int64)
        count = np.zeros(n_b.size, dtype=np.int64)
        if n_a == 0:
            return count
        depth, parent = self.folder_depth, self.folder_parent
        chain = [lca_a]  # lca_a's ancestors, by depth: chain[d] is the one at depth d
        while chain[-1] != 0:
            chain.append(int(parent[chain[-1]]))
        up_a = np.array(chain[::-1], dtype=np.int64)
        # The top: lca_b raised to lca_a's depth at most, then until it is an ancestor of
        # lca_a (the root is, so this ends).
        top = lca_b.copy()
        while np.any(deep := depth[top] > len(up_a) - 1):
            top[deep] = parent[top[deep]]
        while np.any(off := up_a[depth[top]] != top):
            top[off] = parent[top[off]]
        below = depth[top] + 1  # depth of the child of the top toward a side
        side_a = lca_a != top
        child_a = up_a[np.minimum(below, len(up_a) - 1)]
        count += np.where(side_a, n_a * n_b * (self.folder_total[child_a] - n_a), 0)
        child_b = lca_b.copy()
        while np.any(deep := depth[child_b] > below):
            child_b[deep] = parent[child_b[deep]]
        side_b = lca_b != top
        count += np.where(side_b, n_b * n_a * (self.folder_total[child_b] - n_b), 0)
        return np.where(n_b == 0, 0, count)

    def lca(self, a: int, b: int) -> int:
        """Lowest common folder of folder nodes ``a`` and ``b``."""
        depth, parent = self.folder_depth, self.folder_parent
        while depth[a] > depth[b]:
            a = int(parent[a])
        while depth[b] > depth[a]:
            b = int(parent[b])
        while a != b:
            a, b = int(parent[a]), int(parent[b])
        return a

    def _lca_all(self, folders: NDArray[np.int32]) -> int:
        top = int(folders[0])
        for f in np.unique(folders):
            top = self.lca(top, int(f))
        return top

    def _child_toward(self, top: int, node: int) -> int:
        while int(self.folder_parent[node]) != top:
            node = int(self.folder_parent[node])
        return node


@dataclass(frozen=True)
class Constraints:
    """The union of hierarchy-implied and explicit MLB constraints over ``n_docs`` documents."""

    n_docs: int
    folders: FolderConstraints | None = None
    triples: TripleSet | None = None

    @classmethod
    def build(
        cls,
        n_docs: int,
        labels: Sequence[FolderPath | None] | None = None,
        triples: Iterable[Iterable[int]] | TripleSet | None = None,
    ) -> Constraints:
        """Validate and combine a folder labeling and explicit triples for ``n_docs`` docs."""
        folders = None
        if labels is not None:
            if len(labels) != n_docs:
                raise ValueError(f"got {len(labels)} labels for {n_docs} documents")
            if any(p is not None for p in labels):
                folders = FolderConstraints.from_labels(labels)
        triple_set = triples if isinstance(triples, TripleSet) else None
        if triples is not None and triple_set is None:
            triple_set = TripleSet(triples)
        if triple_set is not None:
            arr = triple_set.as_array()
            if arr.size and arr.max() >= n_docs:
                raise ValueError(f"triple item {int(arr.max())} out of range for {n_docs} docs")
            if not len(triple_set):
                triple_set = None
        return cls(n_docs, folders, triple_set)

    def kernel_arrays(self) -> tuple[NDArray[np.int32], ...]:
        """Arrays for the iHAC kernel: doc_folder, folder_parent, folder_depth, folder_total,
        triples (n_triples, 3). Absent parts are empty arrays."""
        if self.folders is None:
            empty = np.zeros(1, dtype=np.int32)
            doc_folder = np.full(self.n_docs, -1, dtype=np.int32)
            folder_arrays = (doc_folder, np.full(1, -1, np.int32), empty, empty)
        else:
            f = self.folders
            folder_arrays = (f.doc_folder, f.folder_parent, f.folder_depth, f.folder_total)
        tri = self.triples.as_array() if self.triples is not None else np.zeros((0, 3), np.int32)
        return (*folder_arrays, tri)

    def merge_violations(self, a: Sequence[int], b: Sequence[int]) -> int:
        """Triples newly violated by merging document sets ``a`` and ``b`` (reference code)."""
        count = self.folders.merge_violations(a, b) if self.folders is not None else 0
        if self.triples is not None:
            sa, sb = set(a), set(b)
            for x, y, z in self.triples.closed:
                if ((x in sa and z in sb) or (x in sb and z in sa)) and y not in sa | sb:
                    count += 1
        return count
