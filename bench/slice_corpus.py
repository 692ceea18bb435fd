"""A corpus with big folders, cut from a real one: the second corpus of docs/placement.md.

The ``--pages`` longest pages of CORPUS (documents in a subfolder) are each cut into
``--slices`` documents of consecutive words; each page becomes a leaf folder under its own
folder path. python-docs with the defaults gives 1,600 documents in 20 leaf folders, 80 per
folder: the service's setting of many filed documents per folder. Usage::

    python bench/slice_corpus.py ../shared/corpora/python-docs /tmp/sliced80
    python bench/service_eval.py /tmp/sliced80 --r-max 10
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def slice_corpus(source: Path, target: Path, pages: int, slices: int) -> int:
    """Write the sliced corpus; returns the number of documents written."""
    candidates = [p for p in source.rglob("*.txt") if p.parent != source]
    longest = sorted(candidates, key=lambda p: (-len(p.read_text().split()), p.as_posix()))
    written = 0
    for page in longest[:pages]:
        words = page.read_text().split()
        per = len(words) // slices
        if per == 0:
            raise ValueError(f"{page} has {len(words)} words, fewer than {slices} slices")
        folder = target / page.parent.relative_to(source) / page.stem
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(slices):
            text = " ".join(words[i * per : (i + 1) * per])
            (folder / f"{page.stem}-{i:03d}.txt").write_text(text)
            written += 1
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a folder tree of .txt documents")
    parser.add_argument("target", type=Path, help="a new, empty directory")
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--slices", type=int, default=80)
    args = parser.parse_args(argv)
    if args.pages < 1 or args.slices < 1:
        print("slice_corpus: --pages and --slices must be positive", file=sys.stderr)
        return 2
    if not args.corpus.is_dir():
        print(f"slice_corpus: not a directory: {args.corpus}", file=sys.stderr)
        return 2
    if args.target.exists() and any(args.target.iterdir()):
        print(f"slice_corpus: {args.target} is not empty", file=sys.stderr)
        return 2
    try:
        n = slice_corpus(args.corpus, args.target, args.pages, args.slices)
    except ValueError as exc:
        print(f"slice_corpus: {exc}", file=sys.stderr)
        return 2
    print(f"{n} documents in {args.target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
