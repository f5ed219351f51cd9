"""Correct but unusual solutions pass: the checker rejects mistakes, not styles.

tests/correct.toml lists each as edits to a reference solution (the format of
tests/mistakes.toml); each must pass on every shape case of the interpreter.
"""

from __future__ import annotations

from typing import Any

import course_checks
import pytest
from course_checks import CORRECT, COURSE
from test_mistakes import rendered

from pallas_puzzles.backends import INTERPRET


@pytest.mark.parametrize("solution", CORRECT, ids=[c["name"] for c in CORRECT])
def test_unusual_correct_solution_passes(solution: dict[str, Any]):
    path, result = course_checks.edited("correct", solution["name"])
    assert path.read_text() != COURSE.find(solution["puzzle"]).solution_path.read_text()
    assert result.passed, rendered(result)
    assert len(result.cases) == len(COURSE.find(solution["puzzle"]).cases_for(INTERPRET))


def test_there_are_enough_correct_alternatives():
    assert len(CORRECT) >= 5
    assert len({c["name"] for c in CORRECT}) == len(CORRECT)
