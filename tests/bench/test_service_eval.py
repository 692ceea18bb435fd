"""The service-level benchmark: its protocol on hand-made cases, and one real end-to-end run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from foldwise import core
from foldwise.bench._corpus import Corpus, CorpusError, load_corpus
from foldwise.bench.service_protocol import (
    best_match_f,
    churn,
    closer_truth,
    common_depth,
    paired_p,
    split_for_service,
    violates,
)

BENCH = Path(__file__).resolve().parents[2] / "bench" / "service_eval.py"

TOPICS = {
    "home/recipes/bread": "bread flour yeast dough oven knead crust loaf",
    "home/recipes/soup": "soup broth simmer ladle stock vegetable onion leek",
    "home/garden": "garden soil seed compost rake weed tomato hose",
    "work/taxes": "tax return deduction receipt income refund form audit",
    "work/travel": "flight hotel booking passport luggage train ticket visa",
    "work/contracts": "contract clause signature party term agreement notice lawyer",
}


def _corpus(root: Path, per_folder: int = 8, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    shared = ["the", "and", "with", "about", "note", "some", "from", "this", "that", "have"]
    for folder, words in TOPICS.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        for k in range(per_folder):
            body = " ".join(
                rng.choice(words.split(), 40).tolist() + rng.choice(shared, 20).tolist()
            )
            (root / folder / f"{folder.replace('/', '-')}-{k}.txt").write_text(body)
    (root / "readme.txt").write_text("a document at the root is left out of the protocol")
    return root


def test_split_hides_a_leaf_or_a_subtree_and_holds_back_forty_percent(tmp_path):
    corpus = load_corpus(_corpus(tmp_path / "c"))
    two = split_for_service(corpus, 2, seed=0)
    leaves = {tuple(f.split("/")) for f in TOPICS}  # every topic folder is a leaf here
    assert two.hidden in leaves
    three = split_for_service(corpus, 3, seed=1)
    assert three.hidden in {("home",), ("work",), ("home", "recipes")}
    for split in (two, three):
        root = corpus.folders.index(())
        assert root not in split.filed and root not in split.new
        assert not set(split.filed) & set(split.new)
        for folder in set(corpus.folders) - {()}:
            ids = [i for i, f in enumerate(corpus.folders) if f == folder]
            held = sum(i in split.new for i in ids)
            if split.is_hidden(folder):
                assert held == len(ids)
            else:
                assert held == round(0.4 * len(ids))  # 8 documents: 3 new, 5 filed
        # Deterministic per seed.
        assert split == split_for_service(corpus, split.setting, seed=0 if split is two else 1)


def test_split_rejects_what_it_cannot_do(tmp_path):
    corpus = load_corpus(_corpus(tmp_path / "c"))
    with pytest.raises(ValueError, match="setting"):
        split_for_service(corpus, 1, seed=0)
    flat = Corpus(tmp_path, ["a", "b", "c", "d"], ["x"] * 4, [("a",), ("a",), ("b",), ("b",)])
    with pytest.raises(CorpusError, match="3 folders"):
        split_for_service(flat, 2, seed=0)
    shallow = Corpus(tmp_path, list("abcdef"), ["x"] * 6, [(f,) for f in "aabbcc"])
    with pytest.raises(CorpusError, match="subtree"):
        split_for_service(shallow, 3, seed=0)


def test_closer_truth_and_violations_follow_the_common_ancestors():
    bread, soup, garden, taxes = (
        ("home", "recipes", "bread"),
        ("home", "recipes", "soup"),
        ("home", "garden"),
        ("work", "taxes"),
    )
    assert common_depth(bread, soup) == 2 and common_depth(bread, taxes) == 0
    assert closer_truth(bread, soup, garden) == "b"  # recipes beat home
    assert closer_truth(bread, taxes, garden) == "c"
    assert closer_truth(bread, bread, soup) == "b"
    assert closer_truth(taxes, soup, garden) == "tie"  # both only share the root with taxes
    assert closer_truth(bread, ("home", "x"), garden) == "tie"
    # Placed in soup, "closer to garden than to soup" is violated; in bread it is not
    # (bread shares recipes with soup, deeper than home with garden: violated too).
    assert violates(soup, garden, soup)
    assert violates(bread, garden, soup)
    assert not violates(garden, garden, soup)
    assert not violates(taxes, garden, soup)  # neither branch: nothing said about it


def test_best_match_f_and_churn_by_hand():
    hidden = {("a",): {1, 2, 3, 4}, ("b",): {5, 6}}
    groups = [{1, 2, 3, 9}, {5, 6, 7, 8}]
    # a: 2*3/(4+4) = .75; b: 2*2/(4+2) = .667; weighted (4 * .75 + 2 * .667) / 6 = .722
    assert best_match_f(hidden, groups) == pytest.approx((4 * 0.75 + 2 * 4 / 6) / 6)
    assert best_match_f(hidden, []) == 0.0
    assert best_match_f({}, groups) == 0.0
    assert churn({1: 10, 2: "p-1-0", 3: None}, {1: 10, 2: "p-1-0", 3: None}) == 0.0
    assert churn({1: 10, 2: "p-1-0", 3: 11}, {1: 12, 2: "p-2-0"}) == 1.0
    assert churn({1: 10, 2: 11}, {1: 10, 2: 12}) == 0.5


def test_paired_p_is_mcnemars_exact_test_by_hand():
    # 0 against 5: both tails of Binomial(5, 1/2) at the extremes, 2 / 32.
    assert paired_p(0, 5) == pytest.approx(2 / 32)
    assert paired_p(5, 0) == pytest.approx(2 / 32)
    # 1 against 9: 2 (1 + 10) / 1024.
    assert paired_p(9, 1) == pytest.approx(22 / 1024)
    assert paired_p(4, 4) == 1.0
    assert paired_p(0, 0) is None


@pytest.mark.slow
def test_service_eval_runs_end_to_end_through_a_real_server(tmp_path):
    corpus = _corpus(tmp_path / "c", per_folder=10)
    out = tmp_path / "out.json"
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            str(corpus),
            "--settings", "3",
            "--seeds", "0",
            "--questions", "3",
            "--moves", "2",
            "--r-max", "3",
            "--late", "0.25",
            "--json", str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    (run,) = result["runs"]
    # 6 folders x 10 documents: a hidden subtree of 2 or 3 folders, 4 of 10 held back elsewhere.
    hidden_folders = {"home": 3, "work": 3, "home/recipes": 2}[run["hidden"]]
    late_hidden = run["late_new"] - run["late_known"]
    assert run["hidden_new"] + late_hidden == 10 * hidden_folders
    assert run["filed"] == 6 * (6 - hidden_folders)
    # A quarter of the new documents is posted after the first recluster (``--late``).
    all_new = 4 * (6 - hidden_folders) + 10 * hidden_folders
    assert run["late_new"] == round(0.25 * all_new)
    assert run["new"] + run["late_new"] == all_new
    assert 0 < run["late_known"] <= run["late_new"]
    for key in ("served_exact", "svm_exact", "misplaced_before", "misplaced_after", "churn"):
        assert 0.0 <= run[key] <= 1.0, key
    assert 0.0 <= run["proposal_f"] <= 1.0 and run["moves"] <= 2
    assert 0.0 <= run["proposal_f_after"] <= 1.0
    # The control recluster's moves are listed: as many as the churn counts.
    assert all(c["before"] != c["after"] for c in run["churned"])
    assert (len(run["churned"]) > 0) == (run["churn"] > 0)
    # Each of the three reclusters names the representation that placed its documents.
    assert len(run["representations"]) == 3
    assert set(run["representations"]) <= set(core.PLACEMENT_REPRESENTATIONS)
    # The paired test counts the known documents exactly one of the two places right.
    difference = (run["served_only_right"] - run["svm_only_right"]) / run["known_new"]
    assert difference == pytest.approx(run["served_exact"] - run["svm_exact"])
    assert run["served_vs_svm_p"] == paired_p(run["served_only_right"], run["svm_only_right"])
    assert run["questions_asked"] <= 3 and run["critique_violations"] == 0
    assert len(run["known_in_proposals_paths"]) == run["known_in_proposals"]
    assert len(run["known_in_proposals_after_paths"]) == run["known_in_proposals_after"]
    assert len(run["moved_paths"]) == run["moves"]
    # One record per question asked, its answer counted where the figures count it.
    log = run["question_log"]
    assert len(log) == run["questions_asked"]
    answers = [q["answer"] for q in log]
    assert answers.count("tie") == round((run["tie_share"] or 0.0) * len(log))
    assert answers.count("filed") == run["filed_asked"]
    assert sum(a in ("b", "c") for a in answers) == run["questions_answered"]
    assert answers.count("c") == run["answers_c"]
    for key in ("answered_right_before", "answered_right_after"):
        assert 0 <= run[key] <= run["questions_answered"], key
    # A document listed as changed by feedback is in another place after it, and the
    # listed changes account for every change of right and wrong among those documents.
    changed = run["changed_by_feedback"]
    assert all(c["before"] != c["after"] for c in changed)
    gained = sum(c["after"] == c["truth"] for c in changed)
    lost = sum(c["before"] == c["truth"] for c in changed)
    rise = run["misplaced_after"] - run["misplaced_before"]
    assert (lost > gained, lost == gained) == (rise > 1e-9, abs(rise) <= 1e-9), (changed, rise)
    # The re-placement after the critiques: a move counted right or wrong changed one to
    # the other, and only a document it moved can be put back.
    moved_then = run["instant_moved"]
    assert run["instant_moved_to_right"] + run["instant_moved_to_wrong"] <= moved_then
    assert 0 <= run["instant_put_back"] <= moved_then
    # The late documents: the re-placement after the moves changed right and wrong
    # only where it moved one, so the listed moves account for the change of exact.
    for key in ("late_ingest_exact", "late_instant_exact", "late_after_exact", "late_svm_exact"):
        assert 0.0 <= run[key] <= 1.0, key
    net = run["late_instant_moved_to_right"] - run["late_instant_moved_to_wrong"]
    change = (run["late_instant_exact"] - run["late_ingest_exact"]) * run["late_known"]
    assert round(change) == net
    assert len(run["late_instant_moves"]) == run["late_instant_moved"]
    listed = run["late_placed"]
    assert len(listed) == run["late_known"]
    right_then = sum(x["ingest"][0] == x["truth"] for x in listed)
    assert right_then == round(run["late_ingest_exact"] * run["late_known"])
    placed = run["hidden_placed"]
    assert placed["proposal"] + placed["existing"] + placed["top"] == run["hidden_new"]
    assert len(placed["existing_folders"]) == placed["existing"]
    # Over all new documents the sure ones add hidden pages shown in existing folders, and
    # those are never right: the same number of sure placements is right.
    extra = run["calibration_all_n"] - run["calibration_n"]
    assert 0 <= extra <= placed["existing"]

    def sure_and_right(key: str) -> int:
        return round((run[key] or 0.0) * run[f"{key}_n"])

    assert sure_and_right("calibration_all") == sure_and_right("calibration")
    assert set(result["medians"]) == {"3"}
    assert "medians per setting" in done.stdout


def test_service_eval_refuses_a_missing_corpus(tmp_path):
    done = subprocess.run(
        [sys.executable, str(BENCH), str(tmp_path / "nowhere")], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "not found" in done.stderr


def test_service_eval_refuses_a_server_source_without_the_package(tmp_path):
    """A whole checkout given for its ``backend/``: served as is, the installed code would
    answer and the baseline would be the change itself."""
    done = subprocess.run(
        [sys.executable, str(BENCH), str(tmp_path), "--server-src", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "no foldwise package" in done.stderr


@pytest.mark.parametrize("late", ["1", "-0.1"])
def test_service_eval_refuses_a_late_share_out_of_range(tmp_path, late):
    corpus = _corpus(tmp_path / "c")
    done = subprocess.run(
        [sys.executable, str(BENCH), str(corpus), "--late", late], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "--late" in done.stderr
