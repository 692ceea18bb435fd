"""Ingestion and tree-listing speed of the service, over real HTTP.

Starts ``foldwise serve`` (no embedded worker) on a fresh database, then measures

* ingestion of N text documents (default 5,000) posted one by one (``POST /api/documents``)
  and in batches (``POST /api/documents/batch``), in documents per second;
* the latency of listing the whole tree with its documents
  (``GET /api/folders/tree?include_documents=true``) with 10,000 documents in 100 folders:
  median and 95th percentile over repeated requests;
* with ``--browser``, the web UI's load of that tree in Debian's Chromium (``loadTree``: both
  reads, the page's model of every document, the drawing): the first after login and the
  median of five more, with their parts.

On SQLite (a file in a temporary data directory) and on PostgreSQL (a scratch database on the
server given by ``--pg``; skipped if it does not answer). Documents are ~2 KB slices of the
python-docs corpus, all distinct. Usage::

    python bench/ingest_bench.py                    # full run, both databases
    python bench/ingest_bench.py --docs 500 --tree-docs 1000 --databases sqlite   # quick
    python bench/ingest_bench.py --databases sqlite --docs 200 --tree-docs 100000 --browser
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import httpx2

from default_corpus import PYTHON_DOCS as DEFAULT_CORPUS


def documents(n: int, size: int = 2000, corpus: Path = DEFAULT_CORPUS) -> list[dict[str, str]]:
    """``n`` distinct documents: consecutive ``size``-character slices of the corpus."""
    out: list[dict[str, str]] = []
    rounds = 0
    while len(out) < n:
        for path in sorted(corpus.rglob("*.txt")):
            text = path.read_text(encoding="utf-8", errors="replace")
            for start in range(0, max(len(text) - size // 2, 1), size):
                body = text[start : start + size]
                # The round number keeps texts distinct when the corpus is used more than once.
                out.append(
                    {"title": f"{path.stem} {start} r{rounds}", "text": f"{body}\n#{rounds}"}
                )
                if len(out) == n:
                    return out
        rounds += 1
    return out


BENCH_PASSWORD = "bench password of the ingest bench"
CHROMIUM = Path("/usr/bin/chromium")
UI_RELOADS = 5


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server(database_url: str, data_dir: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """A running ``foldwise serve`` on a fresh database, and a bearer header for a user."""
    env = {
        **os.environ,
        "FOLDWISE_DATA_DIR": str(data_dir),
        "FOLDWISE_DATABASE_URL": database_url,
        "FOLDWISE_TASK_MODULES": "[]",
        # One user posts thousands of documents as fast as the server takes them: the
        # per-user upload limit (2,000, then 50 a second) would measure itself instead.
        "FOLDWISE_UPLOAD_BURST": "1000000",
        "FOLDWISE_UPLOAD_PER_MINUTE": "1000000",
    }
    cli = [sys.executable, "-m", "foldwise.cli"]
    subprocess.run([*cli, "db", "upgrade"], env=env, check=True, capture_output=True)
    token = subprocess.run(
        [*cli, "users", "create", "bench", "--password", BENCH_PASSWORD],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    port = _free_port()
    proc = subprocess.Popen(
        [*cli, "serve", "--port", str(port), "--no-worker", "--no-migrate"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx2.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.HTTPError:
                time.sleep(0.1)
        else:
            raise RuntimeError("server did not start")
        yield base, {"Authorization": f"Bearer {token}"}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def ingest_single(client: httpx2.Client, docs: list[dict[str, str]]) -> float:
    """Post documents one by one; returns documents per second."""
    start = time.perf_counter()
    for doc in docs:
        response = client.post("/api/documents", json=doc)
        response.raise_for_status()
    return len(docs) / (time.perf_counter() - start)


def ingest_batch(
    client: httpx2.Client,
    docs: list[dict[str, str]],
    batch: int = 500,
    folders: list[int] | None = None,
) -> float:
    """Post documents in batches (round-robin over ``folders`` if given); returns docs/s."""
    start = time.perf_counter()
    for i in range(0, len(docs), batch):
        chunk: list[dict[str, str | int]] = [dict(d) for d in docs[i : i + batch]]
        if folders:
            chunk = [
                {**d, "folder_id": folders[(i + j) % len(folders)]} for j, d in enumerate(chunk)
            ]
        client.post("/api/documents/batch", json={"documents": chunk}).raise_for_status()
    return len(docs) / (time.perf_counter() - start)


def tree_latency(
    client: httpx2.Client, docs: list[dict[str, str]], repeats: int
) -> dict[str, float]:
    """Fill 100 folders (10 x 10) with ``docs`` and time listing the whole tree."""
    folders = []
    for i in range(10):
        top = client.post("/api/folders", json={"name": f"top{i}"}).json()["id"]
        for j in range(9):
            folders.append(
                client.post("/api/folders", json={"name": f"sub{j}", "parent_id": top}).json()["id"]
            )
        folders.append(top)
    ingest_batch(client, docs, folders=folders)
    tree = client.get("/api/folders/tree").json()
    assert (tree["folder_count"], tree["document_count"]) == (100, len(docs)), tree[
        "document_count"
    ]
    out = {}
    for include in (True, False):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            client.get(
                "/api/folders/tree", params={"include_documents": include}
            ).raise_for_status()
            times.append(time.perf_counter() - start)
        times.sort()
        key = "with_documents" if include else "counts_only"
        out[f"{key}_p50_ms"] = 1000 * statistics.median(times)
        out[f"{key}_p95_ms"] = 1000 * times[int(0.95 * (len(times) - 1))]
    return out


def ui_tree_load(base: str) -> dict[str, float]:
    """The web UI's tree load (ms) in Chromium, logged in as the bench user: the first after
    login and the median of ``UI_RELOADS`` more (``window.foldwise.loadTree``), each with its
    parts as the page times them (fetch of both reads, build of its model, drawing)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--headless"])
        try:
            page = browser.new_page(base_url=base, viewport={"width": 1360, "height": 860})
            page.set_default_timeout(120_000)
            page.goto("/")
            page.fill("#login-name", "bench")
            page.fill("#login-password", BENCH_PASSWORD)
            page.click("#login-submit")
            page.wait_for_function("() => (window.foldwise?.state?.timings ?? null) !== null")
            first = page.evaluate("window.foldwise.state.timings")
            again = [
                page.evaluate(
                    "async () => { await window.foldwise.loadTree();"
                    " return window.foldwise.state.timings; }"
                )
                for _ in range(UI_RELOADS)
            ]
        finally:
            browser.close()
    out = {f"ui_first_{k}_ms": float(v) for k, v in first.items()}
    for k in first:
        out[f"ui_reload_{k}_p50_ms"] = statistics.median(float(t[k]) for t in again)
    return out


UrlFactory = Callable[[Path], AbstractContextManager[str]]


def run(database: str, url_for: UrlFactory, args: argparse.Namespace) -> dict[str, float]:
    docs = documents(args.docs)
    tree_docs = documents(args.tree_docs, size=1000)
    result: dict[str, float] = {}
    for mode in ("single", "batch", "tree"):
        with (
            tempfile.TemporaryDirectory() as tmp,
            url_for(Path(tmp)) as url,
            server(url, Path(tmp)) as (base, headers),
            httpx2.Client(base_url=base, headers=headers, timeout=300) as client,
        ):
            if mode == "single":
                result["single_docs_per_s"] = ingest_single(client, docs)
            elif mode == "batch":
                result["batch_docs_per_s"] = ingest_batch(client, docs)
            else:
                result.update(tree_latency(client, tree_docs, args.repeats))
                if args.browser:
                    result.update(ui_tree_load(base))
        print(f"  {database} {mode}: done", file=sys.stderr)
    return result


@contextmanager
def sqlite_url(tmp: Path) -> Iterator[str]:
    yield f"sqlite:///{tmp / 'bench.sqlite3'}"


def postgres_url(admin: str) -> UrlFactory:
    import psycopg

    @contextmanager
    def make(_tmp: Path) -> Iterator[str]:
        name = f"foldwise_bench_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        try:
            host = admin.split("@", 1)[1].rsplit("/", 1)[0]
            user = admin.split("//", 1)[1].split("@", 1)[0]
            yield f"postgresql+psycopg://{user}@{host}/{name}"
        finally:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return make


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--tree-docs", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--out", type=Path, default=Path("bench/out/ingest.json"))
    parser.add_argument(
        "--browser",
        action="store_true",
        help=f"also time the web UI's tree load in {CHROMIUM} (Playwright)",
    )
    args = parser.parse_args()
    if args.browser and not CHROMIUM.exists():
        parser.error(f"--browser needs {CHROMIUM} (apt-get install -y chromium)")
    results: dict[str, object] = {
        "docs": args.docs,
        "tree_docs": args.tree_docs,
        "repeats": args.repeats,
    }
    for database in args.databases.split(","):
        if database == "sqlite":
            results["sqlite"] = run("sqlite", sqlite_url, args)
        elif database == "postgresql":
            try:
                import psycopg

                psycopg.connect(args.pg, connect_timeout=2).close()
            except Exception as exc:  # any failure means: skip, and say why
                results["postgresql"] = f"skipped: {exc}"
                continue
            results["postgresql"] = run("postgresql", postgres_url(args.pg), args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
