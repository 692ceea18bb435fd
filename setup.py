"""Build step: ship ``frontend/`` and ``migrations/`` (and ``alembic.ini``) inside the wheel.

They stay top-level directories of the repository; building copies them to
``foldwise/_shipped/`` in the build tree, where ``foldwise.service.resources`` finds them in
a non-editable install. Everything else is configured in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = ("frontend", "migrations", "alembic.ini")


class BuildWithShipped(build_py):
    """``build_py`` plus a copy of the shipped directories into the package."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "foldwise" / "_shipped"
        for name in SHIPPED:
            source = ROOT / name
            if not source.exists():  # the Dockerfile's dependency layer builds without them
                continue
            if source.is_dir():
                shutil.copytree(
                    source,
                    target / name,
                    dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
                )
            else:
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / name)


setup(cmdclass={"build_py": BuildWithShipped})
