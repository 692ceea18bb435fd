"""closer_questions: the "is a closer to b or to c?" question worth asking (docs/placement.md,
"Questions"), checked on posteriors small enough to work out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from foldwise.core import closer_questions

A_X, A_Y, B = ("A", "x"), ("A", "y"), ("B",)


def test_the_sibling_question_when_the_doubt_is_between_siblings():
    """p = .5 A/x, .3 A/y, .2 B. Against A/y the answer splits {A/x} .5 from {A/y} .3 (the
    person has an answer with probability .8 and the answer moves the document with .3);
    against B it splits all of A, .8, from B, .2 (moves it with .2). The first is asked."""
    (q,) = closer_questions(np.array([[0.5, 0.3, 0.2]]), [A_X, A_Y, B])
    assert (q.b, q.c) == (0, 1)
    assert q.value == pytest.approx(0.3)
    assert q.answerable == pytest.approx(0.8)


def test_the_branch_question_when_the_doubt_is_between_branches():
    """p = .45 A/x, .05 A/y, .5 B... with b = A/x shown: against B the branches are A (.5)
    and B (.5), value .5; against A/y only .05."""
    (q,) = closer_questions(np.array([[0.45, 0.05, 0.5]]), [A_X, A_Y, B], shown=np.array([0]))
    assert (q.b, q.c) == (0, 2)
    assert q.value == pytest.approx(0.5)
    assert q.answerable == pytest.approx(1.0)


def test_never_a_folder_above_or_below_b():
    """A document in A itself would be a tie between A and A/x: A/x is never c when b is A."""
    (q,) = closer_questions(np.array([[0.5, 0.4, 0.1]]), [("A",), A_X, B])
    assert (q.b, q.c) == (0, 2)
    # The branches are A's subtree (.9) and B (.1).
    assert q.value == pytest.approx(0.1)


def test_a_likely_new_topic_makes_a_question_less_answerable():
    (q,) = closer_questions(np.array([[0.5, 0.3, 0.2]]), [A_X, A_Y, B], known=np.array([0.5]))
    assert q.answerable == pytest.approx(0.4)
    assert q.value == pytest.approx(0.3)


def test_nothing_to_ask_with_one_folder_or_only_nested_ones():
    assert closer_questions(np.array([[1.0]]), [B]) == [None]
    assert closer_questions(np.array([[0.6, 0.4]]), [("A",), A_X]) == [None]


def test_columns_must_match_the_folders():
    with pytest.raises(ValueError, match="columns"):
        closer_questions(np.array([[0.5, 0.5]]), [A_X, A_Y, B])
