"""A bench run's data directory (database, blobs, models): removed when the run ends, or
kept for profiling with ``--keep-data``. At 100,000 documents one takes about 1 GB."""

import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def scratch_directory(prefix: str, keep: bool = False) -> Iterator[Path]:
    """A fresh directory under the system's temporary one, removed afterwards unless
    ``keep`` (then its path is said on stderr)."""
    data = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield data
    finally:
        if keep:
            print(f"data directory kept: {data}", file=sys.stderr)
        else:
            shutil.rmtree(data, ignore_errors=True)
