"""bench/docs_corpus.py: a documentation tree becomes a corpus of folders of .txt pages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from foldwise.bench._corpus import load_corpus

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "docs_corpus.py"
WORDS = " ".join(f"word{k}" for k in range(60))


def _run(*args: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60
    )


def test_pages_keep_their_folder_and_short_or_top_level_pages_are_left_out(tmp_path):
    source = tmp_path / "rst"
    (source / "guide" / "deep").mkdir(parents=True)
    (source / "index.rst").write_text(WORDS)  # top level: no folder
    (source / "guide" / "a.rst").write_text(WORDS)
    (source / "guide" / "stub.rst").write_text("see other page")  # under --min-words
    (source / "guide" / "deep" / "b.rst").write_text(WORDS + " deep")
    (source / "guide" / "notes.md").write_text(WORDS)  # another suffix

    done = _run(source, tmp_path / "out")

    assert done.returncode == 0, done.stderr
    assert "2 documents in 2 folders" in done.stdout
    written = sorted(
        p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*")
    )
    assert written == ["guide", "guide/a.txt", "guide/deep", "guide/deep/b.txt"]
    assert (tmp_path / "out" / "guide" / "deep" / "b.txt").read_text() == WORDS + " deep"
    corpus = load_corpus(tmp_path / "out")
    assert sorted(map(tuple, corpus.folders)) == [("guide",), ("guide", "deep")]


def test_bad_input_is_one_line_and_a_non_zero_exit(tmp_path):
    missing = _run(tmp_path / "nope", tmp_path / "out")
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"error: {tmp_path / 'nope'} is not a directory"

    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_text("taken")
    assert _run(tmp_path, tmp_path / "out").returncode == 2

    (tmp_path / "empty" / "sub").mkdir(parents=True)
    empty = _run(tmp_path / "empty", tmp_path / "out2")
    assert empty.returncode == 1
    assert "no .rst page" in empty.stderr
