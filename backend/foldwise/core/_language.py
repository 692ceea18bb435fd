"""Per-document language: detection, stop words and stems (docs/languages.md).

Each document's language is detected with py3langid (a naive Bayes classifier over byte
n-grams: deterministic, numpy only, 4.5 MB model), restricted to the languages for which
both a Snowball stemmer (snowballstemmer) and a stop-word list (the ``stop-words`` package,
Snowball's lists for most languages) ship. Tokens are lowercased runs of letters as before;
a document drops its own language's stop words and, unless it is English (see
:class:`Analyzer`), is stemmed, so that "Rechnung" and "Rechnungen" count as one term.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

#: ISO 639-1 code -> (Snowball algorithm, ``stop-words`` list). Only languages with both.
LANGUAGES: dict[str, tuple[str, str]] = {
    "en": ("english", "english"),
    "de": ("german", "german"),
    "fr": ("french", "french"),
    "es": ("spanish", "spanish"),
    "it": ("italian", "italian"),
    "nl": ("dutch", "dutch"),
    "pt": ("portuguese", "portuguese"),
    "sv": ("swedish", "swedish"),
    "da": ("danish", "danish"),
    "no": ("norwegian", "norwegian"),
    "fi": ("finnish", "finnish"),
    "hu": ("hungarian", "hungarian"),
    "ro": ("romanian", "romanian"),
    "ru": ("russian", "russian"),
    "tr": ("turkish", "turkish"),
    "ca": ("catalan", "catalan"),
    "cs": ("czech", "czech"),
    "pl": ("polish", "polish"),
    "id": ("indonesian", "indonesian"),
    "el": ("greek", "greek"),
}
DEFAULT_LANGUAGE = "en"
_CODES = sorted(LANGUAGES)
#: The languages in the column order of :func:`posteriors`.
LANGUAGE_CODES: tuple[str, ...] = tuple(_CODES)
#: From this posterior on, a detection is taken as it is. Below it (short texts, lists of
#: names, code) a document gets the most probable of the languages that the collection's
#: confident documents are in. On Django's German and English catalogs no detection at or
#: above 0.9 was wrong; every python-docs page scores above 0.99 as English.
MIN_CONFIDENCE = 0.9
#: Detection reads the start of a document: a paragraph or two settles the language, and
#: reading more costs time without changing the answer. 1,500 characters (about 250 words)
#: cost 0.35 ms a document where 4,000 cost 0.8 ms (python-docs, the same languages found);
#: a worker's first recluster of 100,000 documents detects each once.
_DETECT_CHARS = 1500
#: Detections remembered, by a hash of the text's start: the service fits features several
#: times on the same documents per recluster (core_adapter), and each detection costs time.
#: It must hold a whole recluster's documents: each pass reads them in the same order, so
#: with 50,000 entries a recluster of 100,000 evicted every one before its next use and
#: detected each three times (75 MB when full).
_CACHE_SIZE = 200_000

_identifier: Any = None
_identifier_mutex = threading.Lock()
_cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
_cache_mutex = threading.Lock()


def _detector() -> Any:
    """py3langid's identifier restricted to :data:`LANGUAGES`, loaded once (about 1 s)."""
    global _identifier
    with _identifier_mutex:
        if _identifier is None:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
            identifier.set_languages(_CODES)
            _identifier = identifier
        return _identifier


def posteriors(text: str) -> np.ndarray:
    """Posterior of each language of ``sorted(LANGUAGES)`` for ``text``, shape (n_languages,);
    all zeros for a text without letters to go by."""
    start = text[:_DETECT_CHARS]
    if not start.strip():
        return np.zeros(len(_CODES), dtype=np.float32)
    key = _key(start)
    with _cache_mutex:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    ranked = dict(_detector().rank(start))
    found = np.array([ranked.get(code, 0.0) for code in _CODES], dtype=np.float32)
    with _cache_mutex:
        _cache[key] = found
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return found


def remember(texts: Sequence[str], found: np.ndarray) -> None:
    """Take ``found[i]`` as the posteriors of ``texts[i]`` (as :func:`posteriors` gave them,
    shape (n_texts, n_languages)), so that these texts are not detected again.

    For detections stored with the documents (the service stores each one at ingest): a
    worker's first recluster of 100,000 documents spent 14.5 s detecting them
    (docs/recluster.md, "Languages detected at ingest"). Texts without letters are left
    out, as :func:`posteriors` does not look them up.
    """
    found = np.asarray(found, dtype=np.float32)
    if found.shape != (len(texts), len(_CODES)):
        raise ValueError(f"found has shape {found.shape}; expected ({len(texts)}, {len(_CODES)})")
    with _cache_mutex:
        for text, row in zip(texts, found, strict=True):
            start = text[:_DETECT_CHARS]
            if start.strip():
                key = _key(start)
                _cache[key] = row.copy()
                _cache.move_to_end(key)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)


def _key(start: str) -> bytes:
    """The cache key of a text's start: 16 bytes of BLAKE2b."""
    return hashlib.blake2b(start.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def detect(text: str) -> tuple[str, float]:
    """The most probable language of ``text`` among :data:`LANGUAGES` and its posterior."""
    p = posteriors(text)
    best = int(p.argmax())
    return (_CODES[best], float(p[best])) if p[best] > 0 else (DEFAULT_LANGUAGE, 0.0)


def detect_all(texts: Sequence[str], known: Iterable[str] | None = None) -> list[str]:
    """The language of each of ``texts``.

    A confident detection (posterior at least :data:`MIN_CONFIDENCE`) stands. Any other text
    gets the most probable of the ``known`` languages or, when ``known`` is ``None``, of
    the languages the confident texts are in (English when none is confident): a short
    German note in a German and English collection is read as German, not as Dutch.
    """
    if not texts:
        return []
    P = np.array([posteriors(t) for t in texts], dtype=np.float32).reshape(len(texts), -1)
    best = P.argmax(axis=1)
    sure = P[np.arange(len(texts)), best] >= MIN_CONFIDENCE
    allowed = set(known) if known is not None else {_CODES[b] for b in best[sure]}
    columns = sorted(_CODES.index(c) for c in (allowed or {DEFAULT_LANGUAGE}))
    # Ties (a text without letters) go to the first allowed language, English if allowed.
    columns.sort(key=lambda j: _CODES[j] != DEFAULT_LANGUAGE)
    fallback = [columns[int(np.argmax(P[i, columns]))] for i in range(len(texts))]
    return [_CODES[b if s else f] for b, s, f in zip(best, sure, fallback, strict=True)]


@lru_cache(maxsize=len(LANGUAGES))
def stop_words_of(language: str) -> frozenset[str]:
    """Stop words of ``language``: scikit-learn's list for English (as before languages were
    detected, so English features do not change), the ``stop-words`` package's otherwise."""
    if language == "en":
        return frozenset(ENGLISH_STOP_WORDS)
    from stop_words import get_stop_words

    return frozenset(w.lower() for w in get_stop_words(LANGUAGES[language][1]))


@lru_cache(maxsize=len(LANGUAGES))
def _stemmer(language: str) -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer(LANGUAGES[language][0])


class Analyzer:
    """Turns one document into terms: tokens, minus stop words, stemmed where wanted.

    Parameters
    ----------
    pattern : str
        Token regular expression, applied to the lowercased text (no capturing groups).
    stop_words : "auto", "english", a list of words, or None
        ``"auto"``: each document's own language's list (:func:`stop_words_of`).
    stem : "auto" or bool
        ``"auto"`` stems documents not in English. English is left unstemmed because its
        features were tuned without stems (bench/placement_eval.py, docs/languages.md).

    Attributes
    ----------
    surface : dict of str to Counter
        For every stem produced so far, how often each surface word produced it: the
        readable name of a stem is its most frequent word (:meth:`word_of`).
    unstemmed : Counter
        How often each term of an unstemmed document was seen: its own surface word.
        Counted when first read, from the recorded documents (only a collection with
        stems reads it).
    """

    def __init__(self, pattern: str, stop_words: str | Iterable[str] | None, stem: str | bool):
        self.token = re.compile(pattern)
        self.stop_words = stop_words
        self.fixed_stops: frozenset[str] | None = None
        if stop_words == "english":
            self.fixed_stops = stop_words_of("en")
        elif stop_words is None:
            self.fixed_stops = frozenset()
        elif stop_words != "auto":
            self.fixed_stops = frozenset(w.lower() for w in stop_words)
        self.stem = stem
        self.surface: dict[str, Counter[str]] = {}
        self._unstemmed: Counter[str] = Counter()
        self._unstemmed_docs: list[list[str]] = []  # recorded, not yet counted
        self._stems: dict[tuple[str, str], str] = {}

    @property
    def unstemmed(self) -> Counter[str]:
        for tokens in self._unstemmed_docs:
            self._unstemmed.update(tokens)
        self._unstemmed_docs = []
        return self._unstemmed

    def release_records(self) -> None:
        """Forget the recorded surface words once the readable names are made (a fitted
        model keeps its analyzer for ``transform``, which needs none of them)."""
        self.surface, self._unstemmed_docs, self._unstemmed = {}, [], Counter()

    def stems_for(self, language: str) -> bool:
        """Whether documents in ``language`` are stemmed."""
        return self.stem is True or (self.stem == "auto" and language != "en")

    def __call__(self, text: str, language: str, record: bool = True) -> list[str]:
        """The terms of ``text``, a document in ``language``, in order; ``record`` counts
        their surface words (fitting does, transforming does not)."""
        tokens = self.token.findall(text.lower())
        stops = self.fixed_stops if self.fixed_stops is not None else stop_words_of(language)
        if stops:
            tokens = [t for t in tokens if t not in stops]
        if not self.stems_for(language):
            if record:
                # A term of an unstemmed document is its own surface word. Only stems ask
                # for it (``word_of``), so the documents are kept and counted when first
                # asked: an English collection never counts them (docs/recluster.md "Speed").
                self._unstemmed_docs.append(tokens)
            return tokens
        stemmer = _stemmer(language)
        stems = self._stems
        terms = []
        for t in tokens:
            key = (language, t)
            stem = stems.get(key)
            if stem is None:  # Snowball in pure Python is slow; a vocabulary repeats
                stem = stems[key] = stemmer.stemWord(t)
            terms.append(stem)
        if record:
            for (t, stem), n in Counter(zip(tokens, terms, strict=True)).items():
                self.surface.setdefault(stem, Counter())[t] += n
        return terms

    def word_of(self, term: str) -> str:
        """The most frequent surface word that gave ``term`` (alphabetically first on ties)."""
        seen = self.surface.get(term)
        if not seen:
            return term  # never a stem: the term is its own word
        if term in self.unstemmed:  # also the word itself, from unstemmed documents
            seen = seen + Counter({term: self.unstemmed[term]})
        return min(seen, key=lambda w: (-seen[w], w))
