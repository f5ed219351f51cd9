"""Plausible learner mistakes are rejected with a message that points at them.

course/mistakes.toml lists each mistake as a few edits to a reference solution, with the kind of
finding it must produce and the learner line it must name. `dev check` (the session's
`course_check`) builds and checks every one on a pool of real checkers and fails on any that
passes, fails otherwise or names another line; the tests here add what a learner sees: every
finding explained, its line in the report, no traceback, a valid JSON document.
"""

from __future__ import annotations

from pathlib import Path

from conftest import checked_by_dev_check, puzzles_checked

from pallas_puzzles.course.reader import load_course
from pallas_puzzles.dev import examples
from pallas_puzzles.report import json_view, terminal
from pallas_puzzles.results import CheckResult

COURSE = load_course()
MISTAKES = examples.load(COURSE.folder, examples.MISTAKES)


def build_mistake(mistake: examples.Example, folder: Path) -> Path:
    """Write the mistaken learner file: the reference solution with the mistake's edits."""
    return examples.build(mistake, COURSE, folder)


def rendered(result: CheckResult) -> str:
    console = terminal.make_console(force_plain=True)
    with console.capture() as capture:
        terminal.render_result(console, result, COURSE.find(result.name))
    return capture.get()


def test_every_mistake_is_caught_and_explained(course_check, validate_json):
    checked = checked_by_dev_check(course_check, "mistake")
    mistakes = [m for m in MISTAKES if m.puzzle in puzzles_checked(course_check)]
    assert set(checked) == {m.name for m in mistakes}
    for mistake in mistakes:
        result = checked[mistake.name]
        assert not result.passed and result.kind is not None and result.kind.id == mistake.kind, mistake.name
        report = rendered(result)
        finding = result.finding or result.first_failure.finding
        if finding is not None:
            assert finding.explanation, "every finding says in plain words what it usually means"
            assert "→ " in report, mistake.name
        if mistake.line:
            line_numbers = [line.line for line in finding.where if mistake.line in line.text]
            assert line_numbers and f"{mistake.name}.py:{line_numbers[0]}" in report, (mistake.name, report)
        assert "Traceback" not in report, mistake.name
        validate_json(json_view.result_document(result))


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
