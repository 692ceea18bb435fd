"""bench/replay_first_recluster.py: a service split's first recluster, saved through a real
server and replayed in process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_representation_study import _corpus

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "replay_first_recluster.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_the_replay_reproduces_the_servers_own_first_recluster(tmp_path):
    saved = tmp_path / "saved"
    # 15 per folder: 9 filed in each of the four known folders, 36 held out in all, enough
    # for the calibration floor to show .9 (25 all right at least).
    corpus = _corpus(tmp_path / "c", per_folder=15)
    done = _run("save", str(corpus), str(saved), "--settings", "2", "--seeds", "0")
    assert done.returncode == 0, done.stderr[-2000:]
    assert [p.name for p in saved.iterdir()] == ["run-2-0.pkl"]
    out = tmp_path / "out.json"
    done = _run("replay", str(saved), "--json", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    (run,) = json.loads(out.read_text())["runs"]
    # Oracle: the server's recluster of the same inputs, scored the same way.
    keys = ("served_exact", "known_in_proposals", "proposal_f", "proposal_f_subtree")
    for key in (*keys, "calibration", "calibration_all"):
        assert run[key] == run[f"service_{key}"], key
    # Something was shown at .9 or more, and the known documents are among the shown.
    assert run["calibration_all"] is not None and run["calibration"] is not None
    # The five-folder corpus is easy: most known documents land in their folder.
    assert run["served_exact"] >= 0.75


def test_the_replay_refuses_a_directory_without_saved_runs(tmp_path):
    done = _run("replay", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "no saved runs" in done.stderr


def test_saving_refuses_a_missing_corpus(tmp_path):
    done = _run("save", str(tmp_path / "nowhere"), str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "not found" in done.stderr
