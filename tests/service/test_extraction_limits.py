"""Hostile files are refused by bounded parsing in a limited child process, not by the
server running out of time or memory (documents/sandbox.py)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from foldwise.bench.hostile import inflating_pdf
from foldwise.service.documents import sandbox
from foldwise.service.documents.extract import extract
from foldwise.service.errors import InvalidInputError

from .helpers import Api


def test_an_honest_pdf_made_the_same_way_is_read() -> None:
    extracted = extract(inflating_pdf(20_000), "small.pdf")
    assert "Hello world" in extracted.text


def test_a_decompression_bomb_is_refused_by_the_inflation_limit() -> None:
    bomb = inflating_pdf(60 << 20)  # 60 MB of text operators from about 90 KB
    assert len(bomb) < 200_000
    with pytest.raises(InvalidInputError, match="Limit reached while decompressing"):
        extract(bomb, "bomb.pdf")


def test_a_pdf_with_too_much_work_for_its_size_is_refused_at_its_cpu_budget() -> None:
    heavy = inflating_pdf(3 << 20)  # inflates within the limit, but costs seconds to parse
    assert sandbox.budget_for(len(heavy)).cpu_seconds == 1
    with pytest.raises(InvalidInputError, match="s of work to read: refused"):
        extract(heavy, "heavy.pdf")


def test_budgets_grow_with_the_file_and_stay_bounded() -> None:
    small, large, huge = (sandbox.budget_for(n) for n in (10_000, 5_000_000, 10**9))
    assert small.cpu_seconds < large.cpu_seconds <= huge.cpu_seconds == 60
    assert small.memory_bytes < large.memory_bytes <= huge.memory_bytes == 2 << 30


def test_an_uploaded_bomb_is_a_422_and_stores_nothing(client: TestClient, api: Api) -> None:
    alice = api.user()
    before = api.snapshot()
    response = client.post(
        "/api/documents/upload",
        files={"file": ("bomb.pdf", inflating_pdf(60 << 20), "application/pdf")},
        headers=alice,
    )
    assert response.status_code == 422
    assert "bomb.pdf" in response.json()["detail"]
    assert api.snapshot() == before


def test_large_html_goes_to_the_child_and_small_html_stays_in_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sandboxed: list[str] = []
    run_parser = sandbox.run_parser

    def spy(parse, data, filename):  # type: ignore[no-untyped-def]
        sandboxed.append(filename)
        return run_parser(parse, data, filename)

    monkeypatch.setattr(sandbox, "run_parser", spy)
    small = b"<html><head><title>Small</title></head><body><p>tiny page</p></body></html>"
    big = b"<html><head><title>Big</title></head><body>" + b"<p>many words here</p>" * 20000
    assert extract(small, "small.html").title == "Small"
    extracted = extract(big + b"</body></html>", "big.html")
    assert extracted.title == "Big" and "many words here" in extracted.text
    assert sandboxed == ["big.html"]
