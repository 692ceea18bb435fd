"""Shared test configuration, and the one way a test gives up on a missing service.

A test that needs something this machine may lack (Debian's chromium or Tesseract, PostgreSQL,
Redis, the python-docs corpus, a dev tool) calls :func:`unavailable`: it skips, with the
reason, on a developer's machine, and fails under ``CI=true``, so a CI run cannot pass by
skipping.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

from corpus_path import PYTHON_DOCS


def in_ci() -> bool:
    """``CI`` is set to a true value (``true``, ``1``, ``yes``)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def unavailable(reason: str) -> NoReturn:
    """Skip the calling test (or fixture) for ``reason``; under ``CI=true``, fail it."""
    if in_ci():
        pytest.fail(f"CI=true, and {reason}", pytrace=False)
    pytest.skip(reason)


def require_corpus() -> Path:
    """The python-docs corpus (``$FOLDWISE_TEST_CORPUS`` or ``shared/`` beside the checkout)."""
    if not PYTHON_DOCS.is_dir():
        unavailable(f"the python-docs corpus is not at {PYTHON_DOCS} (set FOLDWISE_TEST_CORPUS)")
    return PYTHON_DOCS


@pytest.fixture
def corpus() -> Path:
    """The python-docs corpus, or :func:`unavailable`."""
    return require_corpus()
