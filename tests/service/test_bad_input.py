"""Bad input: each gets a clear 4xx and changes no stored data (docs/bad-input.md).

Hostile archives are in test_imports.py, bad credentials and CSRF in test_auth.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from .helpers import Api, docx_bytes, encrypted_pdf

MB = 1024 * 1024

# (case, method, url, request kwargs, status, words the message must contain).
# "{f}" is one of the caller's folders, "{d}" one of their documents, "{bf}" / "{bd}" bob's.
CASES: list[tuple[str, str, str, dict[str, Any], int, str]] = [
    (
        "malformed JSON",
        "POST",
        "/api/documents",
        {"content": b'{"text": "x",', "headers": {"content-type": "application/json"}},
        422,
        "JSON",
    ),
    ("JSON array, not object", "POST", "/api/documents", {"json": ["x"]}, 422, "object"),
    ("missing text", "POST", "/api/documents", {"json": {"title": "t"}}, 422, "text"),
    ("text of wrong type", "POST", "/api/documents", {"json": {"text": 12}}, 422, "string"),
    (
        "folder_id of wrong type",
        "POST",
        "/api/documents",
        {"json": {"text": "x", "folder_id": "abc"}},
        422,
        "integer",
    ),
    (
        "unknown field",
        "POST",
        "/api/documents",
        {"json": {"text": "x", "colour": 1}},
        422,
        "colour",
    ),
    ("empty text", "POST", "/api/documents", {"json": {"text": ""}}, 422, "text"),
    ("whitespace text", "POST", "/api/documents", {"json": {"text": "  \n "}}, 422, "empty"),
    (
        "text over the size limit",
        "POST",
        "/api/documents",
        {"json": {"text": "x" * (MB + 1)}},
        413,
        "limit",
    ),
    (
        "unknown folder id",
        "POST",
        "/api/documents",
        {"json": {"text": "x", "folder_id": 999999}},
        404,
        "folder 999999",
    ),
    (
        "another user's folder id",
        "POST",
        "/api/documents",
        {"json": {"text": "x", "folder_id": "{bf}"}},
        404,
        "not found",
    ),
    ("unknown document id", "GET", "/api/documents/999999", {}, 404, "document 999999"),
    (
        "another user's document id",
        "PATCH",
        "/api/documents/{bd}",
        {"json": {"title": "x"}},
        404,
        "not found",
    ),
    ("non-integer id", "GET", "/api/documents/abc", {}, 422, "integer"),
    (
        "file into another user's folder",
        "PATCH",
        "/api/documents/{d}",
        {"json": {"folder_id": "{bf}"}},
        404,
        "not found",
    ),
    ("null title", "PATCH", "/api/documents/{d}", {"json": {"title": ""}}, 422, "title"),
    ("negative offset", "GET", "/api/documents?offset=-1", {}, 422, "offset"),
    ("page too large", "GET", "/api/documents?limit=100000", {}, 422, "limit"),
    (
        "unsupported file type",
        "POST",
        "/api/documents/upload",
        {"files": {"file": ("tool.exe", b"MZ\x90\x00")}},
        415,
        "unsupported",
    ),
    (
        "empty file",
        "POST",
        "/api/documents/upload",
        {"files": {"file": ("e.txt", b"")}},
        422,
        "empty",
    ),
    (
        "corrupt PDF",
        "POST",
        "/api/documents/upload",
        {"files": {"file": ("bad.pdf", b"%PDF-1.4\nnot really a pdf")}},
        422,
        "bad.pdf",
    ),
    (
        "encrypted PDF",
        "POST",
        "/api/documents/upload",
        {"files": {"file": ("locked.pdf", encrypted_pdf("secret"))}},
        422,
        "encrypted",
    ),
    (
        "corrupt docx",
        "POST",
        "/api/documents/upload",
        {"files": {"file": ("bad.docx", b"PK\x03\x04 broken")}},
        422,
        "docx",
    ),
    (
        "docx with no text",
        "POST",
        "/api/documents/upload",
        {"files": {"file": ("blank.docx", docx_bytes([]))}},
        422,
        "no text",
    ),
    (
        "binary data named .txt",
        "POST",
        "/api/documents/upload",
        {"files": {"file": ("x.txt", b"\x00\x01\x02binary")}},
        422,
        "binary",
    ),
    (
        "HTML without text",
        "POST",
        "/api/documents/upload",
        {"files": {"file": ("x.html", b"<html><script>1</script></html>")}},
        422,
        "no text",
    ),
    (
        "file over the size limit",
        "POST",
        "/api/documents/upload",
        {"files": {"file": ("big.txt", b"a" * (MB + 1))}},
        413,
        "limit",
    ),
    (
        "upload without a file",
        "POST",
        "/api/documents/upload",
        {"data": {"title": "x"}},
        422,
        "file",
    ),
    ("empty batch", "POST", "/api/documents/batch", {"json": {"documents": []}}, 422, "documents"),
    (
        "batch with one bad item",
        "POST",
        "/api/documents/batch",
        {"json": {"documents": [{"text": "good one"}, {"text": " "}]}},
        422,
        "documents[1]",
    ),
    (
        "batch over the count limit",
        "POST",
        "/api/documents/batch",
        {"json": {"documents": [{"text": f"d{i}"} for i in range(51)]}},
        413,
        "at most",
    ),
    (
        "batch over the size limit",
        "POST",
        "/api/documents/batch",
        {"json": {"documents": [{"text": f"{i}" + "x" * (MB - 10)} for i in range(5)]}},
        413,
        "limit",
    ),
    (
        "file batch with one corrupt file",
        "POST",
        "/api/documents/batch/upload",
        {"files": [("files", ("ok.txt", b"fine")), ("files", ("bad.pdf", b"%PDF junk"))]},
        422,
        "files[1]",
    ),
    ("folder with empty name", "POST", "/api/folders", {"json": {"name": ""}}, 422, "name"),
    ("folder name with a slash", "POST", "/api/folders", {"json": {"name": "a/b"}}, 422, "'/'"),
    ("folder named ..", "POST", "/api/folders", {"json": {"name": ".."}}, 422, "'..'"),
    (
        "folder name with control characters",
        "POST",
        "/api/folders",
        {"json": {"name": "a\tb"}},
        422,
        "control",
    ),
    ("folder name too long", "POST", "/api/folders", {"json": {"name": "x" * 256}}, 422, "name"),
    (
        "folder under an unknown parent",
        "POST",
        "/api/folders",
        {"json": {"name": "x", "parent_id": 999999}},
        404,
        "folder 999999",
    ),
    (
        "folder under another user's folder",
        "POST",
        "/api/folders",
        {"json": {"name": "x", "parent_id": "{bf}"}},
        404,
        "not found",
    ),
    (
        "duplicate sibling name",
        "POST",
        "/api/folders",
        {"json": {"name": "mine"}},
        409,
        "already exists",
    ),
    (
        "move a folder into itself",
        "PATCH",
        "/api/folders/{f}",
        {"json": {"parent_id": "{f}"}},
        409,
        "itself",
    ),
    (
        "move into another user's folder",
        "PATCH",
        "/api/folders/{f}",
        {"json": {"parent_id": "{bf}"}},
        404,
        "not found",
    ),
    ("delete a folder with subfolders", "DELETE", "/api/folders/{f}", {}, 409, "recursive"),
    (
        "delete another user's folder",
        "DELETE",
        "/api/folders/{bf}?recursive=true",
        {},
        404,
        "not found",
    ),
    ("search without q", "GET", "/api/search", {}, 422, "q"),
    ("search without words", "GET", "/api/search?q=%21%21", {}, 422, "no words"),
    ("search query too long", "GET", "/api/search", {"params": {"q": "a" * 501}}, 422, "q"),
    ("revoke an unknown token", "DELETE", "/api/tokens/999999", {}, 404, "token 999999"),
    (
        "login with malformed JSON",
        "POST",
        "/auth/login",
        {"content": b"{", "headers": {"content-type": "application/json"}},
        422,
        "JSON",
    ),
    (
        "login with wrong types",
        "POST",
        "/auth/login",
        {"json": {"name": 1, "password": []}},
        422,
        "invalid login",
    ),
    # Numbers past the database's 64-bit integers, in every place an id or offset arrives.
    ("id over 2^63 in a path", "GET", f"/api/documents/{2**64}", {}, 422, "less than or equal"),
    ("id over 2^63 in a query", "GET", f"/api/documents?folder_id={2**64}", {}, 422, "folder_id"),
    ("offset over 2^63", "GET", f"/api/documents?offset={2**64}", {}, 422, "offset"),
    (
        "folder id over 2^63 in JSON",
        "PATCH",
        "/api/documents/{d}",
        {"json": {"folder_id": 2**64}},
        422,
        "folder_id",
    ),
    (
        "parent id over 2^63 in JSON",
        "POST",
        "/api/folders",
        {"json": {"name": "x", "parent_id": 2**70}},
        422,
        "parent_id",
    ),
    (
        "folder id over 2^63 in a form",
        "POST",
        "/api/documents/upload",
        {"files": {"file": ("a.txt", b"text")}, "data": {"folder_id": str(2**64)}},
        422,
        "folder_id",
    ),
    (
        "critique id over 2^63",
        "DELETE",
        f"/api/critiques/{2**63}",
        {},
        422,
        "less than or equal",
    ),
    # Text that cannot be stored or echoed: lone surrogates, NUL; numbers JSON does not have.
    (
        "lone surrogate in a document text",
        "POST",
        "/api/documents",
        {
            "content": b'{"text": "bad \\ud800 text"}',
            "headers": {"content-type": "application/json"},
        },
        422,
        "surrogate",
    ),
    (
        "lone surrogate in a folder name",
        "POST",
        "/api/folders",
        {"content": b'{"name": "\\udfff"}', "headers": {"content-type": "application/json"}},
        422,
        "body.name",
    ),
    (
        "NUL in a title",
        "PATCH",
        "/api/documents/{d}",
        {"json": {"title": "a\x00b"}},
        422,
        "NUL",
    ),
    (
        "NUL in a form title",
        "POST",
        "/api/documents/upload",
        {"files": {"file": ("a.txt", b"text")}, "data": {"title": "a\x00b"}},
        422,
        "NUL",
    ),
    (
        "NaN in JSON",
        "POST",
        "/api/documents",
        {
            "content": b'{"text": "x", "folder_id": NaN}',
            "headers": {"content-type": "application/json"},
        },
        422,
        "NaN is not a JSON number",
    ),
    (
        "Infinity in JSON",
        "POST",
        "/api/critiques",
        {
            "content": b'{"kind": "closer", "a": 1, "b": Infinity, "c": 2}',
            "headers": {"content-type": "application/json"},
        },
        422,
        "Infinity",
    ),
    (
        "a number that overflows to infinity",
        "POST",
        "/api/folders",
        {
            "content": b'{"name": "x", "parent_id": 1e400}',
            "headers": {"content-type": "application/json"},
        },
        422,
        "out of range",
    ),
    (
        "body over the global limit",
        "POST",
        "/api/import/zip",
        {"content": b"x", "headers": {"content-length": str(10**12)}},
        413,
        "limit",
    ),
]


def _fill(value: Any, ids: dict[str, int]) -> Any:
    if isinstance(value, str):
        for key, number in ids.items():
            if value == "{" + key + "}":
                return number
            value = value.replace("{" + key + "}", str(number))
        return value
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def world(shared_api: Api) -> tuple[Api, dict[str, int], dict[str, str]]:
    """Alice with a folder, a subfolder and a document; Bob with the same. Shared by every
    case: each case asserts that it changed nothing."""
    api = shared_api
    alice, bob = api.user("alice"), api.user("bob")
    mine = api.folder(alice, "mine")
    api.folder(alice, "sub", mine)
    ids = {
        "f": mine,
        "d": api.post(alice, "my document", folder_id=mine)["document"]["id"],
        "bf": api.folder(bob, "bobs"),
        "bd": api.post(bob, "bob's document")["document"]["id"],
    }
    return api, ids, alice


@pytest.mark.parametrize(
    ("case", "method", "url", "kwargs", "status", "needle"), CASES, ids=[c[0] for c in CASES]
)
def test_bad_input_is_a_clear_4xx_and_changes_nothing(
    world: tuple[Api, dict[str, int], dict[str, str]],
    case: str,
    method: str,
    url: str,
    kwargs: dict[str, Any],
    status: int,
    needle: str,
) -> None:
    api, ids, alice = world
    before = api.snapshot()
    filled = {k: _fill(v, ids) for k, v in kwargs.items()}
    headers = {**alice, **filled.pop("headers", {})}
    response = api.client.request(method, _fill(url, ids), headers=headers, **filled)
    assert response.status_code == status, response.text
    assert needle in response.text, response.text
    assert api.snapshot() == before
