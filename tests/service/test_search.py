"""Full-text search: SQLite FTS5 and PostgreSQL full-text, only the caller's documents."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from foldwise.service.app import create_app
from foldwise.service.config import Settings

from .helpers import Api


def test_search_finds_by_text_and_title_best_first(client: TestClient, api: Api) -> None:
    alice = api.user()
    api.post(alice, "The gardener waters tomatoes every morning.", title="Garden diary")
    api.post(alice, "Compilers translate source code.", title="Compilers")
    api.post(alice, "Tomatoes, tomatoes and more tomatoes: a tomato sauce.", title="Sauce")
    hits = client.get("/api/search", params={"q": "tomatoes"}, headers=alice).json()["hits"]
    assert {h["title"] for h in hits} == {"Garden diary", "Sauce"}
    assert any("[" in h["snippet"] for h in hits)
    by_title = client.get("/api/search", params={"q": "compilers"}, headers=alice).json()
    assert [h["title"] for h in by_title["hits"]] == ["Compilers"]
    # Every word must match.
    both = client.get("/api/search", params={"q": "gardener tomatoes"}, headers=alice).json()
    assert [h["title"] for h in both["hits"]] == ["Garden diary"]


def test_stemming_matches_word_forms(client: TestClient, api: Api) -> None:
    alice = api.user()
    api.post(alice, "She was running through the park.", title="Run")
    hits = client.get("/api/search", params={"q": "runs"}, headers=alice).json()["hits"]
    assert [h["title"] for h in hits] == ["Run"]


def test_search_sees_only_the_callers_documents(client: TestClient, api: Api) -> None:
    alice, bob = api.user("alice"), api.user("bob")
    api.post(alice, "secret merger plans")
    assert client.get("/api/search", params={"q": "merger"}, headers=bob).json()["hits"] == []
    assert len(client.get("/api/search", params={"q": "merger"}, headers=alice).json()["hits"]) == 1


def test_query_operators_are_literal_words(client: TestClient, api: Api) -> None:
    alice = api.user()
    api.post(alice, "near and or not")
    for q in ['"unbalanced', "NEAR(a b)", "a* OR", "title:x", "-x", "a & | ! b"]:
        response = client.get("/api/search", params={"q": q}, headers=alice)
        assert response.status_code == 200, (q, response.text)


def test_search_follows_edits_and_deletes(client: TestClient, api: Api) -> None:
    alice = api.user()
    doc = api.post(alice, "ephemeral content", title="Old title")["document"]["id"]
    client.patch(f"/api/documents/{doc}", json={"title": "Pineapple"}, headers=alice)
    assert len(client.get("/api/search?q=pineapple", headers=alice).json()["hits"]) == 1
    client.delete(f"/api/documents/{doc}", headers=alice)
    assert client.get("/api/search?q=ephemeral", headers=alice).json()["hits"] == []


def test_query_without_words_is_422(client: TestClient, api: Api) -> None:
    alice = api.user()
    for q in ["", "  ", "!!!"]:
        assert client.get("/api/search", params={"q": q}, headers=alice).status_code == 422


def _ranks(client: TestClient, headers: dict[str, str], q: str) -> list[tuple[str, float]]:
    hits = client.get("/api/search", params={"q": q}, headers=headers).json()["hits"]
    return [(h["title"], h["rank"]) for h in hits]


def test_ranking_does_not_depend_on_other_users_documents(client: TestClient, api: Api) -> None:
    """Scores computed over every user's documents would tell alice what bob wrote."""
    alice, bob = api.user("alice"), api.user("bob")
    api.post(alice, "Tomato soup with basil. " + "stock " * 40, title="Soup")
    api.post(alice, "Tomato, tomato and tomato salad with basil.", title="Salad")
    api.post(alice, "A letter about the car insurance.", title="Letter")
    before = _ranks(client, alice, "tomato basil")
    assert [title for title, _ in before] == ["Salad", "Soup"]
    for index in range(30):
        api.post(bob, f"tomato harvest notes {index} " + "tomato " * index, title=f"Bob {index}")
    api.post(bob, "basil " * 200, title="Bob basil")
    assert _ranks(client, alice, "tomato basil") == before


def test_sqlite_scores_are_fts5_bm25_for_a_single_user(sqlite_settings: Settings) -> None:
    """Oracle: with one user, the per-user scores are FTS5's own bm25 (title 5, text 1)."""
    with TestClient(create_app(sqlite_settings)) as client:
        _check_against_fts5_bm25(client, Api(client), sqlite_settings)


def _check_against_fts5_bm25(client: TestClient, api: Api, settings: Settings) -> None:
    alice = api.user("alice")
    texts = [
        ("Gardens", "Running water for the garden, and tomatoes. " + "soil " * 150),
        ("Tomatoes", "tomatoes tomatoes: a garden crop"),
        ("Runner", "A runner runs in the garden " * 20),
        ("Other", "nothing relevant here"),
    ]
    for title, body in texts:
        api.post(alice, body, title=title)
    engine = create_engine(settings.sqlalchemy_url)
    with engine.connect() as connection:
        expected = dict(
            connection.execute(
                text(
                    "SELECT d.title, -bm25(documents_fts, 5.0, 1.0) FROM documents_fts "
                    "JOIN documents AS d ON d.id = documents_fts.rowid "
                    'WHERE documents_fts MATCH \'"garden" "running"\''
                )
            ).all()
        )
    engine.dispose()
    served = dict(_ranks(client, alice, "garden running"))
    assert set(served) == set(expected) == {"Gardens", "Runner"}
    for title, score in served.items():
        assert score == pytest.approx(expected[title], rel=1e-9)
