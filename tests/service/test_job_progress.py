"""The typed progress of a job (recluster/jobs/progress.py): what a report writes, and what
it leaves alone. The writes themselves are covered by test_recluster_jobs.py."""

from __future__ import annotations

import pytest

from foldwise.service.recluster.jobs.progress import Progress


def test_only_reported_fields_become_columns() -> None:
    assert Progress().columns() == {}
    assert Progress.counted({"run": 3, "r_max": 50}).columns() == {"run": 3, "r_max": 50}
    # Zero and an empty dict are reports too (a new attempt resets its counters).
    assert Progress(phase="load", merges_done=0, timings={}).columns() == {
        "phase": "load",
        "merges_done": 0,
        "timings": {},
    }


def test_a_newer_report_overrides_only_what_it_reports() -> None:
    pending = Progress.counted({"run": 1, "r_max": 50})
    merged = pending.then(Progress.counted({"run": 2})).then(Progress(phase="weights"))
    assert merged.columns() == {"phase": "weights", "run": 2, "r_max": 50}


def test_an_unknown_counter_is_refused() -> None:
    with pytest.raises(TypeError, match="merges"):
        Progress.counted({"merges": 3})
