"""Concurrent writers: ``clients`` threads post ``documents`` unique documents over HTTP.

Each client posts its share one by one on its own keep-alive connection and records the
status and latency of every request. Bounded: every request has a timeout and each client
posts a fixed number of documents, so the run ends by itself.
"""

from __future__ import annotations

import statistics
import threading
import time
import uuid
from dataclasses import dataclass, field

import httpx2


@dataclass
class LoadResult:
    """What a load run saw: ids acknowledged, errors by kind, latencies in seconds."""

    acknowledged: list[int] = field(default_factory=list)
    server_errors: int = 0
    client_errors: int = 0
    dropped: int = 0
    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def docs_per_second(self) -> float:
        return len(self.acknowledged) / self.seconds if self.seconds else 0.0

    def percentile(self, q: float) -> float:
        """The ``q``-th percentile latency (0-100), seconds."""
        if not self.latencies:
            return 0.0
        if len(self.latencies) == 1:
            return self.latencies[0]
        return statistics.quantiles(self.latencies, n=100, method="inclusive")[int(q) - 1]


def post_concurrently(
    url: str, headers: dict[str, str], *, clients: int, documents: int, timeout: float = 60.0
) -> LoadResult:
    """Post ``documents`` unique documents from ``clients`` concurrent clients."""
    if clients < 1 or documents < 1:
        raise ValueError("clients and documents must be at least 1")
    result = LoadResult()
    lock = threading.Lock()
    run = uuid.uuid4().hex[:8]

    def client(k: int) -> None:
        with httpx2.Client(base_url=url, headers=headers, timeout=timeout) as http:
            for n in range(k, documents, clients):
                body = {
                    "title": f"load {run} {n}",
                    "text": f"Load run {run}, document {n}: invoice receipt payment {n * 7919}.",
                }
                t0 = time.perf_counter()
                try:
                    response = http.post("/api/documents", json=body)
                except httpx2.TransportError:
                    with lock:
                        result.dropped += 1
                    continue
                elapsed = time.perf_counter() - t0
                with lock:
                    result.latencies.append(elapsed)
                    if response.status_code == 201:
                        result.acknowledged.append(response.json()["document"]["id"])
                    elif response.status_code >= 500:
                        result.server_errors += 1
                    else:
                        result.client_errors += 1

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    result.seconds = time.perf_counter() - t0
    return result
