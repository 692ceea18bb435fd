"""Recluster jobs on the real embedded Huey consumer, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from foldwise.service.composition import app_runtime
from foldwise.service.config import Settings
from foldwise.service.critiques import service as critiques
from foldwise.service.critiques.schemas import CloserCritique
from foldwise.service.db import utcnow
from foldwise.service.queue import EmbeddedWorker
from foldwise.service.recluster.jobs import reaper
from foldwise.service.recluster.jobs.models import ReclusterJob
from foldwise.service.recluster.jobs.runtime import Runtime
from foldwise.service.recluster.tree import proposals
from foldwise.service.recluster.tree.models import TreeVersion
from foldwise.service.users.models import User

from .helpers import Api
from .recluster_support import (
    SMALL_FILED,
    fast_options,
    recluster,
    rt,
    seed_small,
    seed_user,
    wait_job,
    worker,
)

__all__ = ["rt", "worker"]


def test_recluster_job_makes_a_tree_version(
    client: TestClient, api: Api, rt: Runtime, worker: EmbeddedWorker
) -> None:
    alice = seed_small(rt, "alice")
    bob = api.user("bob")
    before = api.snapshot()
    job = recluster(client, alice["headers"])
    # The algorithm never renames, moves or empties folders, nor files anything by itself.
    assert api.snapshot() == before
    assert job["result_version"] == 1 and job["attempts"] == 1 and job["reruns"] == 0
    assert job["progress"]["r_max"] == 4 and 1 <= job["progress"]["run"] <= 4
    assert job["n_documents"] == 18 + 11
    assert set(job["timings"]) >= {"load", "weights", "extended_tree"}
    assert job["started_at"] >= job["created_at"] and job["finished_at"] >= job["started_at"]

    tree = client.get("/api/tree/extended", headers=alice["headers"]).json()
    assert tree["version"] == 1 and tree["method"] == "biihac" and not tree["outdated"]
    existing = [f for f in tree["folders"] if f["kind"] == "existing"]
    assert sorted(f["name"] for f in existing) == sorted(SMALL_FILED)
    assert all(f["document_count"] == 6 for f in existing)
    new_ids = {d for ids in alice["new"].values() for d in ids}
    assert {p["document_id"] for p in tree["placements"]} == new_ids
    assert tree["unplaced_document_ids"] == []
    folder_ids = {f["id"] for f in tree["folders"]}
    for p in tree["placements"]:
        assert 0 <= p["confidence"] <= 1 and p["terms"]
        assert p["folder_id"] in folder_ids or p["folder_id"] is None  # None: top level
        assert p["best_folder_id"] in folder_ids

    # Bob sees neither Alice's job nor her tree.
    assert client.get(f"/api/jobs/{job['id']}", headers=bob).status_code == 404
    assert client.get("/api/jobs", headers=bob).json() == {"items": [], "total": 0}
    assert client.get("/api/tree/extended", headers=bob).json()["version"] == 0
    assert client.get(f"/api/jobs/{job['id']}/events", headers=bob).status_code == 404

    # A second recluster makes version 2 from version 1.
    again = recluster(client, alice["headers"], method="ihac")
    assert (again["base_version"], again["result_version"]) == (1, 2)
    listed = client.get("/api/jobs", headers=alice["headers"]).json()
    assert [j["id"] for j in listed["items"]] == [again["id"], job["id"]]
    versions = client.get("/api/tree/versions", headers=alice["headers"]).json()
    assert [(v["number"], v["method"]) for v in versions] == [(2, "ihac"), (1, "biihac")]


def test_bad_requests_change_nothing(client: TestClient, api: Api, rt: Runtime) -> None:
    alice = api.user("alice")
    for body in ({"method": "kmeans"}, {"method": 3}, {"surprise": True}):
        response = client.post("/api/recluster", json=body, headers=alice)
        assert response.status_code == 422, body
    assert (
        "choose one of"
        in client.post("/api/recluster", json={"method": "kmeans"}, headers=alice).json()["detail"]
    )
    assert client.get("/api/jobs", headers=alice).json()["total"] == 0
    assert client.get("/api/jobs/12345", headers=alice).status_code == 404
    assert client.get("/api/jobs/abc", headers=alice).status_code == 422
    assert client.get("/api/jobs?limit=0", headers=alice).status_code == 422
    assert client.post("/api/recluster").status_code == 401


def test_job_with_too_few_documents_fails_with_reason(
    client: TestClient, api: Api, rt: Runtime, worker: EmbeddedWorker
) -> None:
    alice = api.user("alice")
    api.post(alice, "one lonely document about parsing regular expressions")
    response = client.post("/api/recluster", headers=alice)
    job = wait_job(client, alice, response.json()["id"])
    assert job["state"] == "failed" and "needs 2" in job["error"]
    assert client.get("/api/tree/extended", headers=alice).json()["version"] == 0


def test_event_stream_follows_the_job_to_its_end(
    client: TestClient, rt: Runtime, worker: EmbeddedWorker
) -> None:
    alice = seed_small(rt, "alice")
    job = client.post("/api/recluster", headers=alice["headers"]).json()
    events: list[tuple[str, dict]] = []
    with client.stream("GET", f"/api/jobs/{job['id']}/events", headers=alice["headers"]) as s:
        assert s.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in s.iter_lines():
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                assert name is not None
                events.append((name, json.loads(line[len("data: ") :])))
    assert events[-1][0] == "end" and events[-1][1]["state"] == "done"
    assert all(name == "progress" for name, _ in events[:-1])
    states = [e["state"] for _, e in events]
    assert states.index("done") > 0  # at least one event before the end
    phases = [e["progress"]["phase"] for _, e in events]
    assert phases[-1] == "done"


def _jobs_once_scheduled(client: TestClient, headers: dict[str, str]) -> dict:
    deadline = time.monotonic() + 20
    while (jobs := client.get("/api/jobs", headers=headers).json())["total"] == 0:
        assert time.monotonic() < deadline, "no automatic job was scheduled"
        time.sleep(0.05)
    return jobs  # type: ignore[no-any-return]


def test_automatic_recluster_is_debounced(
    client: TestClient, api: Api, rt: Runtime, worker: EmbeddedWorker
) -> None:
    # A window a loaded machine's three posts fit in: at 1 s, under the full suite on two
    # cores, the job once started before the third post.
    rt.options = fast_options(auto=True, debounce_seconds=3.0)
    alice = seed_user(rt, "alice", filed=SMALL_FILED, new={})
    headers = alice["headers"]
    # The import files documents: like any filing change it asks for an automatic recluster
    # (scheduled by the worker from a queued task, just after the commit: wait for the row).
    after_import = _jobs_once_scheduled(client, headers)
    assert after_import["total"] == 1 and after_import["items"][0]["trigger"] == "auto"
    for i in range(3):  # three new documents in a row: still that one job
        api.post(headers, f"regular expression number {i} matches text patterns " * 5)
    time.sleep(0.5)  # their schedule tasks run too, and must not add a job
    jobs = _jobs_once_scheduled(client, headers)
    assert jobs["total"] == 1
    auto = jobs["items"][0]
    assert auto["trigger"] == "auto" and auto["not_before"] is not None
    assert auto["id"] == after_import["items"][0]["id"]
    done = wait_job(client, headers, auto["id"])
    assert done["state"] == "done" and done["n_documents"] == 18 + 3


def _critique_midway(rt: Runtime, user_id: int, doc_ids: list[int]) -> None:
    """Make a progress hook that, once, stores a critique from another session."""
    fired = threading.Event()

    def hook() -> None:
        if fired.is_set():
            return
        fired.set()
        with rt.sessions() as session:
            user = session.get(User, user_id)
            assert user is not None
            a, b, c = doc_ids[:3]
            critiques.create_critique(
                session=session,
                user=user,
                body=CloserCritique(kind="closer", a=a, b=b, c=c),
                find_proposal=proposals.open_proposal,
            )
            session.commit()

    rt.progress_hook = hook


def test_critique_during_a_job_makes_it_rerun(
    client: TestClient, rt: Runtime, worker: EmbeddedWorker
) -> None:
    alice = seed_small(rt, "alice")
    new = [d for ids in alice["new"].values() for d in ids]
    _critique_midway(rt, alice["user_id"], new)
    job = recluster(client, alice["headers"])
    # The seeding import counts as one change of where documents are, the critique as another.
    assert job["reruns"] == 1 and job["base_critique_seq"] == 2
    tree = client.get("/api/tree/extended", headers=alice["headers"]).json()
    assert tree["critique_seq"] == 2 and not tree["outdated"]
    history = client.get("/api/critiques", headers=alice["headers"]).json()
    assert [c["kind"] for c in history] == ["closer", "import"]


def test_stale_result_is_discarded_never_stored(
    client: TestClient, rt: Runtime, worker: EmbeddedWorker
) -> None:
    rt.options = fast_options(max_reruns=0)
    alice = seed_small(rt, "alice")
    new = [d for ids in alice["new"].values() for d in ids]
    _critique_midway(rt, alice["user_id"], new)
    response = client.post("/api/recluster", headers=alice["headers"])
    job = wait_job(client, alice["headers"], response.json()["id"])
    assert job["state"] == "stale" and job["result_version"] is None
    assert "discarded" in job["error"]
    with rt.sessions() as session:
        assert session.scalar(select(func.count()).select_from(TreeVersion)) == 0
    critiques_now = client.get("/api/critiques", headers=alice["headers"]).json()
    assert [c["kind"] for c in critiques_now] == ["closer", "import"]


def test_dead_worker_job_is_retried_then_failed(client: TestClient, rt: Runtime) -> None:
    alice = seed_small(rt, "alice")
    old = utcnow() - timedelta(seconds=60)
    with rt.sessions() as session:
        for attempts in (1, 2):
            session.add(
                ReclusterJob(
                    user_id=alice["user_id"],
                    method="biihac",
                    state="running",
                    attempts=attempts,
                    worker="gone:1",
                    heartbeat_at=old,
                    started_at=old,
                )
            )
        session.commit()
    jobs = client.get("/api/jobs", headers=alice["headers"]).json()["items"]
    by_attempts = {j["attempts"]: j for j in jobs}
    assert by_attempts[1]["state"] == "queued" and "retried" in by_attempts[1]["error"]
    assert by_attempts[2]["state"] == "failed" and "gave up" in by_attempts[2]["error"]
    # The retried job runs to completion on a worker that starts now.
    embedded = EmbeddedWorker(rt.queue, workers=1)
    embedded.start()
    try:
        done = wait_job(client, alice["headers"], by_attempts[1]["id"])
    finally:
        embedded.stop()
    assert done["state"] == "done" and done["attempts"] == 2
    assert reaper.reap(rt) == []


def test_every_method_makes_a_tree(client: TestClient, rt: Runtime, worker: EmbeddedWorker) -> None:
    if rt.settings.sqlalchemy_url.startswith("postgresql"):
        pytest.skip("the methods do not depend on the database; SQLite covers them")
    alice = seed_small(rt, "alice")
    h = alice["headers"]
    methods = ["hac", "ihac", "bihac", "biihac", "divisive", "ggm"]
    for method in methods:
        job = recluster(client, h, method=method)
        tree = client.get("/api/tree/extended", headers=h).json()
        assert (tree["version"], tree["method"]) == (job["result_version"], method)
        assert len(tree["placements"]) == 11
    versions = client.get("/api/tree/versions", headers=h).json()
    ignored = {v["method"]: v["stats"].get("triples_ignored", False) for v in versions}
    # Plain HAC uses neither labels nor triples: it says so too.
    assert ignored == {m: m in ("hac", "divisive", "ggm") for m in methods}


def test_weight_max_pairs_bounds_the_bihac_runs_of_a_recluster(
    client: TestClient, rt: Runtime, worker: EmbeddedWorker
) -> None:
    """The setting reaches the core: a bound below one run's n^2 pairs leaves 2 runs, and
    the job's progress counts against it."""
    alice = seed_small(rt, "alice")
    rt.options = fast_options(r_max=50, r_ni=50, weight_max_pairs=1)
    job = recluster(client, alice["headers"])
    assert job["progress"]["r_max"] == 2 and job["progress"]["run"] <= 2
    versions = client.get("/api/tree/versions", headers=alice["headers"]).json()
    assert versions[0]["stats"]["n_runs"] <= 2


def test_automatic_recluster_requests_of_one_user_are_coalesced(
    sqlite_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Requests within a tenth of the debounce share one schedule task; a later one, another
    user's, or one after a failed enqueue are asked again."""
    runtime = app_runtime(sqlite_settings, fast_options(auto=True, debounce_seconds=5.0))
    try:
        _coalesced(runtime, monkeypatch)
    finally:
        runtime.close()


def _coalesced(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []
    monkeypatch.setattr(runtime, "schedule_task", asked.append)
    clock = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    runtime.request_auto(1)
    runtime.request_auto(1)
    runtime.request_auto(2)
    clock[0] += 0.4
    runtime.request_auto(1)
    assert asked == [1, 2]
    clock[0] += 0.7  # 1.1 s after the first: past the 0.5 s window
    runtime.request_auto(1)
    assert asked == [1, 2, 1]

    def failing(user_id: int) -> None:
        raise ConnectionError("queue down")

    monkeypatch.setattr(runtime, "schedule_task", failing)
    clock[0] += 1.0
    with pytest.raises(ConnectionError):
        runtime.request_auto(3)
    monkeypatch.setattr(runtime, "schedule_task", asked.append)
    runtime.request_auto(3)  # the failed request did not count
    assert asked == [1, 2, 1, 3]
