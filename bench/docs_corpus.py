"""A benchmark corpus from a documentation tree: every page of SOURCE with suffix ``--suffix``
and at least ``--min-words`` words becomes a ``.txt`` document in the same folder under TARGET;
pages at SOURCE's top level are left out (they have no folder). The third corpus of
docs/placement.md is the Ansible documentation built this way::

    git clone https://github.com/ansible/ansible-documentation   # measured at ef72400cc2
    python bench/docs_corpus.py ansible-documentation/docs/docsite/rst /tmp/ansible
    python bench/service_eval.py /tmp/ansible

That gives 353 pages in 31 folders, 1 to 3 levels deep, 1 to 43 pages per folder. The text
is the page's source as it is (markup included): the documents a person would file.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from foldwise.bench._corpus import build_paths_error


def docs_corpus(source: Path, target: Path, suffix: str, min_words: int) -> Counter[str]:
    """Write the corpus; returns the number of documents per folder (relative path)."""
    per_folder: Counter[str] = Counter()
    for page in sorted(source.rglob(f"*{suffix}")):
        relative = page.relative_to(source)
        if len(relative.parts) < 2 or not page.is_file():
            continue
        text = page.read_text(encoding="utf-8", errors="replace")
        if len(text.split()) < min_words:
            continue
        out = (target / relative).with_suffix(".txt")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        per_folder[relative.parent.as_posix()] += 1
    return per_folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="the documentation's source folder")
    parser.add_argument("target", type=Path, help="a new, empty directory")
    parser.add_argument("--suffix", default=".rst", help="page file suffix (default .rst)")
    parser.add_argument("--min-words", type=int, default=50)
    args = parser.parse_args(argv)
    problem = build_paths_error(args.source, args.target)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if args.min_words < 0:
        print("error: --min-words must be >= 0", file=sys.stderr)
        return 2
    per_folder = docs_corpus(args.source, args.target, args.suffix, args.min_words)
    if not per_folder:
        print(
            f"error: no {args.suffix} page of {args.min_words}+ words in a subfolder",
            file=sys.stderr,
        )
        return 1
    print(f"{sum(per_folder.values())} documents in {len(per_folder)} folders in {args.target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
