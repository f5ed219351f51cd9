"""Plausible learner mistakes are rejected with a message that points at them.

Each file in tests/mistakes/ is a solution with one deliberate mistake and a
header naming the expected kind of finding and the learner line it must name.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pallas_puzzles import render
from pallas_puzzles.checker import check_puzzle
from pallas_puzzles.metadata import load_course
from pallas_puzzles.results import CheckResult

MISTAKES = sorted((Path(__file__).parent / "mistakes").glob("p*.py"))
COURSE = load_course()


def expectations(path: Path) -> dict[str, str]:
    tree = ast.parse(path.read_text())
    return {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id.startswith("EXPECT")
    }


def kind_of(result: CheckResult) -> str:
    if result.finding:
        return result.finding.kind
    case = result.first_failure
    assert case is not None
    if case.finding:
        return case.finding.kind
    assert case.mismatch is not None
    if case.mismatch.n_unwritten:
        return "mismatch-unwritten"
    if case.mismatch.n_nan:
        return "mismatch-nan"
    return "mismatch-wrong"


def rendered(result: CheckResult) -> str:
    console = render.make_console(force_plain=True)
    with console.capture() as capture:
        render.render_result(console, result, COURSE.find(result.number))
    return capture.get()


@pytest.mark.parametrize("path", MISTAKES, ids=[p.stem for p in MISTAKES])
def test_mistake_is_caught_and_explained(path: Path):
    expect = expectations(path)
    number = int(re.match(r"p(\d+)_", path.name).group(1))
    result = check_puzzle(COURSE.find(number), path, "interpret")
    assert not result.passed
    assert kind_of(result) == expect["EXPECT_KIND"]
    report = rendered(result)
    finding = result.finding or result.first_failure.finding
    if finding is not None:
        assert finding.explanation, "every finding says in plain words what it usually means"
        assert "→ " in report
    if expect.get("EXPECT_LINE"):
        finding = result.finding or result.first_failure.finding
        assert any(expect["EXPECT_LINE"] in line.text for line in finding.where), finding
        line_numbers = [line.line for line in finding.where if expect["EXPECT_LINE"] in line.text]
        assert f"{path.name}:{line_numbers[0]}" in report
    assert "Traceback" not in report


def test_there_is_a_mistake_for_every_puzzle():
    covered = {int(re.match(r"p(\d+)_", p.name).group(1)) for p in MISTAKES}
    missing = [p.number for p in COURSE.puzzles if not p.tour and p.number not in covered]
    assert not missing
