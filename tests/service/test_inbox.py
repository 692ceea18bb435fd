"""The inbox directory: complete files become documents, refused ones say why, and a
restart never stores a file twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from foldwise.service.config import Settings
from foldwise.service.inbox.watch import HEARTBEAT, scan_once

from .helpers import Api, run_cli

OLD = time.time() - 60


def _drop(inbox: Path, name: str, data: bytes, *, complete: bool = True) -> Path:
    path = inbox / name
    path.write_bytes(data)
    if complete:
        os.utime(path, (OLD, OLD))
    return path


@pytest.fixture
def alices_inbox(
    client: TestClient, api: Api, tmp_path: Path
) -> tuple[dict[str, str], dict[str, object], Path]:
    """Alice's headers, the ``scan_once`` arguments for her, and an empty inbox."""
    alice = api.user("alice")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    scan = {
        "sessions": client.app.state.session_factory,  # type: ignore[attr-defined]
        "user_id": client.get("/api/users/me", headers=alice).json()["id"],
        "inbox": inbox,
    }
    return alice, scan, inbox


def _documents(client: TestClient, headers: dict[str, str]) -> list[dict[str, object]]:
    items: list[dict[str, object]] = client.get("/api/documents", headers=headers).json()["items"]
    return items


def test_complete_files_are_stored_refused_ones_say_why_and_partial_ones_wait(
    client: TestClient, alices_inbox: tuple[dict[str, str], dict[str, object], Path]
) -> None:
    alice, scan, inbox = alices_inbox
    _drop(inbox, "invoice.txt", b"invoice for the car repair")
    _drop(inbox, "tool.exe", b"MZ\x90\x00")
    _drop(inbox, "empty.txt", b"")
    _drop(inbox, "still-copying.txt", b"half of it", complete=False)
    _drop(inbox, "download.pdf.part", b"%PDF-1.4 part")
    _drop(inbox, ".hidden.txt", b"dotfile")

    report = scan_once(**scan, settle_seconds=5)  # type: ignore[arg-type]
    assert report.stored == ["invoice.txt"]
    assert set(report.failed) == {"tool.exe", "empty.txt"}
    assert report.waiting == ["still-copying.txt"]
    assert [d["title"] for d in _documents(client, alice)] == ["invoice"]
    assert (inbox / "done" / "invoice.txt").read_bytes() == b"invoice for the car repair"
    assert (inbox / "failed" / "tool.exe").exists()
    assert report.failed["tool.exe"] in (inbox / "failed" / "tool.exe.why.txt").read_text()
    assert ".exe" in report.failed["tool.exe"]
    assert "empty" in (inbox / "failed" / "empty.txt.why.txt").read_text()
    for untouched in ("still-copying.txt", "download.pdf.part", ".hidden.txt"):
        assert (inbox / untouched).exists()

    os.utime(inbox / "still-copying.txt", (OLD, OLD))  # the copy finished
    again = scan_once(**scan, settle_seconds=5)  # type: ignore[arg-type]
    assert again.stored == ["still-copying.txt"] and not again.failed
    assert len(_documents(client, alice)) == 2


def test_a_file_stored_before_a_crash_is_not_stored_twice(
    client: TestClient, alices_inbox: tuple[dict[str, str], dict[str, object], Path]
) -> None:
    """Killed after storing but before moving the file: the restart sees a duplicate."""
    alice, scan, inbox = alices_inbox
    _drop(inbox, "letter.txt", b"dear sir")
    scan_once(**scan, settle_seconds=1)  # type: ignore[arg-type]
    (inbox / "done" / "letter.txt").rename(inbox / "letter.txt")  # as if never moved
    _drop(inbox, "letter.txt", b"dear sir")
    report = scan_once(**scan, settle_seconds=1)  # type: ignore[arg-type]
    assert report.duplicates == ["letter.txt"] and not report.stored
    assert len(_documents(client, alice)) == 1
    assert sorted(p.name for p in (inbox / "done").iterdir()) == [
        "letter (2).txt",
        "letter.txt",
    ] or (sorted(p.name for p in (inbox / "done").iterdir()) == ["letter.txt"])


def test_foldwise_watch_once_and_its_errors(
    client: TestClient, api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = api.user("alice")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    _drop(inbox, "note.md", b"# a note")
    done = run_cli(api, monkeypatch, "watch", str(inbox), "--user", "alice", "--once")
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout)["stored"] == ["note.md"]
    assert [d["title"] for d in _documents(client, alice)] == ["note"]
    missing = run_cli(api, monkeypatch, "watch", str(tmp_path / "nope"), "--user", "alice")
    assert missing.exit_code == 1 and "not a directory" in missing.stderr
    nobody = run_cli(api, monkeypatch, "watch", str(inbox), "--user", "nobody", "--once")
    assert nobody.exit_code == 1 and "no user" in nobody.stderr


def test_the_watcher_keeps_scanning_and_beats(
    client: TestClient, api: Api, settings: Settings, tmp_path: Path
) -> None:
    """``foldwise watch`` as a process: files dropped while it runs are stored, it touches
    its heartbeat (the Compose health check), and Ctrl-C stops it cleanly."""
    alice = api.user("alice")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    env = {
        **os.environ,
        "FOLDWISE_DATA_DIR": str(settings.data_dir),
        "FOLDWISE_DATABASE_URL": settings.sqlalchemy_url,
    }
    watcher = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "foldwise.cli",
            "watch",
            str(inbox),
            "--user",
            "alice",
            "--interval",
            "0.2",
            "--settle",
            "0.3",
        ],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _drop(inbox, "receipt.txt", b"receipt for new tyres", complete=False)
        deadline = time.monotonic() + 60
        while not (inbox / "done" / "receipt.txt").exists():
            assert time.monotonic() < deadline, "the watcher stored nothing"
            assert watcher.poll() is None, watcher.communicate()
            time.sleep(0.1)
        # The heartbeat is touched when a scan ends, after it moved its files to done/: the
        # scan that stored the receipt may not have touched it yet (it had not once in CI).
        while not (inbox / HEARTBEAT).exists():
            assert time.monotonic() < deadline, "the watcher never touched its heartbeat"
            assert watcher.poll() is None, watcher.communicate()
            time.sleep(0.1)
        assert [d["title"] for d in _documents(client, alice)] == ["receipt"]
    finally:
        watcher.send_signal(signal.SIGINT)
        _, stderr = watcher.communicate(timeout=30)
    assert watcher.returncode == 0, stderr
    assert "stopped" in stderr
