"""Browser tests: the real app (``foldwise serve`` with its embedded worker) in a subprocess on
a free localhost port and a fresh SQLite data directory, driven by Debian's Chromium.

Every test gets its own user, so tests share one server without seeing each other's data.
Browser tests are skipped, with the reason, when /usr/bin/chromium is missing (the fixtures
``server`` and ``browser`` check it first).
"""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, FilePayload, Page, expect, sync_playwright

from conftest import unavailable

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "correct horse battery"
SERVER_START_SECONDS = 60
FOLDWISE = str(Path(sys.executable).with_name("foldwise"))


def require_chromium() -> None:
    """Give up on the calling test (``conftest.unavailable``) when Debian's Chromium is not
    installed."""
    if not CHROMIUM.exists():
        unavailable(
            f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)"
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A running ``foldwise serve``."""

    url: str
    data_dir: Path
    env: dict[str, str]
    log: Path

    def cli(self, *args: str, input_text: str | None = None) -> str:
        out = subprocess.run(
            [FOLDWISE, *args],
            env=self.env,
            capture_output=True,
            text=True,
            input=input_text,
            check=True,
            timeout=120,
        )
        return out.stdout.strip()


def server_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOLDWISE_")}
    env.update(
        {
            "FOLDWISE_ENVIRONMENT": "test",
            "FOLDWISE_DATA_DIR": str(data_dir),
            "FOLDWISE_SECRET_KEY": uuid.uuid4().hex * 2,
            # Reclusters start soon after a change, and stay short on small corpora.
            "FOLDWISE_RECLUSTER_DEBOUNCE_SECONDS": "0.5",
            "FOLDWISE_RECLUSTER_R_MAX": "5",
            "FOLDWISE_RECLUSTER_R_NI": "2",
        }
    )
    env.update(extra)
    return env


def start_server(tmp: Path, **extra: str) -> tuple[Server, subprocess.Popen[bytes]]:
    data_dir = tmp / "data"
    env = server_env(data_dir, **extra)
    port = _free_port()
    server = Server(f"http://127.0.0.1:{port}", data_dir, env, tmp / "serve.log")
    server.cli("db", "upgrade")
    log = server.log.open("wb")
    proc = subprocess.Popen(
        [FOLDWISE, "serve", "--port", str(port), "--no-migrate"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=tmp,
    )
    deadline = time.monotonic() + SERVER_START_SECONDS
    while True:
        try:
            with urllib.request.urlopen(f"{server.url}/healthz", timeout=2) as res:
                if res.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"foldwise serve did not start:\n{server.log.read_text()[-3000:]}")
        time.sleep(0.2)
    return server, proc


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One real server for the browser tests; each test makes its own user."""
    require_chromium()
    srv, proc = start_server(tmp_path_factory.mktemp("ui"))
    try:
        yield srv
    finally:
        stop_server(proc)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    require_chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def user(server: Server) -> str:
    """A fresh user with the password ``PASSWORD``."""
    name = f"u{uuid.uuid4().hex[:10]}"
    server.cli("users", "create", name, "--password", PASSWORD)
    return name


def open_page(browser: Browser, server: Server, **context_options: Any) -> Iterator[Page]:
    """A page of a fresh browser context on ``server``; fails the test on a JavaScript error.
    A generator for fixtures to ``yield from``."""
    context = browser.new_context(base_url=server.url, **context_options)
    context.set_default_timeout(15_000)
    # The same patience for assertions (5 s by default): a CI machine running the whole
    # suite on two cores can take longer than that to finish a background job.
    expect.set_options(timeout=15_000)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield pg
    finally:
        context.close()
    assert not errors, f"JavaScript errors in the page: {errors}"


@pytest.fixture
def page(browser: Browser, server: Server) -> Iterator[Page]:
    yield from open_page(browser, server, viewport={"width": 1360, "height": 860})


def payload(name: str, data: bytes, mime: str = "text/plain") -> FilePayload:
    """A file for ``set_input_files``."""
    return {"name": name, "mimeType": mime, "buffer": data}


def login(page: Page, name: str, password: str = PASSWORD) -> None:
    page.goto("/")
    page.fill("#login-name", name)
    page.fill("#login-password", password)
    page.click("#login-submit")
    page.wait_for_selector("#tree [role=treeitem], #tree p")
    page.wait_for_function("() => window.foldwise?.state !== undefined")


# A tiny corpus with three clearly different topics, and a fourth topic that only arrives later.
TOPICS = {
    "cooking": "recipe oven bake flour sugar butter dough knead yeast bread cake whisk simmer "
    "sauce garlic onion roast pan skillet",
    "astronomy": "telescope galaxy star planet orbit nebula comet asteroid eclipse lunar solar "
    "cosmic spectrum redshift supernova constellation",
    "finance": "invoice budget expense revenue tax account ledger payment interest loan "
    "mortgage dividend portfolio bank credit",
    "gardening": "garden soil compost seed seedling prune mulch watering tomato shrub hedge "
    "perennial flower bloom weed trowel",
    "music": "guitar piano chord melody rhythm tempo concert orchestra violin harmony scale "
    "drum song album rehearsal",
}


def topic_text(topic: str, i: int) -> str:
    words = TOPICS[topic].split()
    # Each document: the topic's words in a different order and emphasis, plus shared filler.
    rot = words[i % len(words) :] + words[: i % len(words)]
    body = " ".join(rot * 3)
    return f"{topic.title()} note {i}\n\n{body}\nThis note was written on day {i} of the year.\n"


def corpus_zip(per_folder: int = 5) -> bytes:
    """``cooking/``, ``astronomy/`` and ``finance/`` (with ``finance/taxes/``) as a zip."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for topic in ("cooking", "astronomy", "finance"):
            for i in range(per_folder):
                zf.writestr(f"{topic}/{topic}-{i}.txt", topic_text(topic, i))
    return buf.getvalue()
