"""Types of request fields that the database bounds: ids and offsets fit a signed 64-bit
integer (PostgreSQL BIGINT, SQLite INTEGER), so an out-of-range number is a 422 at the
edge, never an overflow inside a query (docs/bad-input.md)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

MAX_ROW_ID = 2**63 - 1

#: A row id in a path, query, form or JSON body: positive and at most ``MAX_ROW_ID``.
RowId = Annotated[int, Field(gt=0, le=MAX_ROW_ID)]
#: How many rows a listing skips.
Offset = Annotated[int, Field(ge=0, le=MAX_ROW_ID)]
