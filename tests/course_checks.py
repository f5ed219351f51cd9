"""The guardians' checks, each made once per test session and shared.

test_course checks every reference solution, test_mistakes every mistake and
test_correct every correct alternative, in this process with the default
checker (the fast path on); test_fast_path checks the same files with the fast
path off and compares the verdicts. Whichever asks first computes a check, the
other reuses it, so the comparison costs one extra pass, not two.
"""

from __future__ import annotations

import functools
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.course_file import load_course
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.results import CheckResult

REPO = Path(__file__).resolve().parents[1]
COURSE = load_course()
MISTAKES: list[dict[str, Any]] = tomllib.loads((REPO / "tests" / "mistakes.toml").read_text())["mistake"]
CORRECT: list[dict[str, Any]] = tomllib.loads((REPO / "tests" / "correct.toml").read_text())["correct"]
ENTRIES = {"mistake": {m["name"]: m for m in MISTAKES}, "correct": {c["name"]: c for c in CORRECT}}


def build_mistake(mistake: dict[str, Any], folder: Path) -> Path:
    """Write the learner file of a mistake (or correct alternative): the reference solution with its edits."""
    source = COURSE.find(mistake["puzzle"]).solution_path.read_text()
    for edit in mistake["edits"]:
        assert source.count(edit["old"]) == 1, f"{mistake['name']}: the edit's old text must occur once in the solution"
        source = source.replace(edit["old"], edit["new"])
    path = folder / f"{mistake['name']}.py"
    path.write_text(source)
    return path


@functools.cache
def _folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="pallas-puzzles-checks-"))


def fail_fast(kind: str) -> bool:
    """A mistake is checked as `check_puzzle` does by default (stop at the first failing case), a correct
    alternative over every case."""
    return kind == "mistake"


@functools.cache
def edited_file(kind: str, name: str) -> Path:
    """The learner file of a mistake or a correct alternative (`kind`), written once."""
    folder = _folder() / kind
    folder.mkdir(exist_ok=True)
    return build_mistake(ENTRIES[kind][name], folder)


@functools.cache
def edited(kind: str, name: str) -> tuple[Path, CheckResult]:
    """A mistake or a correct alternative (`kind`): its file and its verdict."""
    path = edited_file(kind, name)
    return path, check_puzzle(COURSE.find(ENTRIES[kind][name]["puzzle"]), path, INTERPRET, fail_fast=fail_fast(kind))


@functools.cache
def solution(name: str) -> CheckResult:
    """A reference solution's verdict over every shape case."""
    puzzle = COURSE.find(name)
    return check_puzzle(puzzle, puzzle.solution_path, INTERPRET, fail_fast=False)
