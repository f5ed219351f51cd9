"""Plausible learner mistakes are rejected with a message that points at them.

tests/mistakes.toml lists each mistake as a few edits to a reference
solution, with the kind of finding it must produce and the learner line it
must name. Building the learner file from the solution keeps every mistake in
step with the solution it breaks.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from conftest import skip_if_jax_too_old

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.course_file import load_course
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.report import json_view, terminal
from pallas_puzzles.results import CheckResult

REPO = Path(__file__).resolve().parents[1]
MISTAKES: list[dict[str, Any]] = tomllib.loads((REPO / "tests" / "mistakes.toml").read_text())["mistake"]
COURSE = load_course()


def build_mistake(mistake: dict[str, Any], folder: Path) -> Path:
    """Write the mistaken learner file: the reference solution with the mistake's edits."""
    source = COURSE.find(mistake["puzzle"]).solution_path.read_text()
    for edit in mistake["edits"]:
        assert source.count(edit["old"]) == 1, f"{mistake['name']}: the edit's old text must occur once in the solution"
        source = source.replace(edit["old"], edit["new"])
    path = folder / f"{mistake['name']}.py"
    path.write_text(source)
    return path


def rendered(result: CheckResult) -> str:
    console = terminal.make_console(force_plain=True)
    with console.capture() as capture:
        terminal.render_result(console, result, COURSE.find(result.number))
    return capture.get()


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m["name"] for m in MISTAKES])
def test_mistake_is_caught_and_explained(mistake: dict[str, Any], tmp_path: Path, validate_json):
    skip_if_jax_too_old(COURSE.find(mistake["puzzle"]))
    path = build_mistake(mistake, tmp_path)
    result = check_puzzle(COURSE.find(mistake["puzzle"]), path, INTERPRET)
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
