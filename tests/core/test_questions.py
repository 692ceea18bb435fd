"""closer_questions: the "is a closer to b or to c?" question worth asking (docs/placement.md,
"Questions"), checked on posteriors small enough to work out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from foldwise.core import closer_questions, question_priority

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


def test_c_is_chosen_by_priority_not_by_value_alone():
    """p = .4 A/x, .32 A/y, .28 B. Against A/y: value .32, answerable .72 (a document in B
    would be a tie), priority .32 - .07 = .25. Against B: value .28, answerable 1, priority
    .28. B is asked, though A/y's answer moves the document more often."""
    (q,) = closer_questions(np.array([[0.4, 0.32, 0.28]]), [A_X, A_Y, B])
    assert (q.b, q.c) == (0, 2)
    assert q.value == pytest.approx(0.28)
    assert q.answerable == pytest.approx(1.0)


def test_never_a_folder_above_or_below_b():
    """A document in A itself would be a tie between A and A/x: A/x is never c when b is A."""
    (q,) = closer_questions(np.array([[0.5, 0.4, 0.1]]), [("A",), A_X, B])
    assert (q.b, q.c) == (0, 2)
    # The branches are A's subtree (.9) and B (.1).
    assert q.value == pytest.approx(0.1)


def test_a_likely_new_topic_makes_a_question_less_answerable_and_less_worth():
    """With a document of a new topic every answer is a tie, and a tie moves nothing: at
    known .5 both halve (.8 -> .4, .3 -> .15); the choice of c stays."""
    (q,) = closer_questions(np.array([[0.5, 0.3, 0.2]]), [A_X, A_Y, B], known=np.array([0.5]))
    assert (q.b, q.c) == (0, 1)
    assert q.answerable == pytest.approx(0.4)
    assert q.value == pytest.approx(0.15)


def test_priority_is_the_value_less_a_quarter_per_expected_tie():
    """Worked by hand: value - .25 (1 - answerable)."""
    assert question_priority(0.3, 0.8) == pytest.approx(0.25)
    assert question_priority(0.02, 0.98) == pytest.approx(0.015)
    assert question_priority(0.2, 0.5) == pytest.approx(0.075)
    assert question_priority(0.0, 0.0) == pytest.approx(-0.25)  # a document in a proposal


def test_a_doubtful_question_comes_before_a_sure_one_that_moves_nothing():
    """Two documents: one almost surely in A/x (.97 of the posterior; its answer would say
    "where it is shown"), one in doubt between A/x and B (.5 / .4, and a .3 chance of a
    topic the person has no folder for). The second is worth asking first (.28 - .075 =
    .205 against .02 - .0025), though the first is more likely answered (.99 against .7)."""
    proba = np.array([[0.97, 0.02, 0.01], [0.5, 0.1, 0.4]])
    sure, doubtful = closer_questions(proba, [A_X, A_Y, B], known=np.array([1.0, 0.7]))
    assert (doubtful.b, doubtful.c) == (0, 2)
    assert sure.answerable == pytest.approx(0.99)
    assert doubtful.answerable == pytest.approx(0.7)
    assert question_priority(doubtful.value, doubtful.answerable) == pytest.approx(0.205)
    assert question_priority(sure.value, sure.answerable) == pytest.approx(0.0175)
