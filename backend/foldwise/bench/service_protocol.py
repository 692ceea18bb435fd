"""The service-level protocol of ``bench/service_eval.py``, as pure functions.

A person's archive: most documents of every folder are filed; new ones arrive, some of a
topic the person has no folder for. The protocol (docs/placement.md, "Service-level
benchmark"):

* split: hide one leaf folder (setting 2) or one subtree (setting 3) entirely; from every
  other folder hold back ``new_share`` of the documents as new;
* a simulated person answers "is a closer to b or to c?" from the true hierarchy (a tie when
  b and c are equally related to a's true folder) and moves misplaced documents;
* the measures: exact placement, misplacement, best-match F of hidden folders against
  proposals, churn between two trees.

Documents at the corpus root are left out: a zip import leaves them unfiled, so the root is
not a folder the service can file into.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from scipy.stats import binom

from foldwise.bench._corpus import Corpus, CorpusError, load_corpus
from foldwise.core import FolderPath

#: Share of a hidden subtree's documents in the whole corpus that setting 3 aims at.
SUBTREE_SHARE = (0.05, 0.25)


@dataclass(frozen=True)
class ServiceSplit:
    """Corpus indices imported as filed and posted as new; ``hidden`` is the hidden folder
    (setting 2) or the top of the hidden subtree (setting 3)."""

    setting: int
    hidden: FolderPath
    filed: list[int]
    new: list[int]

    def is_hidden(self, folder: FolderPath) -> bool:
        """Whether ``folder`` lies in the hidden leaf or subtree."""
        return tuple(folder[: len(self.hidden)]) == self.hidden


def split_for_service(
    corpus: Corpus, setting: int, seed: int, new_share: float = 0.4
) -> ServiceSplit:
    """Hide a leaf (setting 2) or a subtree (setting 3); hold back ``new_share`` elsewhere.

    A folder with two or more documents keeps at least one filed, so that every known
    folder exists in the imported hierarchy with a document.
    """
    if setting not in (2, 3):
        raise ValueError(f"setting must be 2 or 3, got {setting!r}")
    if not 0.0 < new_share < 1.0:
        raise ValueError(f"new_share must lie in (0, 1), got {new_share!r}")
    rng = np.random.default_rng(seed)
    members: dict[FolderPath, list[int]] = {}
    for i, folder in enumerate(corpus.folders):
        if folder:
            members.setdefault(tuple(folder), []).append(i)
    folders = sorted(members)
    if len(folders) < 3:
        raise CorpusError(f"the corpus needs at least 3 folders with documents, has {len(folders)}")
    every = sorted({f[:d] for f in folders for d in range(1, len(f) + 1)})

    def below(top: FolderPath) -> int:
        return sum(len(ids) for f, ids in members.items() if f[: len(top)] == top)

    def has_children(f: FolderPath) -> bool:
        return any(len(g) > len(f) and g[: len(f)] == f for g in every)

    if setting == 2:
        leaves = [f for f in folders if not has_children(f)]
        candidates = [f for f in leaves if len(members[f]) >= 5] or [
            f for f in leaves if len(members[f]) >= 2
        ]
    else:
        inner = [f for f in every if has_children(f) and below(f) < len(corpus)]
        low, high = (share * len(corpus) for share in SUBTREE_SHARE)
        candidates = [f for f in inner if low <= below(f) <= high] or inner
    if not candidates:
        kind = "leaf folder with 2 or more documents" if setting == 2 else "subtree"
        raise CorpusError(f"the corpus has no {kind} to hide (setting {setting})")
    hidden = candidates[int(rng.integers(len(candidates)))]
    filed: list[int] = []
    new: list[int] = []
    for folder in folders:
        ids = members[folder]
        if folder[: len(hidden)] == hidden:
            new += ids
            continue
        order = [ids[k] for k in rng.permutation(len(ids))]
        k = round(len(order) * new_share)
        if len(order) >= 2:
            k = min(k, len(order) - 1)
        new += order[:k]
        filed += order[k:]
    return ServiceSplit(setting, hidden, sorted(filed), sorted(new))


def split_arguments(description: str) -> argparse.ArgumentParser:
    """A command line parser with the arguments every benchmark of this protocol takes: the
    corpus, ``--settings`` (2 and/or 3) and ``--seeds``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("corpus", type=Path, help="a folder tree of text documents")
    parser.add_argument("--settings", type=int, nargs="+", default=[2, 3], choices=[2, 3])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    return parser


def load_for_service(path: Path, settings: Sequence[int], seed: int) -> Corpus:
    """The corpus at ``path``, checked to split in each of ``settings`` (:class:`CorpusError`
    where it cannot), so that a benchmark fails before its first run."""
    corpus = load_corpus(path)
    for setting in settings:
        split_for_service(corpus, setting, seed)
    return corpus


def common_depth(a: Sequence[str], b: Sequence[str]) -> int:
    """Depth of the deepest common ancestor folder of folders ``a`` and ``b``."""
    d = 0
    while d < min(len(a), len(b)) and a[d] == b[d]:
        d += 1
    return d


def closer_truth(a: FolderPath, b: FolderPath, c: FolderPath) -> Literal["b", "c", "tie"]:
    """The true answer to "is a closer to b or to c?" for documents in folders a, b, c.

    The one sharing the deeper common ancestor with a; equal depths are a tie: the person
    has no answer (001 sec. 3: an MLB triple needs a strictly deeper common ancestor).
    """
    db, dc = common_depth(a, b), common_depth(a, c)
    return "tie" if db == dc else ("b" if db > dc else "c")


def violates(placed: FolderPath, b: FolderPath, c: FolderPath) -> bool:
    """Whether a document placed in ``placed`` violates "it is closer to b than to c"."""
    return common_depth(placed, c) > common_depth(placed, b)


def best_match_f(hidden: Mapping[FolderPath, set[int]], groups: Sequence[set[int]]) -> float:
    """Document-weighted mean over hidden folders of their best F-measure against a group.

    F = 2 |G ∩ H| / (|G| + |H|); 0 for a hidden folder no group touches (or no groups).
    """
    total = sum(len(h) for h in hidden.values())
    if total == 0:
        return 0.0
    score = 0.0
    for h in hidden.values():
        best = max((2 * len(g & h) / (len(g) + len(h)) for g in groups if g), default=0.0)
        score += len(h) * best
    return score / total


def paired_p(wins: int, losses: int) -> float | None:
    """Exact two-sided McNemar p-value of two placements of the same documents.

    ``wins``: documents the first places right and the second wrong; ``losses`` the other
    way round. Under "equally good" each such document goes either way with probability
    one half, so the p-value is twice the binomial tail of the smaller count (at most 1).
    None when the two never disagree on right and wrong.
    """
    n = wins + losses
    if n == 0:
        return None
    return min(1.0, 2.0 * float(binom.cdf(min(wins, losses), n, 0.5)))


def churn(before: Mapping[int, object], after: Mapping[int, object]) -> float:
    """Share of the documents of ``before`` whose target differs (or is gone) in ``after``."""
    if not before:
        return 0.0
    return sum(after.get(d) != t for d, t in before.items()) / len(before)


def result_line(result: Mapping[str, object], keys: Sequence[str] | None = None) -> str:
    """``key=value`` for each of ``keys`` of a benchmark run (default: all of them), floats
    to three decimals: the line the service benchmarks print per run."""
    shown = result.keys() if keys is None else keys
    return " ".join(
        f"{k}={result[k]:.3f}" if isinstance(result[k], float) else f"{k}={result[k]}"
        for k in shown
    )


def share(flags: Sequence[bool]) -> float | None:
    """Mean of ``flags``, ``None`` when empty (so that a missing figure is not a zero)."""
    return float(np.mean(flags)) if len(flags) else None
