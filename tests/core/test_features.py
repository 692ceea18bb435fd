import numpy as np
import pytest

from foldwise.core import TextFeatures


def _docs():
    base = ["alpha beta gamma delta", "alpha beta epsilon", "gamma delta zeta", "beta gamma"]
    return base * 3 + ["x1 y2 zz 2024 alpha_beta"]


def test_drops_rare_short_and_numeric_terms():
    model = TextFeatures(min_term_count=5, min_term_length=3)
    X = model.fit_transform(_docs())
    vocab = set(model.vocabulary_)
    assert "zeta" not in vocab  # seen 3 times
    assert "zz" not in vocab and "x1" not in vocab and "2024" not in vocab
    assert {"alpha", "beta", "gamma", "delta"} <= vocab
    assert X.shape == (13, len(vocab))
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1))).ravel()
    assert np.allclose(norms[norms > 0], 1.0, atol=1e-5)


def test_max_terms_keeps_at_most_that_many():
    model = TextFeatures(min_term_count=1, max_terms=2)
    X = model.fit_transform(_docs())
    assert X.shape[1] == 2


@pytest.mark.parametrize("texts", [[], ["", "  "], ["12 34", "a b"]])
def test_empty_or_unusable_collection_is_a_clear_error(texts):
    with pytest.raises(ValueError, match=r"empty|no usable terms"):
        TextFeatures().fit_transform(texts)


def test_invalid_parameter_names_the_value():
    with pytest.raises(ValueError, match="max_terms"):
        TextFeatures(max_terms=0).fit(["alpha beta"])


def test_english_stop_words_are_dropped_unless_disabled():
    docs = ["the cat and the dog with the bird"] * 6
    assert "the" not in set(TextFeatures().fit(docs).vocabulary_)
    assert "the" in set(TextFeatures(stop_words=None).fit(docs).vocabulary_)
