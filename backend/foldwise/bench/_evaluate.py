"""One benchmark run: a method on one sample, and the papers' measures of what it made."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from foldwise.bench._corpus import Corpus, Sample
from foldwise.bench._methods import METHODS, MethodOutput
from foldwise.core import (
    FolderPath,
    Hierarchy,
    extended_tree,
    h_correlation,
    hai,
    hierarchical_f_score,
    proposal_f_score,
    text_features,
)


@dataclass
class RunRecord:
    """One line of ``OUT.json``: a method on one setting and seed."""

    method: str
    setting: int
    seed: int
    n_docs: int
    n_labeled: int
    h_corr: float
    h_corr_unlabeled: float
    f_leaf: float
    f_higher: float
    hai: float
    seconds: float
    peak_mb: float
    placement_known: float
    placement_ancestor: float
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        record = asdict(self)
        extra = record.pop("extra")
        record.update(extra)
        return {
            k: (None if isinstance(v, float) and not np.isfinite(v) else v)
            for k, v in record.items()
        }


class PeakMemory:
    """Peak resident memory above the starting point while the block runs, in MB.

    Sampled from /proc every 5 ms: numba and BLAS allocate outside Python's allocator, so
    tracemalloc would miss the distance matrix.
    """

    def __enter__(self) -> PeakMemory:
        self.start = self.peak = _rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, _rss_mb())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_mb())

    @property
    def mb(self) -> float:
        return round(self.peak - self.start, 1)


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # not Linux: report no figure rather than a wrong one
        return 0.0


def _is_at_or_above(placed: FolderPath | None, truth: FolderPath) -> bool:
    return placed is not None and truth[: len(placed)] == placed


def placement_scores(
    placed: list[FolderPath | None],
    truth: list[FolderPath],
    unlabeled: list[int],
    known: set[FolderPath],
) -> tuple[float, float]:
    """(exact, ancestor-or-exact) share of new documents of labeled folders, 0..1."""
    targets = [i for i in unlabeled if truth[i] in known]
    if not targets:
        return float("nan"), float("nan")
    exact = sum(placed[i] == truth[i] for i in targets)
    ancestor = sum(_is_at_or_above(placed[i], truth[i]) for i in targets)
    return exact / len(targets), ancestor / len(targets)


def evaluate_run(
    corpus: Corpus, sample: Sample, method: str, setting: int, seed: int
) -> tuple[RunRecord, MethodOutput]:
    """Run ``method`` on ``sample`` and measure it against the corpus folders."""
    texts = [corpus.texts[d] for d in sample.docs]
    truth = [corpus.folders[d] for d in sample.docs]
    labeled = set(sample.labeled)
    labels: list[FolderPath | None] = [
        truth[i] if i in labeled else None for i in range(len(truth))
    ]
    unlabeled = [i for i in range(len(truth)) if i not in labeled]
    X, features = text_features(texts)
    started = time.perf_counter()
    with PeakMemory() as memory:
        output = METHODS[method](X, labels, seed)
    seconds = time.perf_counter() - started
    proposal_f = float("nan")
    confident: list[FolderPath | None] | None = None
    hidden = {h: [i for i in unlabeled if truth[i] == h] for h in sample.hidden}
    if output.linkage is not None and (hidden or output.tree_placement):
        tree = extended_tree(
            output.linkage,
            X,
            labels,
            weights=output.weights,
            term_names=list(features.vocabulary_),
            placement=output.placement,
        )
        if hidden:  # settings 2 and 3: how well proposals recover the hidden folders
            proposal_f = proposal_f_score(tree, {h: d for h, d in hidden.items() if d})
        if output.tree_placement:
            # The tree proposes each document's most probable existing folder (with its
            # confidence), and files it only as deep as it is confident (003 sec. 3.1).
            confident = list(output.placements)
            for p in tree.placements:
                output.placements[p.document] = p.best_existing
                confident[p.document] = p.confident_folder
    reference = Hierarchy.from_paths(truth)
    if output.linkage is not None:
        learned = Hierarchy.from_linkage(output.linkage)
    else:  # the classifier's answer as a folder tree: labeled where they are, new where placed
        learned = Hierarchy.from_paths([p if p is not None else () for p in output.placements])
    fscore = hierarchical_f_score(learned, reference, np.asarray(unlabeled))
    known = {truth[i] for i in labeled}
    exact, ancestor = placement_scores(output.placements, truth, unlabeled, known)
    confident_exact = float("nan")
    if confident is not None:
        confident_exact, ancestor = placement_scores(confident, truth, unlabeled, known)
    record = RunRecord(
        method=method,
        setting=setting,
        seed=seed,
        n_docs=len(truth),
        n_labeled=len(labeled),
        h_corr=h_correlation(learned, reference),
        h_corr_unlabeled=h_correlation(learned, reference, items=np.asarray(unlabeled)),
        f_leaf=fscore.leaf,
        f_higher=fscore.higher,
        hai=hai(learned, reference),
        seconds=round(seconds, 3),
        peak_mb=memory.mb,
        placement_known=exact,
        placement_ancestor=ancestor,
        extra={"proposal_f": proposal_f, "placement_confident": confident_exact},
    )
    return record, output
