"""The python-docs corpus the benches read by default: ``$FOLDWISE_TEST_CORPUS`` as for the
tests (``tests/corpus_path.py``), else ``shared/corpora/python-docs`` beside the checkout
(README, "Tests"). Each bench takes ``--corpus`` to read another."""

import os
from pathlib import Path

_BESIDE = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "python-docs"

PYTHON_DOCS = Path(os.environ.get("FOLDWISE_TEST_CORPUS") or _BESIDE)
