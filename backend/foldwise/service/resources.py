"""Where the files that ship with the service are: ``frontend/`` (templates, static files),
``migrations/`` and ``alembic.ini``.

A wheel carries them inside the package (``foldwise/_shipped/``, copied there by setup.py's
build step); an editable install or a source checkout has them at the repository's top level.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]  # .../foldwise
_PACKAGED = _PACKAGE / "_shipped"
_CHECKOUT = _PACKAGE.parents[1]  # <repo>/backend/foldwise -> <repo>


def shipped(name: str) -> Path:
    """The path of ``name`` (``"frontend"``, ``"migrations"`` or ``"alembic.ini"``).

    Raises ``FileNotFoundError`` naming both places when neither has it.
    """
    for base in (_PACKAGED, _CHECKOUT):
        if (base / name).exists():
            return base / name
    raise FileNotFoundError(
        f"{name} is neither in the installed package ({_PACKAGED}) nor in a source checkout "
        f"({_CHECKOUT}); reinstall foldwise"
    )
