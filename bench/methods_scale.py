"""Fit times of Constrained-Divisive (002) and the probabilistic hierarchy (003).

Synthetic tf-idf-like documents in 100 folders (10 top folders x 10 subfolders, the corpus of
``ihac_speed.py``), 10 labeled per folder; or the documents of a folder tree of text files
(``--corpus``), every document labeled by its folder. Each configuration is one ``fit`` from
the term matrix to ``linkage_`` (distances and LSI included), timed with ``perf_counter``.

    python bench/methods_scale.py --sizes 500,1000,2000
    python bench/methods_scale.py --corpus path/to/python-docs
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from foldwise.core import ConstrainedDivisive, ProbabilisticHierarchy, text_features
from ihac_speed import synthetic_corpus

CONFIGS: dict[str, Callable[[], Any]] = {
    "divisive": lambda: ConstrainedDivisive(),
    "divisive level=1": lambda: ConstrainedDivisive(level=1),
    "divisive level=(1,2)": lambda: ConstrainedDivisive(level=(1, 2)),
    "ggm modified_l2": lambda: ProbabilisticHierarchy(random_state=0),
    "ggm confusion": lambda: ProbabilisticHierarchy(similarity="confusion", random_state=0),
    "ggm sample": lambda: ProbabilisticHierarchy(similarity="sample", random_state=0),
}


def corpus_from_folder(root: Path) -> tuple[Any, list[tuple[str, ...]]]:
    files = sorted(p for p in root.rglob("*.txt") if p.is_file())
    texts = [p.read_text(errors="replace") for p in files]
    paths = [p.relative_to(root).parent.parts for p in files]
    X, _ = text_features(texts)
    return X, paths


def time_fits(X: Any, labels: list[tuple[str, ...] | None]) -> None:
    for name, make in CONFIGS.items():
        model = make()
        y = labels if name != "divisive" else None
        started = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - started
        extra = f"K={model.n_components_}" if hasattr(model, "n_components_") else ""
        print(f"  {name:22s} {seconds:7.2f} s  {extra}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000", help="comma-separated document counts")
    parser.add_argument("--corpus", type=Path, help="folder tree of .txt files instead")
    args = parser.parse_args()
    if args.corpus:
        X, paths = corpus_from_folder(args.corpus)
        print(f"{args.corpus}: {X.shape[0]} documents, {X.shape[1]} terms")
        time_fits(X, [p if p else None for p in paths])
        return
    for n in (int(s) for s in args.sizes.split(",")):
        X, _, labels = synthetic_corpus(n)
        n_labeled = sum(p is not None for p in labels)
        print(f"synthetic: {n} documents, {X.shape[1]} terms, {n_labeled} labeled")
        time_fits(X, labels)


if __name__ == "__main__":
    main()
