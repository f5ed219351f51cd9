"""Plausible learner mistakes are rejected with a message that points at them.

tests/mistakes.toml lists each mistake as a few edits to a reference
solution, with the kind of finding it must produce and the learner line it
must name. Building the learner file from the solution keeps every mistake in
step with the solution it breaks.
"""

from __future__ import annotations

from typing import Any

import course_checks
import pytest
from course_checks import COURSE, MISTAKES, build_mistake

from pallas_puzzles.findings import FindingKind
from pallas_puzzles.report import json_view, terminal
from pallas_puzzles.results import CheckResult

__all__ = ["COURSE", "MISTAKES", "build_mistake", "rendered"]


def rendered(result: CheckResult) -> str:
    console = terminal.make_console(force_plain=True)
    with console.capture() as capture:
        terminal.render_result(console, result, COURSE.find(result.number))
    return capture.get()


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m["name"] for m in MISTAKES])
def test_mistake_is_caught_and_explained(mistake: dict[str, Any], validate_json):
    path, result = course_checks.edited("mistake", mistake["name"])
    assert not result.passed
    assert result.kind is FindingKind.by_id(mistake["kind"])
    report = rendered(result)
    finding = result.finding or result.first_failure.finding
    if finding is not None:
        assert finding.explanation, "every finding says in plain words what it usually means"
        assert "→ " in report
    if mistake["line"]:
        assert any(mistake["line"] in line.text for line in finding.where), finding
        line_numbers = [line.line for line in finding.where if mistake["line"] in line.text]
        assert f"{path.name}:{line_numbers[0]}" in report
    assert "Traceback" not in report
    validate_json(json_view.result_document(result))


def test_there_is_a_mistake_for_every_puzzle():
    covered = {COURSE.find(m["puzzle"]).name for m in MISTAKES}
    missing = [p.name for p in COURSE.puzzles if not p.tour and p.name not in covered]
    assert not missing


def test_mistakes_name_their_puzzle_by_name():
    """A number is a position: it changes when a puzzle is inserted before it."""
    assert all(isinstance(m["puzzle"], str) and COURSE.has(m["puzzle"]) for m in MISTAKES)


def test_mistake_names_are_unique_and_say_their_puzzle():
    names = [m["name"] for m in MISTAKES]
    assert len(set(names)) == len(names)
    assert all(name.startswith(f"p{COURSE.find(m['puzzle']).number:02d}_") for name, m in zip(names, MISTAKES))
