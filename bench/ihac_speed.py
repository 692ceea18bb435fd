"""iHAC speed and memory against exact unconstrained average linkage (scipy, fastcluster).

Synthetic tf-idf-like documents in 100 folders (10 top folders x 10 subfolders), 10 labeled
per folder (1,000 labeled), so that the implicit folder constraints are active. All three
methods cluster the same distances; only the clustering call is timed. iHAC's peak memory is
measured for the whole path from documents to dendrogram (distance matrix included) and
compared with one float32 n x n matrix.

    python bench/ihac_speed.py --sizes 2000,5000,10000,20000
"""

from __future__ import annotations

import argparse
import gc
import time

import numpy as np
import scipy.sparse as sp
from scipy.cluster.hierarchy import linkage

from foldwise.bench._evaluate import PeakMemory
from foldwise.core import Constraints, cosine_distances, ihac_from_distances


def synthetic_corpus(n: int, seed: int = 0, n_terms: int = 5000):
    """(X (n, n_terms) csr, folder paths, labels with 10 labeled per folder)."""
    rng = np.random.default_rng(seed)
    folders = [(f"t{a}", f"s{b}") for a in range(10) for b in range(10)]
    doc_folder = rng.integers(0, len(folders), size=n)
    rows, cols, vals = [], [], []
    for i, f in enumerate(doc_folder):
        top = int(f) // 10
        terms = (
            np.concatenate(
                [
                    rng.integers(0, n_terms, size=40),  # shared vocabulary
                    1000 + top * 100 + rng.integers(0, 100, size=8),  # top-folder topic
                    2000 + int(f) * 30 + rng.integers(0, 30, size=8),  # subfolder topic
                ]
            )
            % n_terms
        )
        rows.extend([i] * terms.size)
        cols.extend(terms.tolist())
        vals.extend(rng.uniform(0.1, 1.0, size=terms.size).tolist())
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, n_terms), dtype=np.float32)
    X.sum_duplicates()
    paths = [folders[int(f)] for f in doc_folder]
    labels: list[tuple[str, ...] | None] = [None] * n
    for f in range(len(folders)):
        members = np.flatnonzero(doc_folder == f)[:10]
        for i in members:
            labels[i] = paths[i]
    return X, paths, labels


def run(n: int) -> dict[str, float]:
    X, _, labels = synthetic_corpus(n)
    constraints = Constraints.build(n, labels)
    gc.collect()
    with PeakMemory() as memory:
        D = cosine_distances(X)
        started = time.perf_counter()
        ihac_from_distances(D, constraints)
        ihac_s = time.perf_counter() - started
    del D
    gc.collect()
    matrix_mb = n * n * 4 / 2**20
    D = cosine_distances(X).astype(np.float64)
    condensed = D[np.triu_indices(n, 1)]
    del D
    gc.collect()
    started = time.perf_counter()
    linkage(condensed, method="average")
    scipy_s = time.perf_counter() - started
    result = {
        "n": n,
        "labeled": sum(p is not None for p in labels),
        "ihac_s": ihac_s,
        "scipy_s": scipy_s,
        "peak_mb": memory.mb,
        "matrix_mb": matrix_mb,
    }
    try:
        import fastcluster
    except ImportError:
        result["fastcluster_s"] = float("nan")
    else:
        started = time.perf_counter()
        fastcluster.linkage(condensed, method="average", preserve_input=False)
        result["fastcluster_s"] = time.perf_counter() - started
    return result


def run_biihac(n: int, r_max: int = 50) -> None:
    """biiHAC with the paper's r_max on n synthetic documents (target: under 60 s at 2,000)."""
    from foldwise.core import BiiHAC

    X, _, labels = synthetic_corpus(n, seed=1)
    started = time.perf_counter()
    model = BiiHAC(r_max=r_max).fit(X, labels)
    print(
        f"biiHAC n={n} r_max={r_max}: {time.perf_counter() - started:.1f} s, "
        f"{model.n_runs_} runs, cluster error {model.cluster_errors_[0]:.3f} -> "
        f"{min(model.cluster_errors_):.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="2000,5000,10000")
    parser.add_argument("--biihac", type=int, default=2000, help="docs for the biiHAC run; 0 skips")
    args = parser.parse_args()
    # Compile the kernel outside the timings.
    ihac_from_distances(cosine_distances(synthetic_corpus(50)[0]))
    print(
        "n      labeled  ihac_s  scipy_s  fastcluster_s  ihac/scipy  ihac/fc  peak_mb  peak/matrix"
    )
    for n in (int(s) for s in args.sizes.split(",")):
        r = run(n)
        print(
            f"{r['n']:<6} {r['labeled']:<8} {r['ihac_s']:<7.2f} {r['scipy_s']:<8.2f} "
            f"{r['fastcluster_s']:<14.2f} {r['ihac_s'] / r['scipy_s']:<11.2f} "
            f"{r['ihac_s'] / r['fastcluster_s']:<8.2f} {r['peak_mb']:<8.0f} "
            f"{r['peak_mb'] / r['matrix_mb']:.2f}",
            flush=True,
        )
    if args.biihac:
        run_biihac(args.biihac)


if __name__ == "__main__":
    main()
