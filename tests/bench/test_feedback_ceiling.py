"""bench/feedback_ceiling.py: the in-process bound on what critiques teach the other new
documents, with the service's own way of retraining beside it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from topic_words import TOPICS

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "feedback_ceiling.py"


def _corpus(root: Path) -> Path:
    """60 documents per folder, three words of their topic among 17 of any: hard enough that
    a quarter of the new documents are misplaced, so that moves have something to teach."""
    rng = np.random.default_rng(0)
    every = " ".join(TOPICS.values()).split()
    for folder, words in TOPICS.items():
        (root / folder).mkdir(parents=True)
        for k in range(60):
            body = rng.choice(words.split(), 3).tolist() + rng.choice(every, 17).tolist()
            (root / folder / f"{k}.txt").write_text(" ".join(body))
    return root


def _runs(corpus: Path, *args: str) -> list[dict[str, float]]:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(corpus), "--settings", "2", "--seeds", "1", *args],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    for key in ("moves", "service", "oracle", "svm", "service flips"):
        assert any(line.startswith(f"{key}: ") for line in lines), key
    return [
        {k: float(v) for k, v in (field.split("=") for field in line.split()[2:])}
        for line in lines
        if line.startswith("setting=")
    ]


def test_a_keep_margin_of_one_keeps_every_placement(tmp_path):
    corpus = _corpus(tmp_path / "c")
    (kept,) = _runs(corpus, "--keep-margin", "1")
    assert kept["misplaced_before"] > 0.1
    # Oracle: no posterior is a whole 1 above another, so nothing the moves taught shows.
    assert kept["service"] == 0.0
    assert kept["flips_right"] + kept["flips_wrong"] + kept["flips_between_wrong"] == 0
    # Without the margin, and moving where it is less sure than not, the retrained model
    # does move some of the others.
    (unkept,) = _runs(corpus, "--keep-margin", "0", "--min-move-confidence", "0")
    flips = unkept["flips_right"] + unkept["flips_wrong"] + unkept["flips_between_wrong"]
    assert flips > 0
    # Oracle: the misplaced count changes by the wrong flips less the right ones.
    misplaced_before = round(unkept["misplaced_before"] * unkept["rest"])  # printed to .001
    change = (unkept["flips_wrong"] - unkept["flips_right"]) / misplaced_before
    assert abs(unkept["service"] - change) < 1e-3
    assert 0 <= unkept["flips_to_moved"] <= flips


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--keep-margin", "1.5", "--keep-margin must lie in [0, 1]"),
        ("--move-weight", "0", "--move-weight must be above 0"),
        ("--min-move-confidence", "-0.1", "--min-move-confidence must lie in [0, 1]"),
    ],
)
def test_the_bench_refuses_an_option_out_of_range(tmp_path, option, value, message):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path), option, value],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2 and message in done.stderr


def test_the_moved_documents_weight_reaches_the_service_column(tmp_path):
    """``--move-weight`` weighs the moved documents in the service column's retrained model
    alone: the other columns do not use it."""
    corpus = _corpus(tmp_path / "c")
    unkept = ("--keep-margin", "0", "--min-move-confidence", "0")
    (plain,) = _runs(corpus, *unkept)
    (heavy,) = _runs(corpus, *unkept, "--move-weight", "20")
    flips = ("flips_right", "flips_wrong", "flips_between_wrong")
    assert [heavy[k] for k in flips] != [plain[k] for k in flips]
    for column in ("misplaced_before", "moves", "oracle", "svm"):
        assert heavy[column] == plain[column], column
