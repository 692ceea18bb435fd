"""Feature rows kept between critiques (service/recluster/feature_rows.py): a kept row is the
row the fitted features make again, in the caller's order, and the oldest go first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from foldwise.core import TextFeatures
from foldwise.service.recluster.feature_rows import (
    FeatureRows,
    rows_from_arrays,
    rows_to_arrays,
    text_key,
)

TEXTS = [
    "Sorting lists with a key function and the sorted builtin.",
    "Regular expressions: match, search and groups of a pattern.",
    "Sockets open a connection to a server and send bytes.",
    "Eine kurze Notiz über Sortieren und Listen in Python.",
    "",
]


def _fitted() -> TextFeatures:
    return TextFeatures(min_term_count=1).fit(TEXTS)


def test_kept_rows_are_the_rows_transform_makes() -> None:
    features = _fitted()
    rows = FeatureRows()
    first = rows.transform(features, TEXTS[:3])
    # Hits and misses mixed, in another order, one text twice.
    asked = [TEXTS[4], TEXTS[1], TEXTS[3], TEXTS[1], TEXTS[0]]
    again = rows.transform(features, asked)

    np.testing.assert_array_equal(first.toarray(), features.transform(TEXTS[:3]).toarray())
    np.testing.assert_array_equal(again.toarray(), features.transform(asked).toarray())
    assert again.shape == (5, len(features.vocabulary_))
    assert len(rows) == 5  # each distinct text once


def test_the_oldest_rows_go_first_beyond_the_limit() -> None:
    features = _fitted()
    rows = FeatureRows(limit=2)
    rows.transform(features, TEXTS[:2])
    rows.transform(features, [TEXTS[0]])  # used again: now the newest
    rows.transform(features, [TEXTS[2]])

    assert len(rows) == 2
    kept = set(rows._rows)
    made = FeatureRows()
    made.transform(features, [TEXTS[0], TEXTS[2]])
    assert kept == set(made._rows)  # TEXTS[1], the least recently used, went


def test_no_texts_give_no_rows() -> None:
    features = _fitted()
    assert FeatureRows().transform(features, []).shape == (0, len(features.vocabulary_))


def test_rows_round_trip_through_plain_arrays() -> None:
    features = _fitted()
    X = features.transform(TEXTS)
    keys = [text_key(t) for t in TEXTS]
    back_keys, back = rows_from_arrays(rows_to_arrays(keys, X), len(features.vocabulary_))
    assert back_keys == keys
    np.testing.assert_array_equal(back.toarray(), X.toarray())

    rows = FeatureRows()
    rows.add(back_keys, back)
    assert len(rows) == len(set(TEXTS))
    np.testing.assert_array_equal(rows.transform(features, TEXTS).toarray(), X.toarray())


@pytest.mark.parametrize(
    "damage",
    [
        lambda a: a.update(indptr=a["indptr"][:-1]),
        lambda a: a.update(indices=a["indices"] + 10_000),
        lambda a: a.update(keys=a["keys"][:, :8]),
        lambda a: a.update(data=a["data"] * np.nan),
    ],
)
def test_damaged_stored_rows_are_refused(damage: Callable[[dict[str, Any]], None]) -> None:
    features = _fitted()
    arrays = rows_to_arrays([text_key(t) for t in TEXTS], features.transform(TEXTS))
    damage(arrays)
    with pytest.raises(ValueError, match="do not fit together"):
        rows_from_arrays(arrays, len(features.vocabulary_))
