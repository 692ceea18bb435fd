"""The folder tree: create, rename, move with cycle checks, delete rules, the whole tree."""

from __future__ import annotations

from fastapi.testclient import TestClient

from .helpers import Api


def test_create_nested_and_paths(client: TestClient, api: Api) -> None:
    alice = api.user()
    top = api.folder(alice, "work")
    mid = api.folder(alice, "projects", top)
    leaf = api.folder(alice, "foldwise", mid)
    assert client.get(f"/api/folders/{leaf}", headers=alice).json()["path"] == (
        "work/projects/foldwise"
    )
    listed = client.get("/api/folders", headers=alice).json()
    assert [f["path"] for f in listed] == ["work", "work/projects", "work/projects/foldwise"]


def test_sibling_names_are_unique_but_cousins_may_share(client: TestClient, api: Api) -> None:
    alice = api.user()
    a = api.folder(alice, "a")
    b = api.folder(alice, "b")
    api.folder(alice, "notes", a)
    api.folder(alice, "notes", b)
    clash = client.post("/api/folders", json={"name": "a"}, headers=alice)
    assert clash.status_code == 409
    assert "already exists" in clash.json()["detail"]


def test_rename_and_move(client: TestClient, api: Api) -> None:
    alice = api.user()
    a = api.folder(alice, "a")
    b = api.folder(alice, "b")
    renamed = client.patch(f"/api/folders/{b}", json={"name": "bee"}, headers=alice).json()
    assert (renamed["name"], renamed["parent_id"]) == ("bee", None)  # not moved
    moved = client.patch(f"/api/folders/{b}", json={"parent_id": a}, headers=alice).json()
    assert moved["path"] == "a/bee"
    top = client.patch(f"/api/folders/{b}", json={"parent_id": None}, headers=alice).json()
    assert top["path"] == "bee"


def test_move_into_own_subtree_is_a_cycle(client: TestClient, api: Api) -> None:
    alice = api.user()
    a = api.folder(alice, "a")
    b = api.folder(alice, "b", a)
    c = api.folder(alice, "c", b)
    before = api.snapshot()
    for target in (a, b, c):
        response = client.patch(f"/api/folders/{a}", json={"parent_id": target}, headers=alice)
        assert response.status_code == 409
        assert "itself" in response.json()["detail"]
    assert api.snapshot() == before


def test_delete_unfiles_documents_and_needs_recursive_for_subfolders(
    client: TestClient, api: Api
) -> None:
    alice = api.user()
    a = api.folder(alice, "a")
    b = api.folder(alice, "b", a)
    in_a = api.post(alice, "in a", folder_id=a)["document"]["id"]
    in_b = api.post(alice, "in b", folder_id=b)["document"]["id"]
    refused = client.delete(f"/api/folders/{a}", headers=alice)
    assert refused.status_code == 409
    assert "recursive" in refused.json()["detail"]
    leaf = client.delete(f"/api/folders/{b}", headers=alice).json()
    assert leaf == {"folders_deleted": 1, "documents_unfiled": 1}
    assert client.get(f"/api/documents/{in_b}", headers=alice).json()["folder_id"] is None
    c = api.folder(alice, "c", a)
    api.post(alice, "in c", folder_id=c)
    whole = client.delete(f"/api/folders/{a}?recursive=true", headers=alice).json()
    assert whole == {"folders_deleted": 2, "documents_unfiled": 2}
    assert client.get(f"/api/documents/{in_a}", headers=alice).status_code == 200
    assert client.get("/api/folders", headers=alice).json() == []


def test_tree_with_counts_and_documents(client: TestClient, api: Api) -> None:
    alice = api.user()
    a = api.folder(alice, "a")
    b = api.folder(alice, "b", a)
    api.post(alice, "x", title="X", folder_id=b)
    api.post(alice, "y", title="Y", folder_id=b)
    api.post(alice, "z", title="Z")
    tree = client.get("/api/folders/tree", headers=alice).json()
    assert (tree["folder_count"], tree["document_count"], tree["unfiled_count"]) == (2, 3, 1)
    assert tree["folders"][0]["name"] == "a"
    assert tree["folders"][0]["children"][0]["document_count"] == 2
    assert tree["folders"][0]["documents"] is None
    full = client.get("/api/folders/tree?include_documents=true", headers=alice).json()
    assert [d["title"] for d in full["folders"][0]["children"][0]["documents"]] == ["X", "Y"]
    assert [d["title"] for d in full["unfiled"]] == ["Z"]


def test_depth_limit(client: TestClient, api: Api) -> None:
    alice = api.user()
    parent = None
    limit = client.app.state.settings.max_folder_depth  # type: ignore[attr-defined]
    for i in range(limit):
        parent = api.folder(alice, f"d{i}", parent)
    too_deep = client.post("/api/folders", json={"name": "x", "parent_id": parent}, headers=alice)
    assert too_deep.status_code == 422


def test_folder_path_helper(api: Api) -> None:
    from foldwise.service.folders import service
    from foldwise.service.users.service import get_by_name

    alice = api.user()
    leaf = api.folder(alice, "c", api.folder(alice, "b", api.folder(alice, "a")))
    with api.session() as session:
        user = get_by_name(session=session, name="alice")
        assert user is not None
        folder = service.get_folder(session=session, user=user, folder_id=leaf)
        assert service.folder_path(session=session, folder=folder) == "a/b/c"
        assert service.folder_paths(session=session, user=user)[leaf] == "a/b/c"
