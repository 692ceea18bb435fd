import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from foldwise.core import TextFeatures
from foldwise.core._features import _count_terms
from foldwise.core._language import Analyzer


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


def test_term_counts_are_count_vectorizers():
    """The oracle: ``_count_terms`` gives scikit-learn's CountVectorizer matrix and terms, in
    fit mode (every term, sorted) and with a fixed vocabulary (unknown terms ignored)."""
    docs = [["b", "a", "b", "ä"], [], ["c", "a", "Z", "a", "ß"], ["b"], ["ä", "é", "c"]]
    oracle = CountVectorizer(analyzer=lambda d: d, dtype=np.float32)
    expected = oracle.fit_transform(docs)
    X, terms = _count_terms(docs)
    assert list(terms) == list(oracle.get_feature_names_out())
    assert X.dtype == np.float32 and X.shape == expected.shape
    assert abs(X - expected).max() == 0 and X.has_sorted_indices
    fixed = {"c": 0, "a": 1, "ä": 2}
    oracle = CountVectorizer(analyzer=lambda d: d, vocabulary=fixed, dtype=np.float32)
    more = [*docs, ["q", "c", "c"]]
    X, _ = _count_terms(more, fixed)
    assert abs(X - oracle.transform(more)).max() == 0
    assert X.shape == (6, 3)


def test_a_stem_is_named_by_its_commonest_word_across_stemmed_and_unstemmed_documents():
    """The unstemmed documents' words are counted only when a stem asks for them, and
    still count: "rechnung" as a stem of German text and as a word of an English one."""
    analyzer = Analyzer(r"\w+", None, "auto")
    analyzer("rechnungen rechnungen", "de")
    analyzer("rechnung rechnung rechnung", "en")
    analyzer("rechnung", "en")
    assert analyzer.word_of("rechnung") == "rechnung"  # 4 plain words against 2
    analyzer("rechnungen rechnungen rechnungen", "de")
    assert analyzer.word_of("rechnung") == "rechnungen"  # 5 against 4, counted once each
    analyzer.release_records()
    assert analyzer.word_of("rechnung") == "rechnung"  # nothing recorded any more
