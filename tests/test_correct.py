"""Correct but unusual solutions pass: the checker rejects mistakes, not styles.

tests/correct.toml lists each as edits to a reference solution (the format of
tests/mistakes.toml); each must pass on every shape case of the interpreter.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from conftest import skip_if_jax_too_old
from test_mistakes import COURSE, build_mistake, rendered

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.engine.checker import check_puzzle

REPO = Path(__file__).resolve().parents[1]
CORRECT: list[dict[str, Any]] = tomllib.loads((REPO / "tests" / "correct.toml").read_text())["correct"]


@pytest.mark.parametrize("solution", CORRECT, ids=[c["name"] for c in CORRECT])
def test_unusual_correct_solution_passes(solution: dict[str, Any], tmp_path: Path):
    skip_if_jax_too_old(COURSE.find(solution["puzzle"]))
    path = build_mistake(solution, tmp_path)
    assert path.read_text() != COURSE.find(solution["puzzle"]).solution_path.read_text()
    result = check_puzzle(COURSE.find(solution["puzzle"]), path, INTERPRET, fail_fast=False)
    assert result.passed, rendered(result)
    assert len(result.cases) == len(COURSE.find(solution["puzzle"]).cases_for(INTERPRET))


def test_there_are_enough_correct_alternatives():
    assert len(CORRECT) >= 5
    assert len({c["name"] for c in CORRECT}) == len(CORRECT)
