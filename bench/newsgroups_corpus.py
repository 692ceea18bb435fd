"""A benchmark corpus of another genre: Usenet posts filed in their newsgroups' hierarchy.

SOURCE is the training half of the "bydate" 20 Newsgroups collection (one folder per group,
``alt.atheism/49960``, ...). ``--per-group`` posts of each group (a seeded sample) become
``.txt`` documents under TARGET, in folders made from the group names: the first part of the
name is a top folder, and below it a part with a single child is joined to it, so that
``comp.sys.ibm.pc.hardware`` and ``comp.sys.mac.hardware`` are ``comp/sys/ibm-pc-hardware`` and
``comp/sys/mac-hardware``, and ``comp.os.ms-windows.misc`` is ``comp/os-ms-windows-misc``. The
header lines that name the group (``Newsgroups:``, ``Path:``, ``Xref:``, ``Followup-To:``) are
dropped; ``From:``, ``Subject:`` and ``Organization:`` stay, as in a mailbox. docs/placement.md
("A near tie decided at four fifths of the labels") measured the service on it::

    python bench/newsgroups_corpus.py 20news-bydate/20news-bydate-train /tmp/news
    python bench/service_eval.py /tmp/news

That gives 1,200 posts in 20 folders, 2 to 3 levels deep, 60 per folder. A real archive's
folders are not that even: ``--smallest N`` makes the group sizes fall geometrically from
``--per-group`` (the largest folder) to N, the groups drawn into that order at random (seeded).
``--per-group 200 --smallest 5`` gives 1,110 posts in folders of 200 down to 5.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path

from foldwise.bench._corpus import build_paths_error

# Headers that name the newsgroup: a classifier would read the folder off them.
_GROUP_HEADERS = re.compile(r"^(Newsgroups|Path|Xref|Followup-To):")


def folder_paths(groups: list[str]) -> dict[str, tuple[str, ...]]:
    """Each dotted group name's folder path: its first part, then the rest of its parts with
    every part that has a single child (among ``groups``) joined to that child by ``-``."""
    children: dict[tuple[str, ...], set[str]] = {}
    for group in groups:
        parts = tuple(group.split("."))
        for k in range(1, len(parts)):
            children.setdefault(parts[:k], set()).add(parts[k])
    out = {}
    for group in groups:
        parts = tuple(group.split("."))
        path, pending = [parts[0]], []
        for k in range(1, len(parts)):
            pending.append(parts[k])
            if len(children.get(parts[: k + 1], ())) != 1:
                path.append("-".join(pending))
                pending = []
        out[group] = tuple(path)
    return out


def group_sizes(groups: list[str], largest: int, smallest: int, seed: int) -> dict[str, int]:
    """Posts to take per group: ``largest`` down to ``smallest`` in a geometric progression
    over the groups in a seeded random order (all ``largest`` when the two are equal)."""
    order = list(groups)
    random.Random(seed).shuffle(order)
    steps = max(len(order) - 1, 1)
    return {
        group: round(largest * (smallest / largest) ** (k / steps)) for k, group in enumerate(order)
    }


def newsgroups_corpus(
    source: Path, target: Path, per_group: int, seed: int, smallest: int | None = None
) -> dict[str, int]:
    """Write the corpus; returns the number of posts per folder (relative path). Each group
    gives ``per_group`` posts, or with ``smallest`` its share of :func:`group_sizes`."""
    groups = sorted(d.name for d in source.iterdir() if d.is_dir())
    paths = folder_paths(groups)
    sizes = group_sizes(groups, per_group, per_group if smallest is None else smallest, seed)
    rng = random.Random(seed)
    written: dict[str, int] = {}
    for group in groups:
        posts = sorted((source / group).iterdir(), key=lambda p: p.name)
        folder, key = target.joinpath(*paths[group]), "/".join(paths[group])
        folder.mkdir(parents=True, exist_ok=True)
        for post in rng.sample(posts, min(sizes[group], len(posts))):
            lines = post.read_bytes().decode("latin-1").split("\n")
            text = "\n".join(line for line in lines if not _GROUP_HEADERS.match(line)).strip()
            if len(text.split()) < 5:
                continue
            (folder / f"{post.name}.txt").write_text(text + "\n", encoding="utf-8")
            written[key] = written.get(key, 0) + 1
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="20news-bydate-train: one folder per group")
    parser.add_argument("target", type=Path, help="a new, empty directory")
    parser.add_argument("--per-group", type=int, default=60)
    parser.add_argument(
        "--smallest", type=int, help="uneven folders: sizes fall from --per-group to this"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    problem = build_paths_error(args.source, args.target)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if args.per_group < 1:
        print("error: --per-group must be >= 1", file=sys.stderr)
        return 2
    if args.smallest is not None and not 1 <= args.smallest <= args.per_group:
        print("error: --smallest must lie between 1 and --per-group", file=sys.stderr)
        return 2
    written = newsgroups_corpus(
        args.source, args.target, args.per_group, args.seed, smallest=args.smallest
    )
    if not written:
        print(f"error: no posts in the group folders of {args.source}", file=sys.stderr)
        return 2
    print(f"{sum(written.values())} posts in {len(written)} folders in {args.target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
