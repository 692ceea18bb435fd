"""The benchmarks' real ``foldwise serve`` (``foldwise.bench.served``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from foldwise.bench import served
from foldwise.bench.served import Server


@pytest.mark.slow
def test_a_server_whose_port_another_took_starts_on_a_free_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two benchmarks side by side: the second is handed the port the first already
    serves on (as when the first took it while the second prepared its database). Its
    token is refused there, so it starts again elsewhere and answers its own calls."""
    with Server(tmp_path / "first") as first:
        ports = iter([first.port])
        free = served._free_port
        monkeypatch.setattr(served, "_free_port", lambda: next(ports, None) or free())
        with Server(tmp_path / "second") as second:
            assert second.port != first.port
            assert second.call("GET", "/api/folders/tree").status_code == 200
            second.call("POST", "/api/folders", json={"name": "letters"})
        tree = first.call("GET", "/api/folders/tree").json()
        assert "letters" not in str(tree)
