"""The ``foldwise`` command line.

Each area registers its own commands here; imports of heavy modules stay inside the
commands so that ``foldwise --help`` is instant.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Foldwise: keeps your documents in a folder hierarchy that learns from you.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def main() -> None:
    """Foldwise: keeps your documents in a folder hierarchy that learns from you."""


def _register() -> None:
    from foldwise.bench.cli import register as register_bench

    register_bench(app)
    from foldwise.service.cli import register as register_service

    register_service(app)


_register()

if __name__ == "__main__":
    app()
