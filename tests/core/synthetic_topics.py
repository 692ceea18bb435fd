"""Small synthetic folder corpora whose right answers are known (placement, extended tree)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from foldwise.core import FolderPath

# Each folder has its own 10 terms; "sport" also has terms shared by all its subfolders, and
# every document draws a few collection-wide terms.
FOLDERS: tuple[FolderPath, ...] = (
    ("sport", "football"),
    ("sport", "tennis"),
    ("sport", "golf"),
    ("cooking",),
    ("music",),
    ("travel",),
)
SHARED: dict[FolderPath, int] = {("sport",): 10, (): 10}


def topic_corpus(
    seed: int = 0, per_folder: int = 15, own: int = 6, parent: int = 4, common: int = 3
) -> tuple[sp.csr_matrix, list[str], list[FolderPath]]:
    """Tf-idf-like rows (L2-normalised counts), term names and each document's true folder."""
    rng = np.random.default_rng(seed)
    names: list[str] = []
    block: dict[FolderPath, np.ndarray] = {}
    for f in [*FOLDERS, *SHARED]:
        size = SHARED.get(f, 10)
        label = "/".join(f) or "common"
        block[f] = np.arange(len(names), len(names) + size)
        names += [f"{label.replace('/', '_')}{k}" for k in range(size)]
    rows, truth = [], []
    for f in FOLDERS:
        for _ in range(per_folder):
            counts = np.zeros(len(names))
            np.add.at(counts, rng.choice(block[f], own), 1)
            if f[:1] == ("sport",):
                np.add.at(counts, rng.choice(block[("sport",)], parent), 1)
            np.add.at(counts, rng.choice(block[()], common), 1)
            rows.append(counts)
            truth.append(f)
    X = sp.csr_matrix(normalize(np.log1p(np.array(rows))))
    return X, names, truth


def label_some(
    truth: list[FolderPath], n_labeled: int, hidden: set[FolderPath], seed: int = 0
) -> list[FolderPath | None]:
    """Label ``n_labeled`` documents per folder, none of the hidden folders."""
    rng = np.random.default_rng(seed)
    labels: list[FolderPath | None] = [None] * len(truth)
    for f in sorted(set(truth)):
        if f in hidden:
            continue
        idx = [i for i, t in enumerate(truth) if t == f]
        for i in rng.choice(idx, n_labeled, replace=False):
            labels[int(i)] = f
    return labels


def genre_corpus(
    seed: int = 0, n_folders: int = 7, per_folder: int = 20, genre_pages: int = 5
) -> tuple[sp.csr_matrix, list[FolderPath], np.ndarray]:
    """Folders of one level, each with ``genre_pages`` pages of one kind shared by all
    folders (as a manual's setup pages: mostly the same words everywhere, one word of their
    own folder) and topic pages of its own words; rows, true folders and the genre mask."""
    rng = np.random.default_rng(seed)
    own, kinds, common = 10, 10, 10
    genre0 = n_folders * own
    common0 = genre0 + kinds
    rows, truth, genre = [], [], []
    for k in range(n_folders):
        words = np.arange(k * own, (k + 1) * own)
        for j in range(per_folder):
            counts = np.zeros(common0 + common)
            if j < genre_pages:
                np.add.at(counts, rng.choice(np.arange(genre0, common0), 6), 1)
                np.add.at(counts, rng.choice(words, 1), 1)
            else:
                np.add.at(counts, rng.choice(words, 6), 1)
            np.add.at(counts, rng.choice(np.arange(common0, common0 + common), 3), 1)
            rows.append(counts)
            truth.append((f"folder{k}",))
            genre.append(j < genre_pages)
    X = sp.csr_matrix(normalize(np.log1p(np.array(rows))))
    return X, truth, np.array(genre)


def family_corpus(
    seed: int, families: int = 6, per_family: int = 8, per_class: int = 30
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Count rows of classes in families: a class shares its family's words, so the hard
    negatives of a class are its siblings. Returns (rows L2-normalised, class of each)."""
    rng = np.random.default_rng(seed)
    n_classes = families * per_family
    vocab = 40 + 10 * families + 6 * n_classes
    rows, y = [], []
    for c in range(n_classes):
        family = 40 + 10 * (c // per_family) + np.arange(10)
        own = 40 + 10 * families + 6 * c + np.arange(6)
        for _ in range(per_class):
            counts = np.zeros(vocab)
            np.add.at(counts, rng.integers(0, 40, 14), 1)  # common words
            np.add.at(counts, rng.choice(family, 3), 1)
            np.add.at(counts, rng.choice(own, 1), 1)
            rows.append(counts)
            y.append(c)
    return sp.csr_matrix(normalize(np.log1p(np.array(rows)))), np.array(y)
