"""After a kill -9, a restart removes exactly what the dead process wrote and never committed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from fastapi.testclient import TestClient

from foldwise.service.config import Settings
from foldwise.service.documents.blobs import BlobStore, content_hash
from foldwise.service.documents.writers import WRITERS_DIR, reclaim_dead_writers

from .helpers import Api


def _stored_files(root: Path) -> set[str]:
    """Blobs and temporary files under ``root``, without the writers' own bookkeeping."""
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and not p.relative_to(root).as_posix().startswith(WRITERS_DIR)
    }


def _killed_writer(root: Path, blobs: list[bytes]) -> None:
    """A child process stores ``blobs``, starts one more file, and dies by SIGKILL."""
    script = textwrap.dedent(
        f"""
        import os, signal, tempfile
        from pathlib import Path
        from foldwise.service.documents.blobs import BlobStore, content_hash
        from foldwise.service.documents.writers import writer_for
        store = BlobStore(Path({str(root)!r}))
        for data in {blobs!r}:
            store.put(data)
        writer = writer_for(store.root)
        cut_short = store.path(store.relative_path(content_hash(b"cut short")))
        writer.record([cut_short.relative_to(store.root).as_posix()])
        cut_short.parent.mkdir(parents=True, exist_ok=True)
        tempfile.mkstemp(dir=cut_short.parent, prefix=writer.temp_prefix)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert done.returncode == -signal.SIGKILL, done.stderr


def test_a_dead_writer_loses_only_its_uncommitted_blobs(tmp_path: Path) -> None:
    root = tmp_path / "blobs"
    store = BlobStore(root)
    committed, orphan = b"committed by the dead process", b"never committed"
    shared = b"also uploaded by a live process, not committed yet"
    _killed_writer(root, [committed, orphan, shared])
    before = _stored_files(root)
    assert sum(".tmp-" in name for name in before) == 1

    live_path = store.put(shared)  # this process is alive: its journal protects the blob
    committed_path = store.relative_path(content_hash(committed))
    removed = reclaim_dead_writers(root, lambda paths: paths & {committed_path})

    assert removed == 2  # the orphan and the temporary file
    assert _stored_files(root) == {committed_path, live_path}
    locks = {p.name for p in (root / WRITERS_DIR).iterdir()}
    assert len([name for name in locks if name.endswith(".lock")]) == 1  # ours, still held
    assert reclaim_dead_writers(root, lambda paths: set()) == 0  # a live writer is left alone


def test_a_blob_reused_after_the_crash_is_spared(tmp_path: Path) -> None:
    root = tmp_path / "blobs"
    data = b"uploaded again after the crash"
    _killed_writer(root, [data])
    path = BlobStore(root).relative_path(content_hash(data))
    time.sleep(0.01)
    # Another process (not journalled here) touches it while its transaction is open.
    os.utime(root / path)
    reclaim_dead_writers(root, lambda paths: set())
    assert (root / path).exists()


def test_a_blob_renamed_into_place_just_before_the_kill_is_reclaimed(tmp_path: Path) -> None:
    # The child dies between renaming its files into place and marking its journal as
    # newer than them (``Writer.written``): the narrowest window of put and put_many.
    root = tmp_path / "blobs"
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        from pathlib import Path
        from foldwise.service.documents.blobs import BlobStore, content_hash
        from foldwise.service.documents import writers
        store = BlobStore(Path({str(root)!r}))
        writers.Writer.written = lambda self: os.kill(os.getpid(), signal.SIGKILL)
        if sys.argv[1] == "many":
            store.put_many({{content_hash(d): d for d in (b"one", b"two")}})
        else:
            store.put(b"single")
        """
    )
    for mode in ("many", "single"):
        done = subprocess.run([sys.executable, "-c", script, mode], capture_output=True, timeout=60)
        assert done.returncode == -signal.SIGKILL, done.stderr
    assert len(_stored_files(root)) == 3  # renamed into place, never committed

    assert reclaim_dead_writers(root, lambda paths: set()) == 3
    assert _stored_files(root) == set()


def _cli(settings: Settings, *args: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "FOLDWISE_DATA_DIR": str(settings.data_dir),
        "FOLDWISE_DATABASE_URL": settings.sqlalchemy_url,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "foldwise.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_kill_9_during_an_import_then_restart_leaves_no_orphan(
    client: TestClient, api: Api, settings: Settings, tmp_path: Path
) -> None:
    alice = api.user()
    tree = tmp_path / "tree"
    for folder in range(20):
        (tree / f"f{folder}").mkdir(parents=True)
        for index in range(150):
            text = f"document {folder}-{index} " + "word " * 2000
            (tree / f"f{folder}" / f"d{index}.txt").write_text(text)
    importing = _cli(settings, "import", str(tree), "--user", "alice")
    blobs = settings.blob_dir
    deadline = time.monotonic() + 120
    # Killed as soon as a file of it is on disk (a temporary one, most likely): a fixed
    # pause after its journal's first entry was too short on a loaded machine.
    while time.monotonic() < deadline and importing.poll() is None:
        if blobs.exists() and _stored_files(blobs):
            break
        time.sleep(0.002)
    importing.send_signal(signal.SIGKILL)
    importing.wait(timeout=30)
    assert importing.returncode == -signal.SIGKILL, importing.communicate()
    left = _stored_files(blobs)
    assert left, "the import was killed before it wrote a file: nothing was tested"
    listed = client.get("/api/documents", headers=alice).json()
    assert listed["total"] == 0  # the import is one transaction: nothing committed

    # A restart: the worker (like serve) reclaims at start-up, then says it is on. It is
    # stopped only once it has said so: stopped as soon as the files were gone, it was
    # interrupted between the removal and its message (which the test then missed).
    worker = _cli(settings, "worker")
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.extend(worker.stderr), daemon=True)
    reader.start()
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not any("worker on" in line for line in said):
        time.sleep(0.1)
    worker.send_signal(signal.SIGINT)
    try:
        worker.wait(timeout=30)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()
    reader.join(timeout=10)
    stderr = "".join(said)
    assert _stored_files(blobs) == set(), stderr
    assert "never committed" in stderr
