import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

from foldwise.core import TextAnalysis, TextFeatures, text_features
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


PLACE = {"min_term_count": 2, "min_term_length": 2, "stop_words": None, "keep_digits": True}


def text_features_with_subset(texts, rows, **params):
    """Both fits from one analysis (:class:`TextAnalysis`): every text, and ``rows`` only."""
    analysis = TextAnalysis(texts, **params)
    X_sub, subset = analysis.subset_features(rows)
    return analysis.features()[0], X_sub, subset


def _separately(texts, rows, **params):
    """The two fits :func:`text_features_with_subset` stands for, one after the other."""
    X_all = TextFeatures(**params).fit_transform(texts)
    subset = TextFeatures(**params)
    rest = [i for i in range(len(texts)) if i not in set(rows)]
    parts = [subset.fit_transform([texts[i] for i in rows])]
    if rest:
        parts.append(subset.transform([texts[i] for i in rest]))
    X_sub = sp.vstack(parts).tocsr()
    return X_all, X_sub[np.argsort(list(rows) + rest)], subset


def _assert_same(got, expected):
    for a, b in zip(got[:2], expected[:2], strict=True):
        assert a.shape == b.shape and (a != b).nnz == 0
    assert list(got[2].terms_) == list(expected[2].terms_)
    assert list(got[2].vocabulary_) == list(expected[2].vocabulary_)
    np.testing.assert_array_equal(got[2].idf_, expected[2].idf_)
    assert got[2].languages_ == expected[2].languages_


def test_features_with_a_subset_equal_the_two_fits(corpus):
    pages = [p.read_text(errors="replace") for p in sorted(corpus.rglob("*.txt"))[:125]]
    texts = pages[:120]
    rows = list(range(0, 120, 3))  # a classifier's training documents
    got = text_features_with_subset(texts, rows, **PLACE)
    _assert_same(got, _separately(texts, rows, **PLACE))
    # The subset's model transforms new texts as a fit of its own would.
    np.testing.assert_array_equal(
        got[2].transform(pages[120:]).toarray(),
        _separately(texts, rows, **PLACE)[2].transform(pages[120:]).toarray(),
    )


def test_features_with_a_subset_in_languages_with_stems_equal_the_two_fits():
    # German is stemmed, and "Januar Februar" is unsure: the two fits read it in different
    # collections' languages. The two fits then run as they are.
    german = [
        "Die Rechnung für die Stromversorgung ist eingegangen; bitte überweisen Sie den Betrag.",
        "Rechnungen der Stadtwerke: die Stromrechnung und die Wasserrechnung für das Jahr.",
        "Der Arzt hat die Untersuchung beendet und schickt den Befund an die Krankenkasse.",
    ]
    english = ["The invoice for the electricity supply has arrived; please pay the amount."]
    texts = [*german, *english, "Januar Februar", german[0] + " Rechnungen"]
    rows = [3, 0, 1]
    _assert_same(
        text_features_with_subset(texts, rows, min_term_count=1),
        _separately(texts, rows, min_term_count=1),
    )


def test_features_with_a_subset_of_every_text_are_one_fit_twice():
    texts = ["one text about invoices", "another text about invoices", "a third text"]
    _assert_same(
        text_features_with_subset(texts, [2, 0, 1], min_term_count=1),
        _separately(texts, [2, 0, 1], min_term_count=1),
    )


@pytest.mark.parametrize(
    ("rows", "match"), [([], "at least one"), ([0, 0], "distinct"), ([5], r"\[0, 2\)")]
)
def test_features_with_a_subset_refuse_bad_rows(rows, match):
    with pytest.raises(ValueError, match=match):
        text_features_with_subset(["one text here", "another text here"], rows)


def _assert_same_fit(got, expected):
    (matrix, model), (oracle_matrix, oracle) = got, expected
    assert matrix.shape == oracle_matrix.shape and (matrix != oracle_matrix).nnz == 0
    for name in ("terms_", "vocabulary_"):
        assert list(getattr(model, name)) == list(getattr(oracle, name))
    np.testing.assert_array_equal(model.idf_, oracle.idf_)
    assert model.languages_ == oracle.languages_


# Runs of word characters the clustering's pattern splits or drops: underscores, digits
# inside and around words, letters that are no ASCII, numbers that are no decimal digits.
TRICKY = (
    "snake_case_name abc123 x_yz 12abc über_größe naïve l'été ²³abc abc² ab_ab_abc "
    "Straße ÉCOLE the and of value_2 __init__ αβγ_δεζ 東京タワー テスト_ケース"
)


def test_narrower_features_equal_their_own_fit(corpus):
    """The clustering's features read off the placement's analysis are the fit on the
    texts themselves: matrix, terms, names, idf and languages."""
    pages = [p.read_text(errors="replace") for p in sorted(corpus.rglob("*.txt"))[:80]]
    texts = [*pages, TRICKY, TRICKY.upper() + " abc_abc abc_abc", ""]
    analysis = TextAnalysis(texts, **PLACE)
    _assert_same_fit(analysis.narrower_features(), text_features(texts))
    for params in (
        {"min_term_count": 1, "min_term_length": 4, "stop_words": "english"},
        {"min_term_count": 1, "keep_digits": True, "stop_words": ["value_2", "abc"]},
        {"min_term_count": 2, "max_terms": 50},
    ):
        _assert_same_fit(analysis.narrower_features(**params), text_features(texts, **params))
    # The placement fits themselves are unchanged by it.
    _assert_same_fit(analysis.features(), text_features(texts, **PLACE))


def test_narrower_features_in_several_languages_drop_each_texts_stop_words():
    """Unstemmed, each text's own language's stop words go ("die" is a German one, not an
    English one); stemmed, and where the shared counts are no runs, it is a fit of its own."""
    texts = [
        "Die Rechnung für die Stromversorgung ist eingegangen, bitte überweisen Sie den Betrag.",
        "Rechnungen der Stadtwerke: die Stromrechnung und die Wasserrechnung für das Jahr.",
        "The invoice die for the electricity supply has arrived; please pay the amount.",
        "The invoice for the water supply: die rechnung, please pay the amount by Friday.",
    ]
    unstemmed = {"min_term_count": 1, "stem": False}
    analysis = TextAnalysis(texts, **{**PLACE, "stem": False})
    got = analysis.narrower_features(**unstemmed)
    _assert_same_fit(got, text_features(texts, **unstemmed))
    assert got[1].languages_[:2] == ["de", "de"] and "die" in set(got[1].terms_)
    stemmed = TextAnalysis(texts, **PLACE)  # German is stemmed: every fit on its own
    _assert_same_fit(
        stemmed.narrower_features(min_term_count=1), text_features(texts, min_term_count=1)
    )
    no_runs = TextAnalysis(texts, min_term_count=1, stem=False)  # stop words already dropped
    _assert_same_fit(no_runs.narrower_features(**unstemmed), text_features(texts, **unstemmed))


def test_rows_of_another_fit_read_off_the_analysis_equal_its_transform(corpus):
    """A kept model's rows of some texts, read off the analysis, are its ``transform``:
    its terms the texts hold, terms the analysis never saw as empty columns, its idf."""
    pages = [p.read_text(errors="replace") for p in sorted(corpus.rglob("*.txt"))[:90]]
    kept = TextFeatures(**PLACE).fit(pages[40:])  # partly other texts than the analysis'
    texts = [*pages[:60], TRICKY, ""]
    analysis = TextAnalysis(texts, **{**PLACE, "min_term_count": 1})
    rows = [61, 0, 45, 60, 12, 3]
    got = analysis.transform_rows(kept, rows)
    expected = kept.transform([texts[i] for i in rows])
    assert got.shape == expected.shape and (got != expected).nnz == 0
    assert got[0].nnz == 0 and got[1].nnz > 0
    # Another analysis (stop words dropped, longer terms) or stems: its own transform.
    german = "Die Rechnung für die Stromversorgung ist eingegangen, bitte zahlen Sie den Betrag."
    for other in (
        TextFeatures(min_term_count=1).fit(pages),
        TextFeatures(**PLACE).fit([german] * 3),
    ):
        got = analysis.transform_rows(other, rows)
        assert (got != other.transform([texts[i] for i in rows])).nnz == 0
