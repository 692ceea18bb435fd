"""bench/recluster_bench.py end to end on a small slice of python-docs: the reclusters after
new arrivals, after moves and after a new folder reuse the first version's cross-validation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from corpus_path import PYTHON_DOCS

BENCH = Path(__file__).resolve().parents[2] / "bench" / "recluster_bench.py"


def test_arrivals_and_moves_recluster_with_kept_cross_validation(tmp_path):
    args = ["--modes", "embedded", "--folders", "6", "--filed", "8", "--new", "2"]
    args += ["--r-max", "3", "--arrive-later", "--moves", "2", "--new-folder", "2"]
    args += ["--corpus", str(PYTHON_DOCS)]
    # The bench leaves its data directories in TMPDIR for inspection: here, the test's.
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads(done.stdout.strip().splitlines()[-1])
    assert (record["filed"], record["new"], record["folders"]) == (48, 12, 6)
    # The first recluster saw the filed documents alone and had nothing to reuse.
    assert record["cross_validation_reused"] == {"placement": False, "self_label": False}
    for later in ("after_arrivals", "after_moves"):
        figures = record[later]
        assert figures["cross_validation_reused"] == {"placement": True, "self_label": True}
        assert 0.0 <= figures["placed_in_own_folder"] <= 1.0
        assert figures["request_to_tree_s"] > 0 and "load" in figures["job_timings_s"]
    # Arrivals alone keep the model; at this size a move makes a fit anew.
    assert record["after_arrivals"]["placement_model_kept"] is True
    assert record["after_moves"]["placement_model_kept"] is False
    assert record["after_moves"]["placement_changes_since_fit"] == 0
    # 12 new documents of 6 pages, each filed beside 8 slices of its own page: most land home.
    assert record["after_arrivals"]["placed_in_own_folder"] >= 0.5
    # A new folder: below the update size its placement model is fitted anew, on the
    # kept cross-validation (the new folder's documents count as change).
    made = record["after_new_folder"]
    assert (made["placement_model_kept"], made["placement_folders_added"]) == (False, 0)
    assert made["cross_validation_reused"]["placement"] is True
