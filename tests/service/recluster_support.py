"""Fixtures and factories of the recluster / critique tests (real queue, real corpus).

Import the fixtures a module needs by name (``from .recluster_support import rt, worker``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from corpus_path import PYTHON_DOCS
from foldwise.service.documents import service as documents
from foldwise.service.documents.models import Document
from foldwise.service.imports.archive import Entry, Listing
from foldwise.service.imports.service import import_listing
from foldwise.service.queue import EmbeddedWorker
from foldwise.service.recluster.jobs.runtime import Runtime
from foldwise.service.recluster.settings import ReclusterSettings
from foldwise.service.users import service as users

CORPUS = PYTHON_DOCS


#: A small real collection: 3 folders of 6 filed documents, 2 new documents each, and 5 new
#: documents of a topic the person has no folder for (asyncio).
SMALL_FILED = {"python-howtos": 6, "the-python-tutorial": 6, "what-s-new-in-python": 6}
SMALL_NEW = {
    "python-howtos": 2,
    "the-python-tutorial": 2,
    "what-s-new-in-python": 2,
    "the-python-standard-library/networking-and-interprocess-communication/"
    "mod-asyncio-asynchronous-i-o": 5,
}


def fast_options(**overrides: Any) -> ReclusterSettings:
    """Options for tests: no automatic jobs unless asked, few biHAC runs, quick heartbeats."""
    values: dict[str, Any] = {
        "auto": False,
        "debounce_seconds": 0.3,
        "r_max": 4,
        "r_ni": 2,
        "heartbeat_seconds": 0.2,
        "heartbeat_timeout_seconds": 3.0,
        "max_attempts": 2,
        "max_reruns": 2,
    }
    values.update(overrides)
    return ReclusterSettings(**values)


@pytest.fixture
def rt(client: TestClient) -> Iterator[Runtime]:
    """The runtime of the test's app (its own SQLite queue in the data dir), with
    :func:`fast_options`; the app closes it."""
    runtime: Runtime = client.app.state.runtime  # type: ignore[attr-defined]
    runtime.options = fast_options()
    yield runtime
    runtime.progress_hook = None


@pytest.fixture
def worker(rt: Runtime) -> Iterator[EmbeddedWorker]:
    """The real Huey consumer, embedded in this process (as ``foldwise serve`` runs it)."""
    embedded = EmbeddedWorker(rt.queue, workers=1)
    embedded.start()
    yield embedded
    embedded.stop()


def corpus_files(folder: str) -> list[Path]:
    """The .txt documents directly in ``folder`` of python-docs (sorted)."""
    return sorted((CORPUS / folder).glob("*.txt"))


def seed_user(
    rt: Runtime,
    name: str,
    *,
    filed: dict[str, int],
    new: dict[str, int],
    seed: int = 0,
) -> dict[str, Any]:
    """A user whose folders hold ``filed[folder]`` documents of each python-docs folder and who
    then posted ``new[folder]`` more (unfiled). Folders only in ``new`` are held back: the
    person has no such folder. Returns the token header, user id and the ids by origin."""
    rng = random.Random(seed)
    entries, fresh = [], []
    for folder in sorted(set(filed) | set(new)):
        files = corpus_files(folder)
        rng.shuffle(files)
        k = filed.get(folder, 0)
        entries += [Entry((folder.split("/")[-1],), f.name, f.read_bytes()) for f in files[:k]]
        fresh += [(folder, f) for f in files[k : k + new.get(folder, 0)]]
    with rt.sessions() as session:
        user = users.create_user(session=session, name=name)
        _, secret = users.create_token(session=session, user=user)
        import_listing(session=session, user=user, listing=Listing(entries=entries))
        new_ids: dict[str, list[int]] = {}
        for folder, f in fresh:
            doc, _ = documents.create_document(
                session=session, user=user, data=f.read_bytes(), filename=f.name
            )
            new_ids.setdefault(folder, []).append(doc.id)
        session.commit()
        user_id = user.id
    return {"headers": {"Authorization": f"Bearer {secret}"}, "user_id": user_id, "new": new_ids}


def wait_job(
    client: TestClient, headers: dict[str, str], job_id: int, timeout: float = 120
) -> dict:
    """Poll a job until it is final (a generous limit: CI machines are slow)."""
    deadline = time.monotonic() + timeout
    while True:
        job = client.get(f"/api/jobs/{job_id}", headers=headers).json()
        if job["state"] in ("done", "failed", "stale"):
            return job
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} not final after {timeout}s: {job}")
        time.sleep(0.1)


def served_proposals(client: TestClient, headers: dict[str, str]) -> list[dict[str, Any]]:
    """The proposed folders of the served extended tree."""
    tree = client.get("/api/tree/extended", headers=headers).json()
    return [f for f in tree["folders"] if f["kind"] == "proposed"]


def recluster(client: TestClient, headers: dict[str, str], **body: Any) -> dict:
    """Request a recluster and wait for it; asserts it ends done."""
    response = client.post("/api/recluster", json=body or None, headers=headers)
    assert response.status_code == 202, response.text
    job = wait_job(client, headers, response.json()["id"])
    assert job["state"] == "done", job
    return job


def merge_step_of_lca(linkage: list[list[float]], n: int) -> dict[int, int]:
    """Parent merge step of every dendrogram node (leaves and merges)."""
    parent: dict[int, int] = {}
    for k, row in enumerate(linkage):
        parent[int(row[0])] = n + k
        parent[int(row[1])] = n + k
    return parent


def triple_holds(linkage: list[list[float]], doc_ids: list[int], t: tuple[int, int, int]) -> bool:
    """Whether the dendrogram joins x with y strictly before x with z (001 Properties 1-2)."""
    n = len(doc_ids)
    parent = merge_step_of_lca(linkage, n)
    index = {d: i for i, d in enumerate(doc_ids)}
    x, y, z = (index[d] for d in t)

    def ancestors(v: int) -> list[int]:
        out = []
        while v in parent:
            v = parent[v]
            out.append(v)
        return out

    ax = ancestors(x)
    lca_xy = next(a for a in ax if a in set(ancestors(y)))
    lca_xz = next(a for a in ax if a in set(ancestors(z)))
    return lca_xy < lca_xz


def unfiled_ids(rt: Runtime, user_id: int) -> set[int]:
    with rt.sessions() as session:
        return set(
            session.scalars(
                select(Document.id).where(Document.user_id == user_id, Document.folder_id.is_(None))
            )
        )


def seed_python_docs(
    rt: Runtime,
    name: str,
    *,
    held_back: tuple[str, ...] = (),
    new_fraction: float = 0.3,
    seed: int = 0,
    create_new: bool = True,
) -> dict[str, Any]:
    """Import python-docs as the person's hierarchy (the import service, full folder paths),
    keeping back every document under ``held_back`` folders and ``new_fraction`` of each other
    folder; those are then posted as new, unfiled documents. Files at the corpus root (no
    folder) are left out. Returns headers, user id, and for each new document its true folder
    path (``new``: {document id: "a/b"}); with ``create_new=False`` the new documents are not
    stored but returned as ``fresh``: [(true folder path, file)] for the test to post."""
    rng = random.Random(seed)
    by_folder: dict[str, list[Path]] = {}
    for path in sorted(CORPUS.rglob("*.txt")):
        rel = path.relative_to(CORPUS)
        if len(rel.parts) > 1:
            by_folder.setdefault("/".join(rel.parts[:-1]), []).append(path)
    entries, fresh = [], []
    for folder, files in sorted(by_folder.items()):
        hidden = any(folder == h or folder.startswith(h + "/") for h in held_back)
        files = list(files)
        rng.shuffle(files)
        k = 0 if hidden else max(1, round(len(files) * (1 - new_fraction)))
        entries += [Entry(tuple(folder.split("/")), f.name, f.read_bytes()) for f in files[:k]]
        fresh += [(folder, f) for f in files[k:]]
    rng.shuffle(fresh)
    with rt.sessions() as session:
        user = users.create_user(session=session, name=name)
        _, secret = users.create_token(session=session, user=user)
        import_listing(session=session, user=user, listing=Listing(entries=entries))
        truth: dict[int, str] = {}
        for folder, f in fresh if create_new else ():
            doc, _ = documents.create_document(
                session=session, user=user, data=f.read_bytes(), filename=f.name
            )
            truth[doc.id] = folder
        session.commit()
        user_id = user.id
    return {
        "headers": {"Authorization": f"Bearer {secret}"},
        "user_id": user_id,
        "new": truth,
        "held_back": held_back,
        "fresh": fresh,
    }


def seed_small(rt: Runtime, name: str, seed: int = 0) -> dict[str, Any]:
    """``seed_user`` with the small collection (``SMALL_FILED``, ``SMALL_NEW``)."""
    return seed_user(rt, name, filed=SMALL_FILED, new=SMALL_NEW, seed=seed)
