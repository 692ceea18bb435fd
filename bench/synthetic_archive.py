"""A generated archive for scale: folders three levels deep, documents of real English words.

No real hierarchy of 100,000 documents in 1,000 folders is at hand (python-docs has 1.4
million words in all), so the recluster bench's largest runs use this one: scale, not
realism. Every folder of a 10 x 10 x 10 tree (by default) draws a few topic words from a
shared vocabulary (the words of python-docs, so that language detection and stemming see
English); a document of a leaf mixes words of the whole vocabulary (Zipf), of its top folder,
of its middle folder and of its leaf. Topic words of different folders may overlap, as real
folders' do.

    python bench/synthetic_archive.py --branching 10 10 10 --filed 100 --new 5   # counts
"""

from __future__ import annotations

import argparse
import re
from itertools import product
from pathlib import Path

import numpy as np

from default_corpus import PYTHON_DOCS as DEFAULT_CORPUS

#: Share of a document's words drawn from the whole vocabulary; the rest comes from the
#: topic words of its folder and of each ancestor, split evenly. At .88 a plain one-vs-rest
#: SVM places .895 of new documents exact in 200 folders and .769 in 1,000 (real corpora
#: of docs/placement.md: .60-.91); at .55 it placed every one.
BACKGROUND = 0.88
TOPIC_WORDS = 25


def vocabulary(corpus: Path) -> list[str]:
    """Lower-case alphabetic words of 3-15 letters of the corpus, most frequent first."""
    counts: dict[str, int] = {}
    for page in sorted(corpus.rglob("*.txt")):
        for word in re.findall(r"[a-z]{3,15}", page.read_text(errors="ignore").lower()):
            counts[word] = counts.get(word, 0) + 1
    return sorted(counts, key=lambda w: (-counts[w], w))


def collection(
    corpus: Path,
    branching: tuple[int, ...],
    filed: int,
    new: int,
    words: int = 60,
    seed: int = 0,
) -> tuple[list[tuple[tuple[str, ...], str, bytes]], list[tuple[str, str, str]]]:
    """(filed entries: folder path, filename, bytes), (new: true folder path, filename, text),
    in the shapes of ``recluster_bench.collection``; ``filed`` and ``new`` are per leaf."""
    rng = np.random.default_rng(seed)
    vocab = np.array(vocabulary(corpus))
    # Zipf-like background: the corpus's own frequency order, weight 1 / rank.
    background = 1.0 / np.arange(1, vocab.size + 1)
    cdf = np.cumsum(background) / background.sum()
    # Topic words avoid the 300 most frequent words, which every folder shares anyway.
    pool = np.arange(min(300, vocab.size // 10), vocab.size)
    topics: dict[tuple[int, ...], np.ndarray] = {}
    for depth in range(1, len(branching) + 1):
        for node in product(*(range(b) for b in branching[:depth])):
            topics[node] = rng.choice(pool, size=TOPIC_WORDS, replace=False)
    share = (1.0 - BACKGROUND) / len(branching)
    entries: list[tuple[tuple[str, ...], str, bytes]] = []
    fresh: list[tuple[str, str, str]] = []
    for leaf in product(*(range(b) for b in branching)):
        folder = tuple(
            f"{'tml'[min(d, 2)]}{i}-{vocab[topics[leaf[: d + 1]][0]]}" for d, i in enumerate(leaf)
        )
        for k in range(filed + new):
            n_topic = rng.binomial(words, share, size=len(branching))
            n_background = max(words - int(n_topic.sum()), 0)
            parts = [np.minimum(np.searchsorted(cdf, rng.random(n_background)), vocab.size - 1)]
            for d, n in enumerate(n_topic):
                parts.append(rng.choice(topics[leaf[: d + 1]], size=n))
            tokens = np.concatenate(parts)
            rng.shuffle(tokens)
            text = " ".join(vocab[tokens])
            name = f"{folder[-1]}-{k:03d}.txt"
            if k < filed:
                entries.append((folder, name, text.encode()))
            else:
                fresh.append(("/".join(folder), name, text))
    return entries, fresh


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--branching", type=int, nargs="+", default=[10, 10, 10])
    parser.add_argument("--filed", type=int, default=100)
    parser.add_argument("--new", type=int, default=5)
    parser.add_argument("--words", type=int, default=60)
    args = parser.parse_args()
    entries, fresh = collection(
        args.corpus, tuple(args.branching), args.filed, args.new, args.words
    )
    print(f"{len(entries)} filed, {len(fresh)} new; e.g. {'/'.join(entries[0][0])}:")
    print(entries[0][2].decode()[:300])


if __name__ == "__main__":
    main()
