"""A corpus given as a directory tree of text files, and the papers' sampling protocol.

The folders are the reference hierarchy; a document's folder is the directory it sits in
(possibly an inner folder, 000 sec. 2). Sampling follows 001 sec. 5.2: up to
``max_per_folder`` documents per folder, ``k`` of them labeled, from every folder (setting 1),
from all but one leaf folder (setting 2), or from all but one whole subtree (setting 3).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from foldwise.core import FolderPath

TEXT_SUFFIXES = {".txt", ".md", ".rst", ".text", ".html", ".htm", ".eml", ""}


class CorpusError(ValueError):
    """A corpus that cannot be benchmarked (missing, empty, unreadable)."""


@dataclass(frozen=True)
class Corpus:
    """Documents of a folder tree: relative paths, texts and folder paths, all aligned."""

    root: Path
    paths: list[str]
    texts: list[str]
    folders: list[FolderPath]

    def __len__(self) -> int:
        return len(self.paths)


def build_paths_error(source: Path, target: Path) -> str | None:
    """Why a corpus cannot be built from ``source`` into ``target`` (a corpus builder's
    arguments: an existing directory, and a new or empty one), or None."""
    if not source.is_dir():
        return f"{source} is not a directory"
    if target.exists() and any(target.iterdir()):
        return f"{target} is not empty"
    return None


def load_corpus(root: str | Path) -> Corpus:
    """Read every text file under ``root``; skip unreadable ones with a warning."""
    root = Path(root)
    if not root.is_dir():
        raise CorpusError(f"corpus directory not found: {root}")
    paths, texts, folders = [], [], []
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = file.relative_to(root)
        if (
            any(part.startswith(".") for part in rel.parts)
            or file.suffix.lower() not in TEXT_SUFFIXES
        ):
            continue
        try:
            text = file.read_text(encoding="utf-8", errors="strict")
        except (OSError, UnicodeDecodeError) as exc:
            warnings.warn(f"skipping unreadable file {rel}: {exc}", stacklevel=2)
            continue
        if not text.strip():
            warnings.warn(f"skipping empty file {rel}", stacklevel=2)
            continue
        paths.append(rel.as_posix())
        texts.append(text)
        folders.append(tuple(rel.parts[:-1]))
    if not paths:
        raise CorpusError(f"no readable text documents under {root}")
    if len(set(folders)) < 2:
        raise CorpusError(
            f"the corpus needs at least two folders to compare with, found {len(set(folders))}"
        )
    return Corpus(root, paths, texts, folders)


@dataclass(frozen=True)
class Sample:
    """One benchmark draw: indices into the corpus, and which of them are labeled.

    Attributes
    ----------
    docs : list of int
        Corpus indices of the sampled documents.
    labeled : list of int
        Positions in ``docs`` (not corpus indices) of the labeled documents.
    hidden : list of FolderPath
        Folders whose documents got no label (settings 2 and 3).
    """

    docs: list[int]
    labeled: list[int]
    hidden: list[FolderPath]


def _is_under(folder: FolderPath, top: FolderPath) -> bool:
    return folder[: len(top)] == top


def draw_sample(corpus: Corpus, *, setting: int, k: int, max_per_folder: int, seed: int) -> Sample:
    """The papers' protocol (001 sec. 5.2) with a seeded RNG.

    A folder with ``m`` sampled documents gets ``min(k, m - 1)`` labels, so every known folder
    keeps at least one new document to evaluate; a folder with a single document gets none.
    Setting 2 hides a random leaf folder, setting 3 a random whole subtree (an inner folder and
    everything below it); both are drawn among folders with at least 2 sampled documents.
    """
    if setting not in (1, 2, 3):
        raise ValueError(f"setting must be 1, 2 or 3, got {setting!r}")
    if k < 1 or max_per_folder < 1:
        raise ValueError(
            f"labeled-per-folder and max-per-folder must be >= 1, got {k}, {max_per_folder}"
        )
    rng = np.random.default_rng(seed)
    by_folder: dict[FolderPath, list[int]] = {}
    for index, folder in enumerate(corpus.folders):
        by_folder.setdefault(folder, []).append(index)
    sampled: dict[FolderPath, list[int]] = {}
    for folder in sorted(by_folder):
        members = by_folder[folder]
        take = min(len(members), max_per_folder)
        sampled[folder] = sorted(rng.choice(members, size=take, replace=False).tolist())
    hidden = _hidden_folders(sampled, setting, rng)
    docs: list[int] = []
    labeled: list[int] = []
    for folder in sorted(sampled):
        members = sampled[folder]
        n_label = 0 if folder in hidden else min(k, len(members) - 1)
        chosen = (
            set(rng.choice(members, size=n_label, replace=False).tolist()) if n_label else set()
        )
        for doc in members:
            if doc in chosen:
                labeled.append(len(docs))
            docs.append(doc)
    return Sample(docs, labeled, sorted(hidden))


def _hidden_folders(
    sampled: dict[FolderPath, list[int]], setting: int, rng: np.random.Generator
) -> set[FolderPath]:
    if setting == 1:
        return set()
    folders = [f for f in sampled if f]
    if setting == 2:
        leaves = [
            f
            for f in folders
            if len(sampled[f]) >= 2 and not any(g != f and _is_under(g, f) for g in folders)
        ]
        if not leaves:
            raise ValueError("setting 2 needs a leaf folder with at least 2 documents")
        return {leaves[int(rng.integers(len(leaves)))]}
    total = sum(len(v) for v in sampled.values())
    inner = sorted({g[:depth] for g in folders for depth in range(1, len(g))})
    size = {f: sum(len(sampled[g]) for g in folders if _is_under(g, f)) for f in inner}
    # Prefer subtrees that leave most of the collection known: hiding a subtree that holds
    # most documents would test "no labels", not "one unknown subtree".
    candidates = [f for f in inner if 2 <= size[f] <= total // 3] or [
        f for f in inner if size[f] >= 2
    ]
    if not candidates:
        raise ValueError("setting 3 needs a folder with subfolders")
    top = candidates[int(rng.integers(len(candidates)))]
    return {f for f in folders if _is_under(f, top)}
