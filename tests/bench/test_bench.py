import json

import numpy as np
import pytest
from typer.testing import CliRunner

from foldwise.bench._corpus import CorpusError, draw_sample, load_corpus
from foldwise.bench._methods import majority_of_nearest_labeled
from foldwise.cli import app

TOPICS = {
    "animals/cats": "cat kitten purr whisker meow feline",
    "animals/dogs": "dog puppy bark leash kennel canine",
    "animals": "animal zoo habitat species wildlife",
    "cooking/bread": "bread flour yeast dough oven knead",
    "cooking/soup": "soup broth simmer ladle stock vegetable",
}


def _write_corpus(root, per_folder=6, seed=0):
    rng = np.random.default_rng(seed)
    shared = ["the", "and", "with", "document", "text", "note", "about", "some"]
    for folder, words in TOPICS.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        vocab = words.split()
        for k in range(per_folder):
            body = " ".join(rng.choice(vocab, 30).tolist() + rng.choice(shared, 20).tolist())
            (root / folder / f"doc{k}.txt").write_text(body)
    return root


def test_bench_writes_records_and_dumps(tmp_path):
    corpus = _write_corpus(tmp_path / "corpus")
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        app,
        [
            "bench",
            str(corpus),
            "--methods",
            "scipy,hac,ihac,biihac,svm",
            "--settings",
            "1,2,3",
            "--labeled-per-folder",
            "2",
            "--max-per-folder",
            "6",
            "--seeds",
            "2",
            "--json",
            str(out),
            "--dump",
            str(tmp_path / "dump"),
        ],
    )
    assert result.exit_code == 0, result.output
    records = json.loads(out.read_text())
    assert len(records) == 3 * 2 * 5
    fields = {
        "method",
        "setting",
        "seed",
        "n_docs",
        "n_labeled",
        "h_corr",
        "h_corr_unlabeled",
        "f_leaf",
        "f_higher",
        "hai",
        "seconds",
        "peak_mb",
        "placement_known",
    }
    assert fields <= set(records[0])
    by = {(r["method"], r["setting"], r["seed"]): r for r in records}
    assert by[("ihac", 1, 0)]["n_labeled"] == 5 * 2
    assert by[("ihac", 2, 0)]["n_labeled"] == 4 * 2  # one leaf folder hidden
    # no labels -> our HAC and scipy agree on the measures
    assert by[("hac", 1, 0)]["h_corr"] == pytest.approx(by[("scipy", 1, 0)]["h_corr"], abs=0.02)
    assert by[("biihac", 2, 0)]["proposal_f"] is not None  # settings 2, 3 measure proposals
    assert by[("biihac", 1, 0)]["proposal_f"] is None
    dump = json.loads((tmp_path / "dump" / "ihac-s1-seed0.json").read_text())
    assert len(dump["docs"]) == 30 and len(dump["linkage"]) == 29
    assert dump["docs"][0].endswith(".txt") and len(dump["labeled"]) == 10
    assert "setting" in result.stdout and "biihac" in result.stdout


def test_empty_corpus_is_one_clear_line(tmp_path):
    result = CliRunner().invoke(app, ["bench", str(tmp_path)])
    assert result.exit_code == 2
    assert "no readable text documents" in result.output


def test_unknown_method_and_bad_setting(tmp_path):
    corpus = _write_corpus(tmp_path / "c")
    result = CliRunner().invoke(app, ["bench", str(corpus), "--methods", "magic"])
    assert result.exit_code == 2 and "unknown method" in result.output
    result = CliRunner().invoke(app, ["bench", str(corpus), "--settings", "4"])
    assert result.exit_code == 2 and "--settings" in result.output


def test_unreadable_and_empty_files_are_skipped_with_a_warning(tmp_path):
    corpus = _write_corpus(tmp_path / "c")
    (corpus / "animals" / "broken.txt").write_bytes(b"\xff\xfe\x00bad")
    (corpus / "animals" / "empty.txt").write_text("   ")
    with pytest.warns(UserWarning, match="unreadable|empty"):
        loaded = load_corpus(corpus)
    assert "animals/broken.txt" not in loaded.paths and len(loaded) == 30


def test_one_folder_corpus_is_refused(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.txt").write_text("alpha beta")
    with pytest.raises(CorpusError, match="two folders"):
        load_corpus(tmp_path)


def test_sampling_rules(tmp_path):
    corpus = load_corpus(_write_corpus(tmp_path / "c", per_folder=3))
    s1 = draw_sample(corpus, setting=1, k=10, max_per_folder=3, seed=0)
    # k larger than a folder: all but one document of each folder is labeled
    assert len(s1.labeled) == 5 * 2 and s1.hidden == []
    s2 = draw_sample(corpus, setting=2, k=1, max_per_folder=3, seed=0)
    assert len(s2.hidden) == 1 and s2.hidden[0] in {
        ("animals", "cats"),
        ("animals", "dogs"),
        ("cooking", "bread"),
        ("cooking", "soup"),
    }
    s3 = draw_sample(corpus, setting=3, k=1, max_per_folder=3, seed=1)
    assert len({h[0] for h in s3.hidden}) == 1 and len(s3.hidden) >= 2  # one whole subtree
    hidden_docs = [i for i, d in enumerate(s3.docs) if corpus.folders[d] in s3.hidden]
    assert not set(hidden_docs) & set(s3.labeled)


def test_duplicate_documents_do_not_break_the_bench(tmp_path):
    corpus = _write_corpus(tmp_path / "c")
    for k in range(3):
        (corpus / "cooking" / f"copy{k}.txt").write_text(
            (corpus / "cooking" / "bread" / "doc0.txt").read_text()
        )
    result = CliRunner().invoke(
        app, ["bench", str(corpus), "--methods", "ihac,biihac", "--settings", "1", "--seeds", "1"]
    )
    assert result.exit_code == 0, result.output


def test_majority_of_nearest_labeled_on_a_hand_made_dendrogram():
    # docs 0,1 labeled A; 2 labeled B; 3 new. 3 joins {0,1} first -> A; then all join.
    Z = np.array([[0, 1, 0.1, 2], [3, 4, 0.2, 3], [2, 5, 0.5, 4]], dtype=float)
    labels = [("A",), ("A",), ("B",), None]
    assert majority_of_nearest_labeled(Z, labels)[3] == ("A",)


def test_a_folder_with_one_document_gets_no_label(tmp_path):
    corpus_dir = _write_corpus(tmp_path / "c")
    (corpus_dir / "lonely").mkdir()
    (corpus_dir / "lonely" / "only.txt").write_text("solitary hermit alone")
    corpus = load_corpus(corpus_dir)
    sample = draw_sample(corpus, setting=1, k=5, max_per_folder=6, seed=0)
    lonely = [i for i, d in enumerate(sample.docs) if corpus.folders[d] == ("lonely",)]
    assert len(lonely) == 1 and lonely[0] not in sample.labeled


def test_stability_mode_reports_medians_per_level(tmp_path):
    corpus = _write_corpus(tmp_path / "c")
    out = tmp_path / "stability.json"
    result = CliRunner().invoke(
        app, ["bench", str(corpus), "--stability", "--seeds", "3", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())
    assert [r["constraint_fraction"] for r in rows] == [0.0, 0.03, 0.05]
    assert all(0.0 <= r["rand_l1"] <= 1.0 for r in rows)
    assert "corrected_rand_l5" in rows[0]
