"""Importing the service touches nothing, and the shipped files (UI, migrations) are found."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from foldwise.service.resources import shipped

BACKEND = Path(__file__).resolve().parents[2] / "backend"


def test_importing_the_service_creates_no_engine_queue_listener_or_directory(
    tmp_path: Path,
) -> None:
    """Engines, queues and session listeners are made by the composition root when it is
    called (docs/architecture.md sec. 2), never at import."""
    code = (
        "import foldwise.service.app, foldwise.service.cli, foldwise.service.tasks\n"
        "import foldwise.service.db as db, foldwise.service.migrate\n"
        "from sqlalchemy.orm import Session\n"
        "assert db._default == [], 'made at import'\n"
        "listeners = [*Session().dispatch.after_flush, *Session().dispatch.after_commit]\n"
        "assert not listeners, listeners\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOLDWISE_")}
    env["PYTHONPATH"] = str(BACKEND)
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []  # no ./data, no database, no queue file


def test_shipped_files_are_found() -> None:
    assert (shipped("frontend") / "templates" / "app.html").is_file()
    assert (shipped("frontend") / "static" / "js" / "main.js").is_file()
    assert (shipped("migrations") / "env.py").is_file()
    assert any((shipped("migrations") / "versions").glob("0001_*.py"))
    assert shipped("alembic.ini").is_file()
