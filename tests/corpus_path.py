"""Where the python-docs corpus is: ``$FOLDWISE_TEST_CORPUS``, else ``shared/`` beside the
checkout (as CI lays it out), else this workplace's ``/work/shared``."""

import os
from pathlib import Path

_CANDIDATES = [
    os.environ.get("FOLDWISE_TEST_CORPUS", ""),
    str(Path(__file__).resolve().parents[2] / "shared" / "corpora" / "python-docs"),
    "/work/shared/corpora/python-docs",
]

PYTHON_DOCS = next((Path(c) for c in _CANDIDATES if c and Path(c).is_dir()), Path(_CANDIDATES[-1]))
