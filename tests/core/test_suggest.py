"""Fitted placement models as plain arrays, and instant suggestions from them."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp

from foldwise.core import (
    FolderPlacement,
    TextFeatures,
    restrict_closer,
    suggest,
    suggest_rows,
)
from foldwise.core._arrays import (
    from_npz,
    pack_paths,
    pack_strings,
    to_npz,
    unpack_paths,
    unpack_strings,
)
from foldwise.core.placement._suggest import term_contributions

# Three folders, two of them nested; English and German documents (the German ones are
# stemmed by TextFeatures, so loading must rebuild the per-language analysis).
TOPICS = {
    ("finance", "tax"): "tax return income deduction refund steuer steuererklärung finanzamt",
    ("finance", "bank"): "bank account statement transfer balance konto überweisung kontoauszug",
    ("home",): "rent lease landlord apartment repair miete vermieter wohnung reparatur",
}
FILLER = "the a and document page letter brief seite und der die das"


def _corpus(seed: int = 0, per_folder: int = 12) -> tuple[list[str], list[tuple[str, ...]]]:
    rng = np.random.default_rng(seed)
    texts, truth = [], []
    for folder, words in TOPICS.items():
        vocab, filler = words.split(), FILLER.split()
        for i in range(per_folder):
            own = rng.choice(vocab, 8).tolist()
            extra = rng.choice(filler, 4).tolist()
            # Half the documents German-only sentences, to exercise language detection.
            if i % 2:
                own = [w for w in own if not w.isascii()] or own
                extra = ["Sehr geehrte Damen und Herren, anbei die Unterlagen"]
            texts.append(" ".join(own + extra) + f" Nr {i}")
            truth.append(folder)
    return texts, truth


def _fitted(seed: int = 0) -> tuple[TextFeatures, FolderPlacement, list[str], list]:
    texts, truth = _corpus(seed)
    labels = [f if i % 3 else None for i, f in enumerate(truth)]
    features = TextFeatures(min_term_count=1, min_term_length=2, stop_words=None, keep_digits=True)
    X = features.fit_transform(texts)
    triples = [(0, 1, 12)]  # document 0 (unlabeled) closer to 1 than to 12
    model = FolderPlacement(n_components=4).fit(X, labels, triples=triples)
    return features, model, texts, truth


def _round_trip(arrays: dict) -> dict:
    return from_npz(to_npz(arrays))


def test_text_features_round_trip_gives_identical_rows():
    features, _, texts, _ = _fitted()
    loaded = TextFeatures.from_arrays(_round_trip(features.to_arrays()))
    new = ["Steuererklärung und Finanzamt", "bank transfer 2024", "", "zzz unknown words"]
    for batch in (texts, new):
        a, b = features.transform(batch), loaded.transform(batch)
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a.toarray(), b.toarray())
    assert list(loaded.vocabulary_) == list(features.vocabulary_)


@pytest.mark.parametrize("stop_words", ["auto", "english", None, ["foo", "bar"]])
def test_text_features_parameters_survive(stop_words):
    texts, _ = _corpus()
    features = TextFeatures(min_term_count=2, stop_words=stop_words, stem=True, language="auto")
    features.fit(texts)
    loaded = TextFeatures.from_arrays(_round_trip(features.to_arrays()))
    assert loaded.get_params() == features.get_params()
    np.testing.assert_array_equal(
        features.transform(texts).toarray(), loaded.transform(texts).toarray()
    )


def test_placement_round_trip_gives_identical_outputs():
    features, model, texts, _ = _fitted()
    loaded = FolderPlacement.from_arrays(_round_trip(model.to_arrays()))
    X = features.transform(texts)
    # On the fitted rows the triples apply; on a subset they do not.
    np.testing.assert_array_equal(model.predict_proba(X), loaded.predict_proba(X))
    np.testing.assert_array_equal(model.predict_proba(X[:5]), loaded.predict_proba(X[:5]))
    np.testing.assert_array_equal(model.known_proba(X), loaded.known_proba(X))
    np.testing.assert_array_equal(model.is_novel(X), loaded.is_novel(X))
    np.testing.assert_array_equal(
        model.calibrated_confidence([0.2, 0.5, 0.9]), loaded.calibrated_confidence([0.2, 0.5, 0.9])
    )
    assert loaded.folders_ == model.folders_
    assert loaded.get_params() == model.get_params()
    assert loaded.place(X).folder == model.place(X).folder


def test_single_folder_model_round_trips():
    texts, _ = _corpus()
    X, _ = TextFeatures(min_term_count=1).fit_transform(texts), None
    model = FolderPlacement().fit(X, [("only",)] * 3 + [None] * (X.shape[0] - 3))
    loaded = FolderPlacement.from_arrays(_round_trip(model.to_arrays()))
    np.testing.assert_array_equal(model.predict_proba(X), loaded.predict_proba(X))


def test_archives_are_deflated_npy_members_and_numpy_archives_still_read():
    """``to_npz`` writes what ``np.savez_compressed`` writes (one deflated ``.npy`` per
    array), at its own zlib level; models stored by ``np.savez_compressed`` still load."""
    arrays = {"coef": np.tile(np.arange(50.0), (40, 1)), "names": pack_strings(["a", "é"])[0]}
    data = to_npz(arrays)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = archive.infolist()
    assert [m.filename for m in members] == ["coef.npy", "names.npy"]
    assert all(m.compress_type == zipfile.ZIP_DEFLATED for m in members)
    assert members[0].compress_size < members[0].file_size / 4
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    for archive_bytes in (data, buffer.getvalue()):
        back = from_npz(archive_bytes)
        assert back.keys() == arrays.keys()
        for name, a in arrays.items():
            np.testing.assert_array_equal(back[name], a)
            assert back[name].dtype == a.dtype


def test_loading_refuses_a_pickled_object_array():
    _features, model, _, _ = _fitted()
    arrays = model.to_arrays()
    with pytest.raises(ValueError, match="Python objects"):
        to_npz({**arrays, "evil": np.array([object()], dtype=object)})
    # Written by someone else, bypassing to_npz: np.load must refuse to unpickle it.
    buffer = io.BytesIO()
    np.savez(buffer, **arrays, evil=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="allow_pickle"):
        from_npz(buffer.getvalue())


def test_damaged_archives_are_value_errors():
    _, model, _, _ = _fitted()
    arrays = model.to_arrays()
    with pytest.raises(ValueError, match="npz"):
        from_npz(b"not a zip file")
    with pytest.raises(ValueError, match="lack"):
        FolderPlacement.from_arrays({k: v for k, v in arrays.items() if k != "coef_"})
    with pytest.raises(ValueError, match="coef_"):
        FolderPlacement.from_arrays({**arrays, "coef_": arrays["coef_"][:, :-1]})
    with pytest.raises(ValueError, match="format"):
        FolderPlacement.from_arrays({**arrays, "format_version": np.asarray(99)})
    with pytest.raises(ValueError, match="offsets"):
        FolderPlacement.from_arrays({**arrays, "folders_offsets": arrays["folders_offsets"][:-1]})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("coef_.npy", b"garbage")
    with pytest.raises(ValueError):
        from_npz(buffer.getvalue())


def test_strings_and_paths_pack_any_character():
    strings = ["", "a\x00", "\x00", "ünïcödé", "x/y", "\ud800"]
    assert unpack_strings(*pack_strings(strings)) == strings
    paths = [(), ("a",), ("a", "b\x00"), ("", "x")]
    assert unpack_paths(*pack_paths(paths)) == paths


def test_suggestions_place_new_documents_and_explain_them():
    features, model, _, _ = _fitted()
    loaded_f = TextFeatures.from_arrays(_round_trip(features.to_arrays()))
    loaded_m = FolderPlacement.from_arrays(_round_trip(model.to_arrays()))
    texts = [
        "tax refund income deduction steuer",
        "Kontoauszug und Überweisung vom Konto",
        "landlord rent apartment repair",
    ]
    got = suggest(loaded_f, loaded_m, texts)
    assert [s.folder for s in got] == [("finance", "tax"), ("finance", "bank"), ("home",)]
    # The same as the model that was never stored.
    assert got == suggest(features, model, texts)
    for s in got:
        assert 0 <= s.confidence <= 1 and s.terms
        assert s.runner_up is not None and s.runner_up != s.folder
        assert s.margin is not None and s.pair_mass is not None and s.margin <= s.pair_mass
        # The confident folder is the best folder or one of its ancestors.
        assert s.folder[: len(s.confident_folder)] == s.confident_folder
    assert "tax" in got[0].terms or "refund" in got[0].terms
    assert suggest(features, model, []) == []


def test_term_contributions_add_up_to_the_decision_value():
    features, model, texts, _ = _fitted()
    X = features.transform([*texts, ""])
    D = model.decision_function(X)
    best = D.argmax(axis=1)
    contrib = term_contributions(model, X, best)
    total = np.asarray(contrib.sum(axis=1)).ravel()
    np.testing.assert_allclose(total, D[np.arange(X.shape[0]), best] - model.intercept_[best])
    assert contrib.shape == X.shape and contrib.getrow(X.shape[0] - 1).nnz == 0


def test_suggest_rows_checks_its_term_names():
    features, model, texts, _ = _fitted()
    X = features.transform(texts[:2])
    with pytest.raises(ValueError, match="term_names"):
        suggest_rows(model, X, ["a"])
    assert suggest_rows(model, sp.csr_matrix((0, X.shape[1])), list(features.vocabulary_)) == []


def test_an_answer_restricts_the_folders_of_its_document():
    features, model, _, _ = _fitted()
    doc = "bank account tax steuer rent"
    free = suggest(features, model, [doc])[0]
    # Closer to the home documents than to the finance ones: only home remains.
    (home,) = [f for f in model.folders_ if f == ("home",)]
    got = suggest(features, model, [doc], closer=[[(home, free.folder)]])[0]
    if free.folder != home:
        assert got.folder == home
    # Within finance, closer to bank than to tax.
    got = suggest(features, model, [doc], closer=[[(("finance", "bank"), ("finance", "tax"))]])[0]
    assert got.folder == ("finance", "bank")
    P = np.array([[0.5, 0.3, 0.2]])
    assert restrict_closer(P, model.folders_, [[(home, home)]]).tolist() == P.tolist()
    with pytest.raises(ValueError, match="closer"):
        restrict_closer(P, model.folders_, [])


def test_a_shown_document_stays_where_the_recluster_would_keep_it():
    """``suggest_rows(previous=...)`` decides as the recluster's ``kept_folders``: a row
    stays in the folder it was shown in while that folder's posterior is within the keep
    margin of the best one's, or the best one is not shown at ``MIN_MOVE_CONFIDENCE``; it
    moves where an answer rules its folder out, and a row shown nowhere is not held."""
    features, model, _, _ = _fitted()
    docs = ["tax refund income deduction steuer", "landlord rent apartment repair"]
    X = features.transform(docs)
    names = list(features.vocabulary_)
    free = suggest_rows(model, X, names)
    P = model.predict_proba(X)
    elsewhere = [next(f for f in model.folders_ if f != s.folder) for s in free]
    gap = [P[i].max() - P[i, model.folders_.index(f)] for i, f in enumerate(elsewhere)]
    assert min(gap) > 0.1  # both clear cases: the default margin does not hold them

    def shown(margin: float, confidence: float = 0.0, **kw) -> list[tuple]:
        got = suggest_rows(
            model,
            X,
            names,
            previous=[elsewhere[0], None],
            previous_confidence=[confidence, 0.0],
            keep_margin=margin,
            **kw,
        )
        return [s.folder for s in got]

    # Within the margin, the row stays; past it, it moves unless it was shown surer there.
    assert shown(margin=1.0) == [elsewhere[0], free[1].folder]
    assert shown(margin=0.1) == [free[0].folder, free[1].folder]
    assert shown(margin=0.1, confidence=1.0)[0] == elsewhere[0]
    # A folder the person's answer rules out holds nothing, whatever the margin.
    answer = [[(free[0].folder, elsewhere[0])], []]
    assert shown(margin=1.0, closer=answer)[0] == free[0].folder
    # The confidence given is that of the folder shown.
    kept = suggest_rows(
        model, X, names, previous=[elsewhere[0], None], previous_confidence=[0, 0], keep_margin=1
    )[0]
    j = model.folders_.index(elsewhere[0])
    assert kept.confidence == pytest.approx(float(model.calibrated_confidence(P[0, j])))
    with pytest.raises(ValueError, match="previous"):
        suggest_rows(model, X, names, previous=[None])
