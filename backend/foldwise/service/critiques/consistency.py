"""Is the set of triples in force still satisfiable? (001 Theorems 1-3, Aho et al.'s BUILD)

Checked before a critique (or an undo) is stored: the explicit triples of every critique in
force, the new ones, and the folder hierarchy restricted to the documents those triples name
(a hierarchy with documents filed in folders implies triples among them,
docs/architecture.md sec. 3).
Folder triples are added only among those named documents: contradictions need a triple that
names the documents involved, and it keeps the check small (at most ``MAX_NAMED`` documents
get folder triples; beyond that only direct contradictions with the folders are checked).
"""

from __future__ import annotations

from collections import defaultdict
from itertools import permutations

from sqlalchemy import select
from sqlalchemy.orm import Session

from foldwise.core import ConflictingTriplesError, TripleSet
from foldwise.service.documents.models import Document
from foldwise.service.errors import ConflictError
from foldwise.service.folders.models import Folder

MAX_NAMED = 15

Triple = tuple[int, int, int]


def _paths(session: Session, user_id: int, docs: set[int]) -> dict[int, tuple[int, ...]]:
    parents = dict(
        session.execute(select(Folder.id, Folder.parent_id).where(Folder.user_id == user_id)).all()
    )
    out = {}
    for doc_id, folder_id in session.execute(
        select(Document.id, Document.folder_id).where(
            Document.user_id == user_id, Document.id.in_(docs), Document.folder_id.is_not(None)
        )
    ):
        chain = []
        f = folder_id
        while f is not None:
            chain.append(f)
            f = parents.get(f)
        out[doc_id] = tuple(reversed(chain))
    return out


def _shared(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return k


def _folder_triples(paths: dict[int, tuple[int, ...]], named: set[int]) -> set[Triple]:
    labeled = sorted(d for d in named if d in paths)[:MAX_NAMED]
    out = set()
    for x, y, z in permutations(labeled, 3):
        if _shared(paths[x], paths[y]) > _shared(paths[x], paths[z]):
            out.add((x, y, z))
    return out


def check(
    *, session: Session, user_id: int, sources: dict[Triple, list[int]], new: list[Triple]
) -> None:
    """Raise ``ConflictError`` (409) naming the conflicting triples and where they came from.

    ``sources`` maps each explicit triple in force to the critiques that stated it; ``new``
    are the triples of the critique being made (``[]`` when re-checking after a filing change).
    """
    explicit = set(sources) | set(new)
    if not explicit:
        return
    named = {d for t in explicit for d in t}
    paths = _paths(session, user_id, named)
    folder = _folder_triples(paths, named)
    where: dict[Triple, str] = defaultdict(str)
    for t in folder:
        where[t] = "the folders"
    for t, ids in sources.items():
        where[t] = "critique " + ", ".join(map(str, sorted(ids)))
    for t in new:
        where[t] = "this critique"
    try:
        closed = TripleSet(explicit | folder).closed
    except ConflictingTriplesError as exc:
        groups = []
        for group in exc.conflicts[:3]:
            groups.append(
                " vs ".join(
                    f"({x}, {y}, {z}) from {where.get((x, y, z)) or 'inferred'}"
                    for x, y, z in group
                )
            )
        raise ConflictError(
            "contradicts the triples in force (x is closer to y than to z, document ids): "
            + "; ".join(groups)
            + ". Undo the critique it contradicts first, or answer differently."
        ) from exc
    # Beyond MAX_NAMED documents the folder triples were cut: check the rest directly.
    for x, y, z in closed:
        labeled = x in paths and y in paths and z in paths
        if labeled and _shared(paths[x], paths[z]) > _shared(paths[x], paths[y]):
            raise ConflictError(
                f"contradicts the folders: documents {x} and {z} share a deeper folder "
                f"than {x} and {y}, but ({x}, {y}, {z}) from "
                f"{where.get((x, y, z)) or 'inferred'} says otherwise"
            )
