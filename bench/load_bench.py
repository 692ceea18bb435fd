"""Concurrent writers against a real ``foldwise serve`` on loopback (issue: 50 clients,
1,000 unique documents, automatic reclusters on).

Reports acknowledged documents, server errors, dropped connections, documents stored,
automatic recluster jobs scheduled, docs/s and p50/p95 latency, on SQLite and (when it
answers) PostgreSQL. Usage::

    python bench/load_bench.py --clients 50 --documents 1000 --databases sqlite,postgresql \
        [--processes 2] [--server-src OTHER_CHECKOUT/backend]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg

from foldwise.bench.load import post_concurrently
from foldwise.bench.served import Server, check_server_source
from foldwise.service.cli import default_api_processes

PG_ADMIN = os.environ.get("FOLDWISE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of the live processes ``pids`` (Linux /proc)."""
    total = 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def run(
    database: str,
    clients: int,
    documents: int,
    processes: int | None = None,
    source: Path | None = None,
) -> dict[str, Any]:
    env: dict[str, str] = {"FOLDWISE_RECLUSTER_AUTO": "true"}
    scratch = None
    if database == "postgresql":
        scratch = f"foldwise_load_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{scratch}"')
        env["FOLDWISE_DATABASE_URL"] = f"postgresql+psycopg://postgres@127.0.0.1:5432/{scratch}"
    try:
        with (
            tempfile.TemporaryDirectory(prefix="load-bench-") as tmp,
            Server(
                Path(tmp),
                env=env,
                source=source,
                serve_args=("--processes", str(processes)) if processes else (),
            ) as server,
        ):
            # Measure the steady state: every API process up, not the first one alone.
            server.wait_for_api_processes(processes or default_api_processes())
            pids = [server.process.pid, *server.child_pids()]
            cpu_before = _cpu_seconds(pids)
            result = post_concurrently(
                server.url, server.headers, clients=clients, documents=documents
            )
            server_cpu = _cpu_seconds(pids) - cpu_before
            time.sleep(2)  # let the queued schedule tasks run
            stored = server.call("GET", "/api/documents", params={"limit": 1}).json()["total"]
            jobs = server.call("GET", "/api/jobs").json()["items"]
    finally:
        if scratch:
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')
    return {
        "database": database,
        "processes": processes or "serve's default",
        "clients": clients,
        "documents": documents,
        "acknowledged": len(result.acknowledged),
        "unique_acknowledged": len(set(result.acknowledged)),
        "stored": stored,
        "server_errors": result.server_errors,
        "client_errors": result.client_errors,
        "dropped": result.dropped,
        "auto_jobs": sum(j["trigger"] == "auto" for j in jobs),
        "docs_per_s": round(result.docs_per_second, 1),
        "p50_ms": round(1000 * result.percentile(50), 1),
        "p95_ms": round(1000 * result.percentile(95), 1),
        # CPU of the server's processes (supervisor and API processes) per acknowledged
        # document, while the clients posted: steadier than docs/s on a shared machine.
        "server_cpu_ms_per_doc": round(1000 * server_cpu / max(1, len(result.acknowledged)), 2),
        "load_average": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument(
        "--processes",
        type=int,
        default=None,
        help="API processes (foldwise serve --processes; default: serve's own)",
    )
    parser.add_argument(
        "--server-src",
        type=Path,
        help="another checkout's backend/ to serve (e.g. the code before a change)",
    )
    args = parser.parse_args()
    if args.server_src is not None:
        try:
            check_server_source(args.server_src)
        except ValueError as exc:
            parser.exit(2, f"load_bench: {exc}\n")
    for database in args.databases.split(","):
        result = run(database, args.clients, args.documents, args.processes, args.server_src)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
