"""compile_kernels leaves nothing for a person's first recluster to compile
(docs/recluster.md, "Speed"): after it, the core's fits and measures on real text add
nothing to numba's cache."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

WORKLOAD = textwrap.dedent(
    """
    import numpy as np, scipy.sparse as sp
    from foldwise.core import (
        HAC, IHAC, BiHAC, BiiHAC, FolderPlacement, Hierarchy, common_ancestor_matrix,
        h_correlation, text_features,
    )
    words = ["alpha beta gamma", "beta gamma delta", "delta epsilon zeta", "zeta eta theta"]
    texts = [f"{words[i % 4]} {words[(i + 1) % 4]} item{i} common words here" for i in range(24)]
    X32, _ = text_features(texts, min_term_count=1)
    folders = [("a",), ("b", "c"), ("b", "d"), None] * 6
    for X in (sp.csr_matrix(X32, dtype=np.float64), X32):
        IHAC().fit(X, folders, triples=[(3, 7, 1)])
        HAC().fit(X)
        BiHAC(r_max=2, r_ni=1).fit(X, folders)
        BiiHAC(r_max=2, r_ni=1).fit(X, folders)
        FolderPlacement(max_svm_pairs=0).fit(X, folders)  # sampled SVMs: hard negatives
    truth = Hierarchy.from_paths([f or ("e",) for f in folders])
    common_ancestor_matrix(truth)
    h_correlation(truth, truth, symmetric=True)
    """
)


def _cached(cache: Path) -> set[str]:
    return {p.name for p in cache.rglob("*.nbc")}


@pytest.mark.slow
def test_after_compile_kernels_a_fit_compiles_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    run = [sys.executable, "-c"]
    compiled = subprocess.run(
        [*run, "from foldwise.core import compile_kernels; compile_kernels()"],
        env=env, capture_output=True, timeout=600,
    )  # fmt: skip
    assert compiled.returncode == 0, compiled.stderr.decode()
    before = _cached(tmp_path)
    assert len(before) >= 17  # the iHAC loop, its admissibility tests, the measures

    worked = subprocess.run([*run, WORKLOAD], env=env, capture_output=True, timeout=600)

    assert worked.returncode == 0, worked.stderr.decode()
    assert _cached(tmp_path) - before == set()
