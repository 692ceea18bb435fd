"""Where the python-docs corpus is: ``$FOLDWISE_TEST_CORPUS``, else ``shared/corpora/`` beside
the checkout (as CI lays it out). Tests that need it call ``conftest.require_corpus``."""

import os
from pathlib import Path

_BESIDE = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "python-docs"

PYTHON_DOCS = Path(os.environ.get("FOLDWISE_TEST_CORPUS") or _BESIDE)
