"""Run the Alembic migrations from code (``foldwise db``, ``foldwise serve``, tests)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

# The repository root holds alembic.ini and migrations/ (editable installs and the image).
_ROOT = Path(__file__).resolve().parents[3]


def alembic_config(url: str | None = None) -> Config:
    """An Alembic config for ``url`` (default: the settings' database)."""
    ini = _ROOT / "alembic.ini"
    if not ini.is_file():
        raise FileNotFoundError(f"alembic.ini not found at {ini}; run from a source checkout")
    cfg = Config(str(ini))
    cfg.set_main_option("script_location", str(_ROOT / "migrations"))
    if url:
        cfg.attributes["url"] = url
    return cfg


def upgrade(url: str | None = None, revision: str = "head") -> None:
    """Upgrade the database at ``url`` to ``revision``."""
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str | None = None, revision: str = "-1") -> None:
    """Downgrade the database at ``url`` to ``revision``."""
    command.downgrade(alembic_config(url), revision)
