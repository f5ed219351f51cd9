"""Correct but unusual solutions pass: the checker rejects mistakes, not styles.

course/builtin/correct.toml lists each as edits to a reference solution (the form of course/builtin/mistakes.toml);
`dev check` (the session's `course_check`) checks that each passes on every shape case.
"""

from __future__ import annotations

from helpers import COURSE, checked_by_dev_check, puzzles_checked, rendered

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.dev import examples

CORRECT = examples.load(COURSE.folder, examples.CORRECT)


def test_every_unusual_correct_solution_passes(course_check):
    checked = checked_by_dev_check(course_check, "correct")
    alternatives = [c for c in CORRECT if c.puzzle in puzzles_checked(course_check)]
    assert set(checked) == {c.name for c in alternatives}
    for solution in alternatives:
        puzzle = COURSE.find(solution.puzzle)
        assert examples.source(solution, COURSE) != puzzle.solution_path.read_text()
        result = checked[solution.name]
        assert result.passed, rendered(result)
        assert len(result.cases) == len(puzzle.cases_for(INTERPRET))


