"""bench/representation_study.py: the placement representations scored on the service
benchmark's split, through a real server's import and the recluster's own inputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from topic_words import TOPICS

from foldwise import core

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "representation_study.py"


def _corpus(root: Path, per_folder: int = 10) -> Path:
    rng = np.random.default_rng(0)
    shared = ["the", "and", "with", "about", "note", "some", "from", "this", "that", "have"]
    for folder, words in TOPICS.items():
        (root / folder).mkdir(parents=True)
        for k in range(per_folder):
            body = rng.choice(words.split(), 30).tolist() + rng.choice(shared, 30).tolist()
            (root / folder / f"{k}.txt").write_text(" ".join(body))
    return root


def test_the_study_scores_every_representation_and_the_choice(tmp_path):
    out = tmp_path / "out.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(_corpus(tmp_path / "c")), "--settings", "2",
         "--seeds", "0", "--json", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (run,) = json.loads(out.read_text())["runs"]
    # One leaf hidden, 4 of 10 held back from each of the other four folders.
    assert run["known_new"] == 16 and run["median_filed_per_folder"] == 6
    assert run["chosen"] in core.PLACEMENT_REPRESENTATIONS
    # Oracle: "auto" is the chosen representation's fit, so it scores the same.
    assert run["auto"] == run[run["chosen"]]
    for key in ("auto", *core.PLACEMENT_REPRESENTATIONS, "svm"):
        assert 0.0 <= run[key] <= 1.0, key
    assert "choice below the better representation in" in done.stdout


def test_the_study_refuses_a_missing_corpus(tmp_path):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "nowhere")], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "not found" in done.stderr
