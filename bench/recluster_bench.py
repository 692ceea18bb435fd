"""Recluster speed: request to new tree, 200 new documents against 2,000 filed in 100 folders.

The collection is real text: the 100 longest python-docs pages, each cut into 22 slices of
consecutive words. A page is a folder (under its python-docs folders, so the hierarchy is
2-4 deep); 20 slices are filed in it, 2 are posted as new, unfiled documents. The clock runs
from ``POST /api/recluster`` to the job being ``done`` (polled at 20 Hz), in two modes:

* ``embedded``: the Huey consumer in the API process, SQLite queue (``foldwise serve``);
* ``redis``: a separate ``foldwise worker`` process on Redis, sharing the SQLite file;
* ``inprocess``: no queue and no API: ``recluster_input.load_inputs`` and ``compute`` called
  directly, with the CPU seconds of the process beside the wall clock. On a machine shared
  with other work the CPU seconds vary much less than the wall clock.

Also reported: the job's phase timings, the documents the recluster saw (exemplars + new), and
the share of new documents placed in their own folder (chance: 1 %), the peak resident memory
of the bench process (``peak_rss_mb``) and, in the Redis mode, of the worker process alone
(``worker_peak_rss_mb``). Per recluster, the process that runs it (the worker in the Redis
mode) is also read at each poll: its largest resident size per job phase
(``rss_mb_by_phase``) and the phases in which its peak rose (``peak_rise_mb_by_phase``).

In the embedded and Redis modes two more reclusters follow, as a person lives with the
service (docs/recluster.md, "Kept cross-validation"): with ``--arrive-later`` the first
recluster sees only the filed documents, then the new ones are posted through the API and
the recluster that places them is timed (``after_arrivals``); then ``--moves`` new
documents are filed where they belong and the recluster after them is timed
(``after_moves``). Both reuse the first version's cross-validated placement quantities.
With ``--new-folder N`` the person then makes a folder beside a leaf and files ``N`` of
that leaf's unfiled documents in it, as when accepting a proposal (``after_new_folder``).
Usage::

    python bench/recluster_bench.py                     # both modes, defaults
    python bench/recluster_bench.py --modes embedded --r-max 20
    python bench/recluster_bench.py --modes inprocess --n-jobs 1
    python bench/recluster_bench.py --redis redis://127.0.0.1:6379/14
    python bench/recluster_bench.py --modes embedded --arrive-later --moves 10
    python bench/recluster_bench.py --modes embedded --arrive-later --moves 10 --new-folder 5
    python bench/recluster_bench.py --modes inprocess --folders 150 --filed 132 --new 1 \
        --min-words 22      # ~20,000 filed documents of ~22 words: scale, not realism
    python bench/recluster_bench.py --modes inprocess --synthetic 10 10 10 --filed 100 \
        --new 5             # 100,000 filed in 1,000 generated folders (synthetic_archive.py)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from default_corpus import PYTHON_DOCS as DEFAULT_CORPUS
from scratch import scratch_directory


def collection(
    corpus: Path, folders: int, filed: int, new: int, min_words: int = 50
) -> tuple[list[tuple[tuple[str, ...], str, bytes]], list[tuple[str, str, str]]]:
    """(filed entries: folder path, filename, bytes), (new: true folder path, filename, text);
    every slice has at least ``min_words`` words."""
    pages = sorted(
        corpus.rglob("*.txt"), key=lambda p: (-len(p.read_text(errors="ignore").split()), p)
    )[:folders]
    per = filed + new
    entries: list[tuple[tuple[str, ...], str, bytes]] = []
    fresh: list[tuple[str, str, str]] = []
    for page in pages:
        words = page.read_text(errors="ignore").split()
        if len(words) < per * min_words:
            raise SystemExit(f"{page} has only {len(words)} words for {per} slices")
        folder = (*page.relative_to(corpus).parts[:-1], page.stem)
        step = len(words) // per
        for i in range(per):
            text = " ".join(words[i * step : (i + 1) * step])
            name = f"{page.stem}-{i:02d}.txt"
            if (
                i % (per // new) == per // new - 1
                and len([f for f in fresh if f[0] == "/".join(folder)]) < new
            ):
                fresh.append(("/".join(folder), name, text))
            else:
                entries.append((folder, name, text.encode()))
    return entries, fresh


def run_mode(mode: str, args: argparse.Namespace, data: Path) -> dict[str, Any]:
    """One mode's run on a fresh data directory ``data`` (its database, blobs and models)."""
    from fastapi.testclient import TestClient
    from sqlalchemy import select

    from foldwise.service import migrate
    from foldwise.service.app import create_app
    from foldwise.service.composition import app_runtime
    from foldwise.service.config import Settings
    from foldwise.service.documents import service as documents
    from foldwise.service.folders.models import Folder
    from foldwise.service.imports.archive import Entry, Listing
    from foldwise.service.imports.service import import_listing
    from foldwise.service.queue import EmbeddedWorker
    from foldwise.service.recluster.settings import ReclusterSettings
    from foldwise.service.users import service as users

    url = f"sqlite:///{data / 'foldwise.sqlite3'}"
    migrate.upgrade(url)
    name = f"foldwise-bench-{uuid.uuid4().hex[:8]}"
    cfg = Settings(
        environment="test",
        data_dir=data,
        database_url=url,
        redis_url=args.redis if mode == "redis" else "",
        huey_name=name,
        max_archive_entries=100_000,
        task_modules=[],
        # The new documents are posted as fast as one client can, 5,000 at 100,000 filed:
        # the upload rate limit (50 a second after a burst of 2,000) is not measured here.
        upload_burst=1_000_000,
        upload_per_minute=1_000_000,
    )
    options: dict[str, Any] = {"auto": False, "r_max": args.r_max, "method": args.method}
    if args.r_ni is not None:
        options["r_ni"] = args.r_ni
    if args.n_jobs is not None:
        options["n_jobs"] = args.n_jobs
    rt = app_runtime(cfg, ReclusterSettings(**options))
    if args.synthetic:
        from synthetic_archive import collection as generated

        entries, fresh = generated(
            args.corpus, tuple(args.synthetic), args.filed, args.new, seed=args.seed
        )
        args.folders = len({e[0] for e in entries})
    else:
        entries, fresh = collection(args.corpus, args.folders, args.filed, args.new, args.min_words)
    t_seed = time.perf_counter()
    with rt.sessions() as session:
        user = users.create_user(session=session, name="bench")
        _, secret = users.create_token(session=session, user=user)
        listing = Listing(entries=[Entry(f, n, b) for f, n, b in entries])
        import_listing(session=session, user=user, listing=listing)
        truth = {}
        later = args.arrive_later and mode != "inprocess"
        for folder, fname, text in [] if later else fresh:
            doc, _ = documents.create_document(
                session=session, user=user, text=text, filename=fname
            )
            truth[doc.id] = folder
        session.commit()
        user_id = user.id
        parents = {f.id: (f.parent_id, f.name) for f in session.scalars(select(Folder))}
    seeding_s = time.perf_counter() - t_seed

    def path(fid: int) -> str:
        parent, fname = parents[fid]
        return (path(parent) + "/" if parent is not None else "") + fname

    if mode == "inprocess":
        try:
            return {
                **_in_process(rt, user_id, options, truth, path),
                "folders": args.folders,
                "filed": len(entries),
                "seeding_s": round(seeding_s, 1),
            }
        finally:
            rt.close()
    worker: Any = None
    process: subprocess.Popen[bytes] | None = None
    if mode == "embedded":
        worker = EmbeddedWorker(rt.queue, workers=1)
        worker.start()
    else:
        env = {
            **os.environ,
            "FOLDWISE_DATA_DIR": str(data),
            "FOLDWISE_DATABASE_URL": url,
            "FOLDWISE_REDIS_URL": args.redis,
            "FOLDWISE_HUEY_NAME": name,
            **{f"FOLDWISE_RECLUSTER_{k.upper()}": str(v) for k, v in options.items()},
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "foldwise.cli", "worker"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    headers = {"Authorization": f"Bearer {secret}"}
    folder_of_path = {path(fid): fid for fid in parents}

    def recluster(client: Any) -> tuple[float, float, dict[str, Any], dict[str, Any]]:
        """Request to tree: wall seconds, this process's CPU seconds, the job, the tree."""
        t0, c0 = time.perf_counter(), time.process_time()
        job = client.post("/api/recluster", headers=headers).json()
        memory = _PhaseMemory(process.pid if process is not None else os.getpid())
        while job["state"] not in ("done", "failed", "stale"):
            time.sleep(0.05)
            job = client.get(f"/api/jobs/{job['id']}", headers=headers).json()
            memory.sample(job["progress"]["phase"])
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        if job["state"] != "done":
            raise SystemExit(f"{mode}: job ended {job['state']}: {job['error']}")
        job["memory"] = memory.figures()
        return seconds, cpu, job, client.get("/api/tree/extended", headers=headers).json()

    def figures(seconds: float, cpu: float, job: dict[str, Any], tree: dict[str, Any]) -> Any:
        # Share of the documents still unfiled (moved ones are filed) placed in their folder.
        placed = [p for p in tree["placements"] if p["document_id"] in truth]
        right = sum(
            isinstance(p["folder_id"], int) and path(p["folder_id"]) == truth[p["document_id"]]
            for p in placed
        )
        versions = client.get("/api/tree/versions", headers=headers).json()
        version = max(versions, key=lambda v: v["number"])["stats"] if versions else {}
        return {
            "request_to_tree_s": round(seconds, 2),
            "process_cpu_s": round(cpu, 2) if mode == "embedded" else None,
            "job_timings_s": job["timings"],
            "placed_in_own_folder": round(right / max(len(placed), 1), 3),
            "proposals": sum(f["kind"] == "proposed" for f in tree["folders"]),
            "cross_validation_reused": version.get("cross_validation_reused"),
            # Kept placement model (docs/recluster.md), and the training documents changed
            # since its fit when it was kept despite them.
            "placement_model_kept": version.get("placement_model_kept"),
            "placement_changes_since_fit": version.get("placement_changes_since_fit"),
            "placement_folders_added": version.get("placement_folders_added"),
            **job["memory"],
        }

    try:
        with TestClient(create_app(runtime=rt)) as client:
            if process is not None:
                # Warm the worker (imports, numba caches) so that the figure is the recluster.
                time.sleep(args.worker_warmup)
            seconds, cpu, job, tree = recluster(client)
            first = figures(seconds, cpu, job, tree)
            arrivals: dict[str, Any] | None = None
            if later:
                # The archive had its first tree; now the new documents arrive one by one
                # (each gets an instant suggestion) and the recluster places them.
                post_seconds = []
                for folder, fname, text in fresh:
                    started = time.perf_counter()
                    posted = client.post(
                        "/api/documents", headers=headers, json={"title": fname, "text": text}
                    )
                    post_seconds.append(time.perf_counter() - started)
                    if posted.status_code != 201:
                        raise SystemExit(f"post: {posted.status_code} {posted.text[:200]}")
                    truth[posted.json()["document"]["id"]] = folder
                arrivals = figures(*recluster(client))
                # Each post answers once its instant suggestion is stored (docs/recluster.md).
                arrivals["post_ms_p50_p95"] = [
                    round(float(np.percentile(post_seconds, q)) * 1000, 1) for q in (50, 95)
                ]
                arrivals["posts_per_s"] = round(len(post_seconds) / sum(post_seconds), 1)
            after: dict[str, Any] | None = None
            filed_ids: set[int] = set()
            if args.moves:
                # The person files a few new documents where they belong, as after reading
                # the tree; the recluster that follows is the one they wait for.
                for d in sorted(truth)[: args.moves]:
                    filed_ids.add(d)
                    moved = client.patch(
                        f"/api/documents/{d}",
                        headers=headers,
                        json={"folder_id": folder_of_path[truth[d]]},
                    )
                    if moved.status_code != 200:
                        raise SystemExit(f"move of {d}: {moved.status_code} {moved.text[:200]}")
                after = figures(*recluster(client))
            new_folder: dict[str, Any] | None = None
            if args.new_folder:
                # The person makes a folder beside a leaf and files N of that leaf's unfiled
                # documents in it, as when accepting a proposal.
                leaf = truth[max(truth)]
                parent = parents[folder_of_path[leaf]][0]
                made = client.post(
                    "/api/folders",
                    headers=headers,
                    json={"name": f"{leaf.split('/')[-1]}-new", "parent_id": parent},
                )
                if made.status_code != 201:
                    raise SystemExit(f"new folder: {made.status_code} {made.text[:200]}")
                chosen = [d for d in sorted(truth) if truth[d] == leaf and d not in filed_ids]
                if not chosen:
                    raise SystemExit(f"new folder: no unfiled document of {leaf} left")
                for d in chosen[: args.new_folder]:
                    filed = client.patch(
                        f"/api/documents/{d}",
                        headers=headers,
                        json={"folder_id": made.json()["id"]},
                    )
                    if filed.status_code != 200:
                        raise SystemExit(f"filing of {d}: {filed.status_code} {filed.text[:200]}")
                    del truth[d]  # filed: no longer placed
                new_folder = figures(*recluster(client))
    finally:
        if worker is not None:
            worker.stop()
        if process is not None:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)
        rt.close()
    return {
        "mode": mode,
        **first,
        "documents_in_recluster": job["n_documents"],
        "biHAC_runs": job["progress"]["run"],
        "filed": len(entries),
        "new": len(fresh),
        "folders": args.folders,
        "after_arrivals": arrivals,
        "after_moves": after,
        "after_new_folder": new_folder,
        # The whole bench process (seeding, API, worker thread): a bound from above.
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        # Redis mode: the separate worker process alone (the largest child waited for).
        "worker_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
        if process is not None
        else None,
    }


class _PhaseMemory:
    """Resident memory of the process that runs the recluster (the worker in the Redis mode,
    the bench in the embedded one), read from ``/proc`` at each poll of the job: the largest
    resident size seen per job phase, and the phase in which the process's high-water mark
    (``VmHWM``) rose, so that a peak between two polls is still given to a phase."""

    def __init__(self, pid: int) -> None:
        self.status = Path(f"/proc/{pid}/status")
        self.hwm = self._read()["VmHWM"]
        self.rss_by_phase: dict[str, int] = {}
        self.hwm_rise_by_phase: dict[str, int] = {}

    def _read(self) -> dict[str, int]:
        """VmRSS and VmHWM in MB."""
        fields = dict(
            line.split(":", 1) for line in self.status.read_text().splitlines() if ":" in line
        )
        return {k: int(fields[k].split()[0]) // 1024 for k in ("VmRSS", "VmHWM")}

    def sample(self, phase: str) -> None:
        now = self._read()
        self.rss_by_phase[phase] = max(self.rss_by_phase.get(phase, 0), now["VmRSS"])
        if now["VmHWM"] > self.hwm:
            rise = now["VmHWM"] - self.hwm
            self.hwm_rise_by_phase[phase] = self.hwm_rise_by_phase.get(phase, 0) + rise
            self.hwm = now["VmHWM"]

    def figures(self) -> dict[str, Any]:
        return {
            "rss_mb_by_phase": self.rss_by_phase,
            "peak_rise_mb_by_phase": self.hwm_rise_by_phase,
            "peak_mb_after": self.hwm,
        }


def _rss_mb() -> float:
    """This process's resident memory now, in MB (Linux ``/proc``)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _in_process(
    rt: Any, user_id: int, options: dict[str, Any], truth: dict[int, str], path: Any
) -> dict[str, Any]:
    """One recluster's load and compute, called directly: wall and CPU seconds per phase,
    and the process's resident memory before and at its peak (MB; the peak includes the
    bench's own seeding, so it bounds the recluster's from above)."""
    rss_before = _rss_mb()
    from foldwise.service.recluster import core_adapter
    from foldwise.service.recluster.recluster_input import load_inputs
    from foldwise.service.recluster.settings import ReclusterSettings

    settings = ReclusterSettings(**options)
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    current: list[Any] = ["load", time.perf_counter(), time.process_time()]

    def report(phase: str, _: dict[str, int]) -> None:
        if phase != current[0]:
            now, now_cpu = time.perf_counter(), time.process_time()
            wall[current[0]] = wall.get(current[0], 0.0) + now - current[1]
            cpu[current[0]] = cpu.get(current[0], 0.0) + now_cpu - current[2]
            current[:] = [phase, now, now_cpu]

    t0, c0 = time.perf_counter(), time.process_time()
    with rt.sessions() as session:
        inputs = load_inputs(session=session, user_id=user_id, options=settings, seed=user_id)
    out = core_adapter.compute(inputs, method=options["method"], options=settings, report=report)
    report("done", {})
    right = sum(
        p.folder_id is not None and path(p.folder_id) == truth[p.document_id]
        for p in out.placements
    )
    return {
        "mode": "inprocess",
        "wall_s": round(time.perf_counter() - t0, 2),
        "cpu_s": round(time.process_time() - c0, 2),
        "phase_wall_s": {k: round(v, 2) for k, v in wall.items()},
        "phase_cpu_s": {k: round(v, 2) for k, v in cpu.items()},
        "documents_in_recluster": len(inputs.doc_ids),
        "biHAC_runs": out.stats.get("n_runs"),
        "n_jobs": getattr(settings, "n_jobs", 1),  # a baseline checkout may not have it
        "placed_in_own_folder": round(right / len(truth), 3),
        "proposals": len(out.proposals),
        "rss_before_mb": round(rss_before),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--folders", type=int, default=100)
    parser.add_argument("--filed", type=int, default=20, help="filed documents per folder")
    parser.add_argument("--new", type=int, default=2, help="new documents per folder")
    parser.add_argument(
        "--min-words",
        type=int,
        default=50,
        help="words per slice at least (fewer: more, shorter documents from the same pages)",
    )
    parser.add_argument(
        "--synthetic",
        type=int,
        nargs="+",
        metavar="BRANCHING",
        help="a generated archive (bench/synthetic_archive.py) with this branching per "
        "level instead of python-docs slices; --filed and --new count per leaf",
    )
    parser.add_argument("--seed", type=int, default=0, help="of the generated archive")
    parser.add_argument("--method", default="biihac")
    parser.add_argument("--r-max", type=int, default=50)
    parser.add_argument("--r-ni", type=int, default=None, help="default: the service's")
    parser.add_argument("--n-jobs", type=int, default=None, help="default: the service's")
    parser.add_argument("--modes", default="embedded,redis", help="embedded,redis,inprocess")
    parser.add_argument(
        "--redis", default=os.environ.get("FOLDWISE_TEST_REDIS", "redis://127.0.0.1:6379/14")
    )
    parser.add_argument("--worker-warmup", type=float, default=8.0)
    parser.add_argument(
        "--arrive-later",
        action="store_true",
        help="embedded/redis: the new documents are posted after a first recluster of the "
        "filed ones, and the recluster that places them is timed",
    )
    parser.add_argument(
        "--moves",
        type=int,
        default=10,
        help="embedded/redis: then move this many new documents to their folders and "
        "time the recluster after them (0: only the first)",
    )
    parser.add_argument(
        "--new-folder",
        type=int,
        default=0,
        metavar="N",
        help="embedded/redis: then make a folder beside a leaf, file N of its unfiled "
        "documents in it, and time the recluster after that",
    )
    parser.add_argument(
        "--keep-data",
        action="store_true",
        help="keep each run's data directory (database, models) for profiling; it is "
        "removed by default",
    )
    args = parser.parse_args()
    if args.new_folder < 0 or args.moves < 0:
        parser.error("--moves and --new-folder must be >= 0")
    for mode in args.modes.split(","):
        with scratch_directory(f"recluster-bench-{mode}-", args.keep_data) as data:
            print(json.dumps(run_mode(mode, args, data)), flush=True)


if __name__ == "__main__":
    main()
