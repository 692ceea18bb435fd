"""The code stays ruff-clean, mypy-clean and within its import contracts, checked with the
project's own settings (pyproject.toml)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import unavailable

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    """The dev tool ``name`` of this interpreter's environment (else on PATH)."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        unavailable(f"{name} is not installed (pip install -e '.[dev]')")
    return found


def test_ruff_is_clean():
    result = subprocess.run(
        [_tool("ruff"), "check", "backend", "tests", "bench"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:]


def test_mypy_is_clean():
    result = subprocess.run(
        [_tool("mypy"), "backend"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout[-3000:]


def test_import_contracts_are_kept():
    """The core imports no service code; the core's rooms and the service domains import
    downwards only."""
    env_path = str(ROOT / "backend")
    result = subprocess.run(
        [_tool("lint-imports"), "pyproject.toml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": env_path},
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout
