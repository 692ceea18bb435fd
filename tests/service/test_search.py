"""Full-text search: SQLite FTS5 and PostgreSQL full-text, only the caller's documents."""

from __future__ import annotations

from fastapi.testclient import TestClient

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
