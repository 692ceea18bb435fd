"""Text features: tf-idf with the papers' term filter (000 sec. 5.1, 001 sec. 5.2).

Terms seen fewer than ``min_term_count`` times in the collection, shorter than
``min_term_length`` characters or containing digits are dropped; of the rest, ``max_terms``
are kept, chosen without labels. 001 follows Borgelt & Nürnberger (2004); we keep the
terms with the most occurrences in the collection. On python-docs (20 per folder, 5 labeled,
2 seeds) this gave unconstrained HAC an H-correlation on new documents of 0.62, against 0.55
for ranking by ``df * log(n / df)``, which favours rare terms that link few documents.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.feature_extraction.text import TfidfTransformer

from foldwise.core import _arrays, _language
from foldwise.core._language import Analyzer, stop_words_of

# A token is a maximal run of letters and digits (underscores split identifiers); runs that
# hold a digit never match because the look-arounds forbid a letter or digit on either side
# (000 sec. 5.1: terms containing numbers are dropped).
_TOKEN_PATTERN = r"(?u)(?<![^\W_])[^\W\d_]{2,}(?![^\W_])"
# For a classifier (``keep_digits=True``): runs of word characters, digits included, as
# scikit-learn's default. Numbers name what folders hold apart (tax years, versions,
# invoice series) and a linear model weighs them by what they predict.
_WORD_PATTERN = r"(?u)\b\w{2,}\b"


class TextFeatures(TransformerMixin, BaseEstimator):
    """Tf-idf document vectors with the papers' unsupervised term selection.

    Parameters
    ----------
    min_term_count : int, default=5
        Drop terms seen fewer times than this in the whole collection (total occurrences).
    min_term_length : int, default=3
        Drop terms shorter than this many characters.
    max_terms : int, default=5000
        Keep at most this many terms, the most frequent in the collection.
    sublinear_tf : bool, default=True
        Use ``1 + log(tf)``; long documents otherwise dominate cosine similarities.
    stop_words : "auto", "english", a list of words, or None, default="auto"
        Words dropped before counting; ``"auto"`` drops each document's own language's
        (scikit-learn's list for English). Not in the papers; function words otherwise show
        up as the terms that "explain" a placement, and dropping them raised iHAC's
        H-correlation on new python-docs documents from 0.66 to 0.70 (settings 1, 3).
    keep_digits : bool, default=False
        Keep terms with digits (000 sec. 5.1 drops them). The placement model keeps them:
        numbers often name what separates folders (docs/placement.md).
    language : "auto" or an ISO 639-1 code of ``_language.LANGUAGES``, default="auto"
        ``"auto"`` detects each document's language (py3langid); a code treats every
        document as written in it (``"en"``: the features as before languages were known).
    stem : "auto" or bool, default="auto"
        Stem terms with the document's Snowball stemmer; ``"auto"`` stems every language
        but English, whose features were tuned unstemmed (docs/languages.md).

    Attributes
    ----------
    vocabulary_ : ndarray of shape (n_terms,), str
        The kept terms as words a person reads, in column order: for a stem, the word that
        produced it most often in the collection ("rechnungen" for "rechnung"), so that
        explanations and proposal names show real words.
    terms_ : ndarray of shape (n_terms,), str
        The kept terms as matched (stems where stemmed), in column order.
    languages_ : list of str, length n_docs
        The language of each document of the collection the model was fitted on; a new
        document whose language is unsure gets the most probable of these.
    idf_ : ndarray of shape (n_terms,)
    """

    def __init__(
        self,
        min_term_count: int = 5,
        min_term_length: int = 3,
        max_terms: int = 5000,
        sublinear_tf: bool = True,
        stop_words: str | list[str] | None = "auto",
        keep_digits: bool = False,
        language: str = "auto",
        stem: str | bool = "auto",
    ) -> None:
        self.min_term_count = min_term_count
        self.min_term_length = min_term_length
        self.max_terms = max_terms
        self.sublinear_tf = sublinear_tf
        self.stop_words = stop_words
        self.keep_digits = keep_digits
        self.language = language
        self.stem = stem

    def fit(self, texts: Sequence[str], y: object = None) -> TextFeatures:
        self._fit(texts)
        return self

    def fit_transform(self, texts: Sequence[str], y: object = None, **_: object) -> sp.csr_matrix:
        counts = self._fit(texts)
        return self._weigh(counts)

    def transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        """Tf-idf rows of shape (n_docs, n_terms), L2-normalised; zero rows stay zero."""
        if not hasattr(self, "vocabulary_"):
            raise ValueError("TextFeatures is not fitted yet; call fit first")
        texts = _as_texts(texts)
        languages = self._languages(texts, known=set(self.languages_))
        pairs = zip(texts, languages, strict=True)
        docs = (self._analyzer(t, lang, record=False) for t, lang in pairs)
        return self._weigh(_count_terms(docs, self._index)[0])

    def _languages(self, texts: list[str], known: set[str] | None) -> list[str]:
        if self.language != "auto":
            return [self.language] * len(texts)
        return _language.detect_all(texts, known)

    def _fit(self, texts: Sequence[str]) -> sp.csr_matrix:
        self._check_params()
        texts = _as_texts(texts)
        if not texts:
            raise ValueError("cannot build features from an empty collection")
        self.languages_ = self._languages(texts, known=None)
        self._analyzer = Analyzer(self._pattern(), self.stop_words, self.stem)
        # Each document's terms are counted as they are made, never all held at once: at
        # 100,000 documents the lists of terms took 0.7 GB. Surface words are recorded only
        # where a name may be asked for, a collection with stems (``_readable``).
        record = self._records(self.languages_)
        docs = (
            self._analyzer(t, lang, record=record)
            for t, lang in zip(texts, self.languages_, strict=True)
        )
        return self._select(*_count_terms(docs))

    def _check_params(self) -> None:
        for name in ("min_term_count", "min_term_length", "max_terms"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.language != "auto" and self.language not in _language.LANGUAGES:
            raise ValueError(
                f"language must be 'auto' or one of {sorted(_language.LANGUAGES)}, "
                f"got {self.language!r}"
            )
        if self.stem not in ("auto", True, False):
            raise ValueError(f"stem must be 'auto', True or False, got {self.stem!r}")

    def _records(self, languages: Sequence[str]) -> bool:
        """Whether fitting on documents in ``languages`` records surface words (stems)."""
        return any(self._analyzer.stems_for(lang) for lang in set(languages))

    def _select(self, counts: sp.csr_matrix, terms: NDArray[np.object_]) -> sp.csr_matrix:
        """Fit the kept terms and their idf from the term counts of the fitted documents
        (n_docs, n_seen_terms) over ``terms``, sorted; returns the counts of the kept terms."""
        if terms.size == 0:
            raise ValueError(
                "no usable terms: every document is empty or holds only short or numeric tokens"
            )
        counts = counts.tocsc()
        total = np.asarray(counts.sum(axis=0)).ravel()
        keep = np.flatnonzero(total >= self.min_term_count)
        if keep.size == 0:
            # Tiny collections: fall back to every term rather than to no features at all.
            keep = np.arange(terms.size)
        order = np.lexsort((terms[keep], -total[keep]))[: self.max_terms]
        keep = np.sort(keep[order])
        self.terms_ = terms[keep]
        self.vocabulary_ = _readable(self.terms_, self._analyzer)
        self._analyzer.release_records()
        self._index = self._make_index()
        counts = counts[:, keep].tocsr()
        self._tfidf = TfidfTransformer(sublinear_tf=self.sublinear_tf).fit(counts)
        self.idf_ = self._tfidf.idf_
        return counts

    def _pattern(self) -> str:
        return (_WORD_PATTERN if self.keep_digits else _TOKEN_PATTERN).replace(
            "{2,}", f"{{{max(self.min_term_length, 1)},}}"
        )

    def _make_index(self) -> dict[str, int]:
        """Column of each kept term."""
        return {str(t): i for i, t in enumerate(self.terms_)}

    # ------------------------------------------------------------- persistence

    def to_arrays(self) -> dict[str, NDArray[np.generic]]:
        """The fitted features as plain numeric arrays (no Python objects, no pickle).

        What :meth:`transform` needs: the parameters (they rebuild the token pattern and
        the per-language stop words and stemming of :class:`~_language.Analyzer`), the
        matched terms in column order, their readable names, the idf and the languages of
        the fitted collection (a new document of unsure language gets one of them).
        Strings are packed as UTF-8 (``_arrays.pack_strings``).
        """
        if not hasattr(self, "vocabulary_"):
            raise ValueError("TextFeatures is not fitted yet; call fit first")
        out: dict[str, NDArray[np.generic]] = {
            "format_version": np.asarray(_arrays.FORMAT_VERSION, dtype=np.int64),
            "param_min_term_count": np.asarray(self.min_term_count, dtype=np.int64),
            "param_min_term_length": np.asarray(self.min_term_length, dtype=np.int64),
            "param_max_terms": np.asarray(self.max_terms, dtype=np.int64),
            "param_sublinear_tf": np.asarray(self.sublinear_tf, dtype=np.int64),
            "param_keep_digits": np.asarray(self.keep_digits, dtype=np.int64),
            "idf_": np.asarray(self.idf_),
        }
        # stop_words is "auto", "english", None or a list: a kind plus the list's words.
        if isinstance(self.stop_words, str) or self.stop_words is None:
            kind, words = str(self.stop_words), []
        else:
            kind, words = "list", [str(w) for w in self.stop_words]
        strings = {
            "param_stop_words_kind": [kind],
            "param_stop_words": words,
            "param_language": [self.language],
            "param_stem": [str(self.stem)],
            "terms_": [str(t) for t in self.terms_],
            "vocabulary_": [str(t) for t in self.vocabulary_],
            "languages_": list(self.languages_),
        }
        for name, values in strings.items():
            out[name], out[name + "_offsets"] = _arrays.pack_strings(values)
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, NDArray[np.generic]]) -> TextFeatures:
        """Fitted features from :meth:`to_arrays` output; ``ValueError`` if inconsistent."""
        string_names = [
            "param_stop_words_kind", "param_stop_words", "param_language", "param_stem",
            "terms_", "vocabulary_", "languages_",
        ]  # fmt: skip
        numbers = [
            "param_min_term_count", "param_min_term_length", "param_max_terms",
            "param_sublinear_tf", "param_keep_digits", "idf_",
        ]  # fmt: skip
        _arrays.require(
            arrays, numbers + string_names + [n + "_offsets" for n in string_names], "TextFeatures"
        )
        text = {n: _arrays.unpack_strings(arrays[n], arrays[n + "_offsets"]) for n in string_names}
        kind = text["param_stop_words_kind"][0] if text["param_stop_words_kind"] else ""
        stop_words: str | list[str] | None = {"None": None, "list": text["param_stop_words"]}.get(
            kind, kind
        )
        if stop_words not in (None, "auto", "english") and kind != "list":
            raise ValueError(f"unknown stop_words kind {kind!r}")
        stem_text = text["param_stem"][0] if text["param_stem"] else ""
        stems: dict[str, str | bool] = {"auto": "auto", "True": True, "False": False}
        if stem_text not in stems:
            raise ValueError(f"unknown stem setting {stem_text!r}")
        model = cls(
            min_term_count=int(_arrays.scalar(arrays, "param_min_term_count")),
            min_term_length=int(_arrays.scalar(arrays, "param_min_term_length")),
            max_terms=int(_arrays.scalar(arrays, "param_max_terms")),
            sublinear_tf=bool(_arrays.scalar(arrays, "param_sublinear_tf")),
            stop_words=stop_words,
            keep_digits=bool(_arrays.scalar(arrays, "param_keep_digits")),
            language=text["param_language"][0] if text["param_language"] else "",
            stem=stems[stem_text],
        )
        if model.language != "auto" and model.language not in _language.LANGUAGES:
            raise ValueError(f"unknown language {model.language!r}")
        unknown = set(text["languages_"]) - set(_language.LANGUAGES)
        if unknown:
            raise ValueError(f"unknown languages {sorted(unknown)}")
        terms, names = text["terms_"], text["vocabulary_"]
        idf = np.asarray(arrays["idf_"])
        if idf.dtype.kind != "f" or idf.shape != (len(terms),) or len(names) != len(terms):
            raise ValueError(f"idf_ {idf.shape} and names do not match {len(terms)} terms")
        if not terms or len(set(terms)) != len(terms):
            raise ValueError("terms_ must be non-empty and distinct")
        model.terms_ = np.asarray(terms, dtype=object)
        model.vocabulary_ = np.asarray(names, dtype=object)
        model.languages_ = text["languages_"]
        model._analyzer = Analyzer(model._pattern(), model.stop_words, model.stem)
        model._index = model._make_index()
        model._tfidf = TfidfTransformer(sublinear_tf=model.sublinear_tf)
        model._tfidf.idf_ = idf
        model._tfidf.n_features_in_ = len(terms)
        model.idf_ = idf
        return model

    def _weigh(self, counts: sp.spmatrix) -> sp.csr_matrix:
        X = self._tfidf.transform(counts)
        return sp.csr_matrix(X, dtype=np.float32)


def _count_terms(
    docs: Iterable[list[str]], index: Mapping[str, int] | None = None
) -> tuple[sp.csr_matrix, NDArray[np.object_]]:
    """Term counts of analysed documents, shape (n_docs, n_terms), float32.

    With ``index`` (term -> column) the columns are its terms and others are ignored;
    without, every term seen, in sorted order (as scikit-learn's ``CountVectorizer``, whose
    matrix this is). Each document is counted by ``Counter`` (in C) and only its distinct
    terms pass through Python: ``CountVectorizer`` looks up every token, which was a fifth
    of a recluster's load phase (docs/recluster.md, "Speed").
    """
    seen: dict[str, int] = {}  # fitting: every term, in order of first appearance
    vocabulary: Mapping[str, int] = seen if index is None else index
    columns: list[int] = []
    values: list[int] = []
    indptr = [0]
    for doc in docs:
        counts = Counter(doc)
        if index is None:
            add = seen.setdefault
            columns.extend([add(t, len(seen)) for t in counts])
            values.extend(counts.values())
        else:
            kept = [(vocabulary[t], n) for t, n in counts.items() if t in vocabulary]
            columns.extend(j for j, _ in kept)
            values.extend(n for _, n in kept)
        indptr.append(len(columns))
    X = sp.csr_matrix(
        (
            np.asarray(values, dtype=np.float32),
            np.asarray(columns, dtype=np.int64),
            np.asarray(indptr, dtype=np.int64),
        ),
        shape=(len(indptr) - 1, len(vocabulary)),
    )
    if index is not None:
        X.sort_indices()
        return X, np.asarray(list(index), dtype=object)
    terms = sorted(vocabulary)
    order = np.fromiter((vocabulary[t] for t in terms), dtype=np.int64, count=len(terms))
    X = X[:, order] if len(terms) else X  # columns in sorted term order
    X.sort_indices()
    return X.tocsr(), np.asarray(terms, dtype=object)


def _readable(terms: np.ndarray, analyzer: Analyzer) -> np.ndarray:
    """Each term's most frequent surface word; a word two stems share (across languages)
    names only the first, the other keeps its stem, so that names stay unique."""
    names, taken = [], set()
    for term in terms:
        word = analyzer.word_of(str(term))
        word = word if word not in taken else str(term)
        taken.add(word)
        names.append(word)
    return np.asarray(names, dtype=object)


class TextAnalysis:
    """One analysis of a collection's texts, from which several :class:`TextFeatures` fits
    are made.

    Each text is read once under ``params`` (:class:`TextFeatures` parameters), into the
    counts of every term it holds. From them come :meth:`features` (``params`` fitted on
    every text), :meth:`subset_features` (fitted on some texts only, a classifier's
    training documents, and transforming the others) and :meth:`narrower_features` (other
    parameters whose terms are parts of these terms: the clustering's features beside the
    placement model's). Each gives what its own fit gives (tests/core/test_features.py).
    Where a fit would read the texts differently it runs on its own: collections with
    stemmed languages (a fit records surface words for its readable names), texts whose
    unsure language a subset resolves apart, parameters that are not narrower. A recluster
    makes its features this way (docs/recluster.md, "One analysis for both placement
    feature sets" and "The clustering's features from the placement's analysis").

    Holds every text's term counts (n_texts, n_terms seen) until it is dropped.
    """

    def __init__(self, texts: Sequence[str], **params: int | bool | str | list[str] | None) -> None:
        self.texts = _as_texts(texts)
        if not self.texts:
            raise ValueError("cannot build features from an empty collection")
        self.params = params
        model = TextFeatures(**params)  # type: ignore[arg-type]
        model._check_params()
        self.languages = model._languages(self.texts, known=None)
        model._analyzer = Analyzer(model._pattern(), model.stop_words, model.stem)
        self._model = model
        self._counts: sp.csr_matrix | None = None
        self._terms: NDArray[np.object_] = np.zeros(0, dtype=object)
        if not model._records(self.languages):
            analyse = model._analyzer
            pairs = zip(self.texts, self.languages, strict=True)
            self._counts, self._terms = _count_terms(analyse(t, g, record=False) for t, g in pairs)
        self._features: tuple[sp.csr_matrix, TextFeatures] | None = None

    def features(self) -> tuple[sp.csr_matrix, TextFeatures]:
        """``params`` fitted on every text: the matrix (n_texts, n_terms) and the model."""
        if self._features is None:
            model = self._model
            if self._counts is None:
                X = model.fit_transform(self.texts)
            else:
                model.languages_ = list(self.languages)
                X = model._weigh(model._select(self._counts, self._terms))
            self._features = (X, model)
        return self._features

    def subset_features(self, fit_rows: Sequence[int]) -> tuple[sp.csr_matrix, TextFeatures]:
        """``params`` fitted on the texts ``fit_rows`` only: every text's row under that fit
        (n_texts, n_subset_terms; ``fit_rows`` as fitted, the others transformed, in the
        order of the texts) and the model."""
        texts = self.texts
        rows = np.asarray(fit_rows, dtype=np.intp)
        if rows.size == 0 or np.unique(rows).size != rows.size:
            raise ValueError("fit_rows must be distinct and name at least one text")
        if rows.min() < 0 or rows.max() >= len(texts):
            raise ValueError(f"fit_rows must lie in [0, {len(texts)})")
        subset = TextFeatures(**self.params)  # type: ignore[arg-type]
        rest = np.setdiff1d(np.arange(len(texts)), rows)
        fitted = subset._languages([texts[i] for i in rows], known=None)
        own = np.asarray(self.languages, dtype=object)
        own[rows] = fitted
        own[rest] = subset._languages([texts[i] for i in rest], known=set(fitted))
        if self._counts is None or own.tolist() != self.languages:
            X_sub = sp.vstack(
                [subset.fit_transform([texts[i] for i in rows])]
                + ([subset.transform([texts[i] for i in rest])] if rest.size else [])
            ).tocsr()[np.argsort(np.concatenate([rows, rest]))]
            return X_sub, subset
        subset._analyzer = Analyzer(subset._pattern(), subset.stop_words, subset.stem)
        # The subset's own terms: those its documents hold (``terms`` is sorted, as the
        # subset's fit would list them).
        counts, terms = self._counts, self._terms
        in_rows = counts[rows]
        seen = np.flatnonzero(in_rows.getnnz(axis=0) > 0)
        subset.languages_ = fitted
        subset._select(in_rows[:, seen], terms[seen])
        columns = seen[np.searchsorted(terms[seen], subset.terms_)]
        return subset._weigh(counts[:, columns]), subset

    def transform_rows(self, model: TextFeatures, rows: Sequence[int]) -> sp.csr_matrix:
        """``model.transform`` of the texts ``rows``: shape (len(rows), n_model_terms).

        ``model`` is another fit (a kept placement model's features); where it analyses
        text as this analysis does (the same token pattern, stop words and stemming, and
        each text read in the same language or in one that changes nothing here), its
        rows are read off the counts: its terms' columns, weighed by its idf. Otherwise
        ``model.transform`` reads the texts again.
        """
        texts = [self.texts[i] for i in rows]
        if self._counts is None or not _analyses_alike(model, self._model):
            return model.transform(texts)
        languages = model._languages(texts, known=set(model.languages_))
        analyzer = model._analyzer
        if languages != [self.languages[i] for i in rows] and (
            analyzer.fixed_stops is None or any(analyzer.stems_for(g) for g in set(languages))
        ):
            return model.transform(texts)
        terms = np.asarray(model.terms_, dtype=object)
        at = np.minimum(np.searchsorted(self._terms, terms), max(self._terms.size - 1, 0))
        found = np.flatnonzero(self._terms[at] == terms) if self._terms.size else at[:0]
        select = sp.csr_matrix(
            (np.ones(found.size, dtype=np.float32), (at[found], found)),
            shape=(self._terms.size, terms.size),
        )
        counts = sp.csr_matrix(self._counts[np.asarray(rows, dtype=np.intp)] @ select)
        counts.sort_indices()
        return model._weigh(counts)

    def narrower_features(
        self, **params: int | bool | str | list[str] | None
    ) -> tuple[sp.csr_matrix, TextFeatures]:
        """Other ``params`` fitted on every text: the matrix (n_texts, n_terms) and the model.

        Read off the shared counts where every term of ``params`` is a part of a term
        counted here: these counts keep digits and stop words (so each is a maximal run of
        word characters), ``params`` asks for terms no shorter, in the same language, and
        neither stems. A counted term's parts are what ``params``'s token pattern finds in
        it alone: its matches never cross a run of word characters, and within one they
        are those of the run in its text, since the characters around a run are no word
        characters. The stop words of each text's language are then dropped.
        """
        model = TextFeatures(**params)  # type: ignore[arg-type]
        model._check_params()
        model._analyzer = Analyzer(model._pattern(), model.stop_words, model.stem)
        broad = self._model
        narrower = (
            self._counts is not None
            and broad.keep_digits
            and broad.stop_words is None
            and model.min_term_length >= broad.min_term_length
            and model.language == broad.language
            and not model._records(self.languages)
        )
        if not narrower:
            return model.fit_transform(self.texts), model
        assert self._counts is not None
        counts, terms = _parts_counts(self._counts, self._terms, self.languages, model._analyzer)
        model.languages_ = list(self.languages)
        return model._weigh(model._select(counts, terms)), model


def _analyses_alike(a: TextFeatures, b: TextFeatures) -> bool:
    """Whether two fitted features turn a text in one language into the same terms."""
    names = ("stop_words", "stem", "language")
    params_a, params_b = a.get_params(), b.get_params()
    return a._pattern() == b._pattern() and all(params_a[n] == params_b[n] for n in names)


def _parts_counts(
    counts: sp.csr_matrix,
    terms: NDArray[np.object_],
    languages: Sequence[str],
    analyzer: Analyzer,
) -> tuple[sp.csr_matrix, NDArray[np.object_]]:
    """The counts ``analyzer`` makes of texts whose counts of maximal word-character runs
    are ``counts`` (n_texts, n_terms) over ``terms``: each run's parts under its pattern,
    minus each text's language's stop words; every part seen, sorted, as ``_count_terms``
    gives them. One sparse product: runs (n_terms) x parts (n_parts), then the stop words
    zeroed."""
    parts = [analyzer.token.findall(str(t)) for t in terms]
    names = sorted({p for found in parts for p in found})
    column = {p: j for j, p in enumerate(names)}
    runs = np.repeat(np.arange(len(parts)), [len(found) for found in parts])
    columns = [column[p] for found in parts for p in found]
    # A run holding a part twice ("abc_abc") counts it twice: coo sums duplicates.
    runs_to_parts = sp.csr_matrix(
        (np.ones(len(columns), dtype=np.float32), (runs, columns)),
        shape=(len(terms), len(names)),
    )
    out = sp.csr_matrix(counts @ runs_to_parts, dtype=np.float32)
    language_codes = sorted(set(languages))
    code_of_row = np.searchsorted(language_codes, np.asarray(languages, dtype=object))
    code_of_entry = np.repeat(code_of_row, np.diff(out.indptr))
    fixed = analyzer.fixed_stops
    for code, language in enumerate(language_codes):
        stops = stop_words_of(language) if fixed is None else fixed
        if not stops:
            continue
        is_stop = np.fromiter((p in stops for p in names), dtype=bool, count=len(names))
        out.data[(code_of_entry == code) & is_stop[out.indices]] = 0
    out.eliminate_zeros()
    seen = np.flatnonzero(out.getnnz(axis=0) > 0)
    out = out[:, seen].tocsr()
    out.sort_indices()
    return out, np.asarray(names, dtype=object)[seen]


def _as_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise ValueError("expected a sequence of document texts, got one string")
    return ["" if t is None else str(t) for t in texts]


def text_features(
    texts: Sequence[str], **params: int | bool | str | list[str] | None
) -> tuple[sp.csr_matrix, TextFeatures]:
    """Fit :class:`TextFeatures` on ``texts``; return the (n_docs, n_terms) matrix and the model."""
    model = TextFeatures(**params)  # type: ignore[arg-type]
    return model.fit_transform(texts), model
