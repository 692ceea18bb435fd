"""bench/newsgroups_corpus.py: newsgroup posts become a corpus of folders named by the groups."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from foldwise.bench._corpus import load_corpus

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "newsgroups_corpus.py"
POST = (
    "From: someone@example.org\nNewsgroups: {group}\nSubject: a question\n\nbody words here {k}\n"
)


def _module():
    spec = importlib.util.spec_from_file_location("newsgroups_corpus", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(*args: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60
    )


def test_a_part_with_one_child_is_joined_to_it_below_the_top_folder():
    groups = [
        "comp.graphics",
        "comp.os.ms-windows.misc",
        "comp.sys.ibm.pc.hardware",
        "comp.sys.mac.hardware",
        "rec.sport.baseball",
        "rec.sport.hockey",
        "soc.religion.christian",
        "talk.religion.misc",
        "talk.politics.guns",
        "talk.politics.mideast",
        "sci.med",
    ]
    assert _module().folder_paths(groups) == {
        "comp.graphics": ("comp", "graphics"),
        "comp.os.ms-windows.misc": ("comp", "os-ms-windows-misc"),
        "comp.sys.ibm.pc.hardware": ("comp", "sys", "ibm-pc-hardware"),
        "comp.sys.mac.hardware": ("comp", "sys", "mac-hardware"),
        "rec.sport.baseball": ("rec", "sport", "baseball"),
        "rec.sport.hockey": ("rec", "sport", "hockey"),
        "soc.religion.christian": ("soc", "religion-christian"),
        "talk.religion.misc": ("talk", "religion-misc"),
        "talk.politics.guns": ("talk", "politics", "guns"),
        "talk.politics.mideast": ("talk", "politics", "mideast"),
        "sci.med": ("sci", "med"),
    }


def test_posts_are_sampled_per_group_without_the_headers_that_name_it(tmp_path):
    source = tmp_path / "train"
    for group in ("rec.sport.hockey", "rec.sport.baseball"):
        (source / group).mkdir(parents=True)
        for k in range(5):
            (source / group / str(100 + k)).write_text(POST.format(group=group, k=k))
    (source / "sci.med").mkdir()
    (source / "sci.med" / "200").write_text(POST.format(group="sci.med", k=0))
    (source / "sci.med" / "201").write_text("Subject: hi\n")  # under five words: left out

    done = _run(source, tmp_path / "out", "--per-group", "3")

    assert done.returncode == 0, done.stderr
    corpus = load_corpus(tmp_path / "out")
    per_folder = {f: list(map(tuple, corpus.folders)).count(f) for f in map(tuple, corpus.folders)}
    assert per_folder == {
        ("rec", "sport", "baseball"): 3,
        ("rec", "sport", "hockey"): 3,
        ("sci", "med"): 1,
    }
    for text in corpus.texts:
        assert "Newsgroups:" not in text and "From: someone@example.org" in text
    # The same seed draws the same posts.
    assert _run(source, tmp_path / "again", "--per-group", "3").returncode == 0
    assert sorted(load_corpus(tmp_path / "again").paths) == sorted(corpus.paths)


def test_uneven_sizes_fall_geometrically_from_the_largest_to_the_smallest(tmp_path):
    groups = [f"g.n{k}" for k in range(5)]
    sizes = _module().group_sizes(groups, 80, 5, seed=3)
    # 80 * (5/80)^(k/4): 80, 40, 20, 10, 5, one size per group.
    assert sorted(sizes.values()) == [5, 10, 20, 40, 80] and set(sizes) == set(groups)
    assert _module().group_sizes(groups, 80, 5, seed=3) == sizes
    assert set(_module().group_sizes(groups, 7, 7, seed=0).values()) == {7}

    source = tmp_path / "train"
    for group in ("rec.sport.hockey", "rec.sport.baseball", "sci.med"):
        (source / group).mkdir(parents=True)
        for k in range(6):
            (source / group / str(100 + k)).write_text(POST.format(group=group, k=k))
    done = _run(source, tmp_path / "out", "--per-group", "6", "--smallest", "2")
    assert done.returncode == 0, done.stderr
    folders = [tuple(f) for f in load_corpus(tmp_path / "out").folders]
    # Three groups: 6, 6 * (2/6)^(1/2) = 3.46 -> 3, and 2 posts.
    assert sorted(folders.count(f) for f in set(folders)) == [2, 3, 6]
    bad = _run(source, tmp_path / "bad", "--per-group", "6", "--smallest", "7")
    assert bad.returncode == 2
    assert bad.stderr.strip() == "error: --smallest must lie between 1 and --per-group"


def test_bad_input_is_one_line_and_a_non_zero_exit(tmp_path):
    missing = _run(tmp_path / "nope", tmp_path / "out")
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"error: {tmp_path / 'nope'} is not a directory"
    (tmp_path / "src").mkdir()
    assert _run(tmp_path / "src", tmp_path / "out", "--per-group", "0").returncode == 2
    empty = _run(tmp_path / "src", tmp_path / "out")
    assert empty.returncode == 2
    assert empty.stderr.strip() == f"error: no posts in the group folders of {tmp_path / 'src'}"
