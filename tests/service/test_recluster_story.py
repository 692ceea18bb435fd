"""The end-to-end story on python-docs (SQLite, the real embedded consumer):

import the person's folders with two topics held back, post the held-back and some further
documents as new; a debounced automatic recluster runs and reports progress; the extended tree
places most new documents of known folders in their folder and proposes folders for the
held-back topics; critiques (a closer answer, a move, a rejected proposal) change the next
tree, which obeys every triple in force.
"""

from __future__ import annotations

import json
import time
from collections import Counter

from fastapi.testclient import TestClient
from sqlalchemy import select

from foldwise.service.app import create_app
from foldwise.service.composition import app_runtime
from foldwise.service.config import Settings
from foldwise.service.queue import EmbeddedWorker
from foldwise.service.recluster.jobs.runtime import Runtime
from foldwise.service.recluster.tree.models import TreeVersion

from .recluster_support import fast_options, seed_python_docs, triple_holds, wait_job

ASYNCIO = (
    "the-python-standard-library/networking-and-interprocess-communication/"
    "mod-asyncio-asynchronous-i-o"
)
EMAIL = (
    "the-python-standard-library/internet-data-handling/"
    "mod-email-an-email-and-mime-handling-package"
)


def _follow(client: TestClient, headers: dict[str, str], job_id: int) -> list[dict]:
    events = []
    with client.stream("GET", f"/api/jobs/{job_id}/events", headers=headers) as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[len("data: ") :]))
    return events


def _auto_job(client: TestClient, headers: dict[str, str], after: int) -> dict:
    # The worker schedules it from a queued task, just after the request: wait for the row.
    deadline = time.monotonic() + 20
    while not [
        j for j in client.get("/api/jobs", headers=headers).json()["items"] if j["id"] > after
    ]:
        assert time.monotonic() < deadline, "no automatic job was scheduled"
        time.sleep(0.05)
    time.sleep(0.3)  # later schedule tasks of the same burst must not add a second job
    jobs = client.get("/api/jobs", headers=headers).json()["items"]
    fresh = [j for j in jobs if j["id"] > after]
    assert len(fresh) == 1 and fresh[0]["trigger"] == "auto", jobs  # debounced into one
    return fresh[0]


def _path(tree: dict, folder_id: int) -> str:
    by_id = {f["id"]: f for f in tree["folders"]}
    names = []
    while folder_id is not None:
        names.append(by_id[folder_id]["name"])
        folder_id = by_id[folder_id]["parent_id"]
    return "/".join(reversed(names))


def test_story(sqlite_settings: Settings) -> None:
    options = fast_options(auto=True, debounce_seconds=3, r_max=20, r_ni=5)
    rt: Runtime = app_runtime(sqlite_settings, options)
    alice = seed_python_docs(rt, "alice", held_back=(ASYNCIO, EMAIL), create_new=False)
    h = alice["headers"]
    embedded = EmbeddedWorker(rt.queue, workers=1)
    embedded.start()
    try:
        with TestClient(create_app(runtime=rt)) as client:
            # Batches: a few commits in quick succession, so that the debounced automatic
            # recluster sees every new document however loaded the machine is (162 single
            # posts raced the debounce).
            truth: dict[int, str] = {}
            fresh = alice["fresh"]
            for start in range(0, len(fresh), 50):
                chunk = fresh[start : start + 50]
                body = {
                    "documents": [{"text": p.read_text(), "filename": p.name} for _, p in chunk]
                }
                response = client.post("/api/documents/batch", json=body, headers=h)
                assert response.status_code == 201, response.text
                for r, (folder, _) in zip(response.json()["results"], chunk, strict=True):
                    truth[r["document"]["id"]] = folder
            job = _auto_job(client, h, after=0)
            events = _follow(client, h, job["id"])
            assert events[-1]["state"] == "done" and events[-1]["result_version"] == 1
            runs = [e["progress"]["run"] for e in events if e["progress"]["phase"] == "weights"]
            assert runs and runs == sorted(runs) and max(runs) >= 2  # progress was reported

            tree = client.get("/api/tree/extended", headers=h).json()
            placed = {p["document_id"]: p for p in tree["placements"]}
            assert set(placed) == set(truth)
            known = [d for d, f in truth.items() if not f.startswith((ASYNCIO, EMAIL))]
            right = sum(
                isinstance(placed[d]["folder_id"], int)
                and _path(tree, placed[d]["folder_id"]) == truth[d]
                for d in known
            )
            assert right / len(known) > 0.5, f"{right} of {len(known)} in their folder"
            proposals = [f for f in tree["folders"] if f["kind"] == "proposed"]
            for topic in (ASYNCIO, EMAIL):
                hits = [
                    p
                    for p in proposals
                    if Counter(truth[d] == topic for d in p["document_ids"])[True]
                    >= max(3, 0.6 * len(p["document_ids"]))
                ]
                assert hits, f"no proposal for held-back {topic}: {proposals}"

            # Critiques: answer a question, move a misplaced document, reject a proposal.
            q = client.get("/api/questions/closer", headers=h).json()
            _critique(client, h, kind="closer", a=q["a"]["id"], b=q["c"]["id"], c=q["b"]["id"])
            wrong = next(
                d
                for d in known
                if not (
                    isinstance(placed[d]["folder_id"], int)
                    and _path(tree, placed[d]["folder_id"]) == truth[d]
                )
            )
            target = next(
                f["id"]
                for f in tree["folders"]
                if f["kind"] == "existing" and _path(tree, f["id"]) == truth[wrong]
            )
            _critique(client, h, kind="move", document_id=wrong, folder_id=target)
            # The smallest outermost proposal (a nested one is rejected with its parent).
            outermost = [p for p in proposals if not isinstance(p["parent_id"], str)]
            rejected = min(outermost, key=lambda p: p["document_count"])
            _critique(client, h, kind="reject", proposal_id=rejected["id"])

            job2 = _auto_job(client, h, after=job["id"])
            done = wait_job(client, h, job2["id"])
            assert done["state"] == "done" and done["result_version"] == 2, done
            tree2 = client.get("/api/tree/extended", headers=h).json()
            assert tree2["version"] == 2 and not tree2["outdated"]
            assert wrong not in {p["document_id"] for p in tree2["placements"]}
            for p in tree2["folders"]:
                if p["kind"] == "proposed":
                    shared = set(p["document_ids"]) & set(rejected["document_ids"])
                    assert len(shared) < len(rejected["document_ids"]) / 2, p

            triples = client.get("/api/triples", headers=h).json()["triples"]
            assert any(t["source"] == "critique" for t in triples)
            with rt.sessions() as session:
                version = session.scalar(select(TreeVersion).where(TreeVersion.number == 2))
                assert version is not None
                for t in triples:
                    xyz = (t["x"], t["y"], t["z"])
                    assert set(xyz) <= set(version.doc_ids), xyz  # named documents always join
                    assert triple_holds(version.linkage, version.doc_ids, xyz), xyz
    finally:
        embedded.stop()
        rt.close()


def _critique(client: TestClient, headers: dict[str, str], **body: object) -> dict:
    response = client.post("/api/critiques", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()
