"""A real ``foldwise serve`` in a subprocess, for benchmarks and tests that go through HTTP.

Fresh data directory, free loopback port, one user with an API token; ``call`` raises on a
server error so that a benchmark never reports figures from a broken run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2

#: Starts on a new port after another server answered on the chosen one.
_LAUNCH_ATTEMPTS = 5


def _free_port() -> int:
    """A loopback port no socket is bound to now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def check_server_source(source: Path) -> None:
    """Refuse a ``source`` that holds no ``foldwise`` package (``ValueError``). Served with
    it on ``PYTHONPATH``, such a directory is passed over without a word and the installed
    code answers: a baseline given as a whole checkout instead of its ``backend/`` measured
    the change against itself."""
    if not (source / "foldwise" / "__init__.py").is_file():
        raise ValueError(f"{source} holds no foldwise package: give a checkout's backend/")


class Server:
    """``foldwise serve`` on ``data`` (SQLite there unless ``env`` names a database)."""

    def __init__(
        self,
        data: Path,
        *,
        env: dict[str, str] | None = None,
        source: Path | None = None,
        serve_args: tuple[str, ...] = (),
    ) -> None:
        if source is not None:
            check_server_source(source)
        self.serve_args = serve_args
        data.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.env = {
            **os.environ,
            "FOLDWISE_DATA_DIR": str(data),
            "FOLDWISE_MAX_ARCHIVE_ENTRIES": "200000",
            **(env or {}),
        }
        if source is not None:  # another checkout's backend/ (e.g. to measure a baseline)
            self.env["PYTHONPATH"] = str(source)
        cli = [sys.executable, "-m", "foldwise.cli"]
        subprocess.run([*cli, "db", "upgrade"], env=self.env, check=True, capture_output=True)
        made = subprocess.run(
            [*cli, "users", "create", "bench"], env=self.env, check=True, capture_output=True
        )
        self.token = made.stdout.decode().strip().splitlines()[-1]
        self.log_path = data / "serve.log"
        self.headers = {"Authorization": f"Bearer {self.token}"}
        self._launch()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _launch(self) -> None:
        """Start ``foldwise serve`` on the data directory and wait until it answers.

        The port was free when it was chosen, but another benchmark's server can take it in
        the seconds the database takes to prepare; the answers then come from that server,
        which refuses this token (a service benchmark's zip import failed with 401 so,
        beside a second benchmark). This server then starts again on another free port.
        """
        for _ in range(_LAUNCH_ATTEMPTS):
            if self._start():
                return
            self.port = _free_port()
        raise RuntimeError(f"no free port answered for foldwise serve; see {self.log_path}")

    def _start(self) -> bool:
        """One start on ``self.port``; False when another server answers there."""
        self.log = open(self.log_path, "ab")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "foldwise.cli",
                "serve",
                "--port",
                str(self.port),
                "--no-migrate",
                *self.serve_args,
            ],
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            # Its own process group, which :meth:`kill` ends as a whole (its API processes).
            start_new_session=True,
        )
        self.client = httpx2.Client(base_url=self.url, headers=self.headers, timeout=600)
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.client.get("/healthz").status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"foldwise serve did not start; see {self.log_path}")
            time.sleep(0.2)
        if self.client.get("/api/folders/tree").status_code != 401:
            return True
        self.stop()
        return False

    def wait_for_api_processes(self, count: int, timeout: float = 60.0) -> int:
        """Wait until uvicorn has started ``count`` API processes (its log says so; with
        ``--processes N`` the first answers before the others); returns how many did."""
        deadline = time.monotonic() + timeout
        while (started := self._started()) < count and time.monotonic() < deadline:
            time.sleep(0.1)
        return started

    def _started(self) -> int:
        return self.log_path.read_text(errors="replace").count("Started server process")

    def child_pids(self) -> list[int]:
        """The live child processes of the server's supervisor (Linux /proc)."""
        found: list[int] = []
        for task in Path(f"/proc/{self.process.pid}/task").iterdir():
            found += [int(c) for c in (task / "children").read_text().split()]
        return found

    def kill(self, *, supervisor_only: bool = False) -> None:
        """SIGKILL the server and its API processes, as a crash of the service or a
        container's end would (no cleanup runs); or only the supervisor process."""
        if supervisor_only:
            self.process.kill()
        else:
            self._kill_group()
        self.process.wait()
        self.client.close()
        self.log.close()

    def _kill_group(self) -> None:
        """SIGKILL the server's process group (the supervisor and its API processes)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def restart(self) -> None:
        """Start the server again on the same data (after :meth:`kill` or :meth:`stop`)."""
        self._launch()

    def stop(self) -> None:
        self.client.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._kill_group()
            self.process.wait()
        self.log.close()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def call(self, method: str, url: str, **kwargs: Any) -> httpx2.Response:
        """One request; a 5xx answer raises ``RuntimeError``."""
        response = self.client.request(method, url, **kwargs)
        if response.status_code >= 500:
            raise RuntimeError(f"{method} {url}: {response.status_code} {response.text[:300]}")
        return response

    def recluster(self) -> tuple[dict[str, Any], float]:
        """Run a recluster to the end; returns the extended tree and the seconds it took."""
        t0 = time.perf_counter()
        job = self.call("POST", "/api/recluster", json={}).json()
        while job["state"] not in ("done", "failed", "stale"):
            time.sleep(0.1)
            job = self.call("GET", f"/api/jobs/{job['id']}").json()
        if job["state"] != "done":
            raise RuntimeError(f"recluster ended {job['state']}: {job.get('error')}")
        seconds = time.perf_counter() - t0
        return self.call("GET", "/api/tree/extended").json(), seconds
