"""Property-based fuzzing of every operation of the OpenAPI spec (schemathesis).

With a valid token, schema-valid (positive) and schema-violating (negative) requests to every
operation must get no 5xx, and every answer must match the spec (status codes, content types,
bodies). Bounded: a fixed number of examples per operation, and no example database, so a run
changes no file of the repository.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from foldwise.service import migrate
from foldwise.service.app import create_app

from .conftest import make_settings
from .helpers import Api

EXAMPLES = 25
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, dict[str, str]]]:
    """An app on a fresh SQLite database, with a user who has a folder and a document."""
    root: Path = tmp_path_factory.mktemp("fuzz")
    url = f"sqlite:///{root / 'foldwise.sqlite3'}"
    migrate.upgrade(url)
    app = create_app(make_settings(root / "data", url))
    with TestClient(app) as client:
        api = Api(client)
        headers = api.user("fuzzer")
        folder = api.folder(headers, "Letters")
        api.post(headers, "a letter about the car insurance", folder_id=folder)
        yield app, headers


def _cases() -> list[tuple[str, GenerationMode]]:
    """Every operation with valid input, and with invalid input where it takes any."""
    # A throwaway data directory: the app's runtime makes its queue there, not in the checkout.
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(make_settings(Path(tmp) / "data"))
        schema = schemathesis.openapi.from_asgi("/openapi.json", app)
        cases = []
        for result in schema.get_all_operations():
            operation = result.ok()
            cases.append((operation.label, GenerationMode.POSITIVE))
            if operation.definition.raw.get("parameters") or operation.body:
                cases.append((operation.label, GenerationMode.NEGATIVE))
        app.state.runtime.close()
    return sorted(cases)


@pytest.mark.parametrize(("label", "mode"), _cases())
def test_no_server_error_and_answers_match_the_spec(
    served: tuple[object, dict[str, str]], label: str, mode: GenerationMode
) -> None:
    app, headers = served
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operation = next(r.ok() for r in schema.get_all_operations() if r.ok().label == label)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def fuzz(case: schemathesis.Case) -> None:
        case.call_and_validate(headers={**headers, **(case.headers or {})}, checks=CHECKS)

    fuzz()
