"""Time the measures on n documents: an average-linkage dendrogram vs a 3-level folder tree.

Run: .venv/bin/python bench/measures_bench.py [n]   (default n = 5000; target < 5 s each)
The first call compiles the numba kernels (cached on disk afterwards), so it is timed apart.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from scipy.cluster.hierarchy import linkage

from foldwise.core import FScore, Hierarchy, h_correlation, hai, hierarchical_f_score


def main(n: int = 5000) -> None:
    rng = np.random.default_rng(0)
    # 4 x 4 x 4 leaf folders; documents drawn near their leaf folder's centre
    paths = [tuple(rng.choice(list("abcd"), size=3)) for _ in range(n)]
    leaf = np.array(["/".join(p) for p in paths])
    _, code = np.unique(leaf, return_inverse=True)
    centres = rng.normal(size=(code.max() + 1, 20))
    X = centres[code] + rng.normal(scale=1.5, size=(n, 20))
    learned = Hierarchy.from_linkage(linkage(X, method="average"))
    reference = Hierarchy.from_paths(paths)

    small = rng.choice(n, size=50, replace=False)
    start = time.perf_counter()
    h_correlation(learned, reference, items=small)
    hai(learned, reference, items=small)
    print(f"numba compile / cache load: {time.perf_counter() - start:.2f} s")

    for label, run in [
        ("h_correlation asymmetric, node", lambda: h_correlation(learned, reference)),
        (
            "h_correlation symmetric, equal",
            lambda: h_correlation(learned, reference, symmetric=True, weighting="equal"),
        ),
        ("hierarchical_f_score", lambda: hierarchical_f_score(learned, reference, np.arange(n))),
        ("hai", lambda: hai(learned, reference)),
    ]:
        start = time.perf_counter()
        value = run()
        shown = f"leaf {value.leaf:.4f}" if isinstance(value, FScore) else f"{value:.4f}"
        print(f"n={n} {label}: {time.perf_counter() - start:.2f} s  ({shown})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
