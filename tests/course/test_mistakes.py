"""Plausible learner mistakes are rejected with a message that points at them.

course/builtin/mistakes.toml lists each mistake as a few edits to a reference solution, with the kind of
finding it must produce and the learner line it must name. `dev check` (the session's
`course_check`) builds and checks every one on a pool of real checkers and fails on any that
passes, fails otherwise or names another line; the tests here add what a learner sees: every
finding explained, its line in the report, no traceback, a valid JSON document.
"""

from __future__ import annotations

from helpers import MISTAKES, checked_by_dev_check, puzzles_checked, rendered

from pallas_puzzles.report import json_view


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


