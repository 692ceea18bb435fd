"""Registers ``foldwise bench`` on the main command line."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def bench(corpus_dir: str) -> None:
        """Evaluate clustering methods on CORPUS_DIR (folders are the reference hierarchy)."""
        raise typer.Exit(code=2)
