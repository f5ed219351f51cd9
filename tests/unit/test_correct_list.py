"""Correct but unusual solutions pass: the checker rejects mistakes, not styles.

course/builtin/correct.toml lists each as edits to a reference solution (the form of course/builtin/mistakes.toml);
`dev check` (the session's `course_check`) checks that each passes on every shape case.
"""

from __future__ import annotations

from helpers import COURSE

from pallas_puzzles.dev import examples

CORRECT = examples.load(COURSE.folder, examples.CORRECT)


def test_there_are_enough_correct_alternatives():
    assert len(CORRECT) >= 5
    assert len({c.name for c in CORRECT}) == len(CORRECT)
