"""Two checkers sharing a check give one checker's verdict (worker/split.py): for every reference
solution, mistake and correct alternative of the chapters whose checks are shared, the check run whole
and the check run as two parts joined agree, case by case, finding by finding.

The parts run in this process after other checks, so the test also holds each case's result to
depending on the file and the case alone, not on what the checker ran before. Each file is split at
one point, the first case for one file and the last for the next, so failures are met in the first
part and in the second; about 2x the checks of the files once, so the test is marked slow.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import COURSE, MISTAKES, build_mistake, checkable

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.dev import examples
from pallas_puzzles.engine import targets
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.results import CaseSpan, CheckResult
from pallas_puzzles.worker.split import joined, needs_second

SHARED = [p for p in checkable(COURSE.puzzles) if targets.get(p.target).shares_cases]
NAMES = {p.name for p in SHARED}
CORRECT = [c for c in examples.load(COURSE.folder, examples.CORRECT) if c.puzzle in NAMES]


def _verdict(result: CheckResult) -> tuple[object, ...]:
    """Everything a learner or a report reads of a result, but the seconds it took."""
    cases = tuple((c.label, c.passed, tuple((f.kind, f.message, f.where) for f in c.findings),
                   repr(c.mismatch), c.traffic, c.devices)
                  for c in result.cases)
    return (result.passed, cases, tuple((f.kind, f.message, f.where) for f in result.findings), result.printed,
            result.skipped_cases)


def _files(tmp_path: Path) -> list[tuple[str, Path]]:
    files = [(p.name, p.solution_path) for p in SHARED]
    files += [(m.puzzle, build_mistake(m, tmp_path)) for m in MISTAKES if m.puzzle in NAMES]
    files += [(c.puzzle, build_mistake(c, tmp_path)) for c in CORRECT]
    return files


def test_the_shared_chapters_are_the_slow_ones():
    assert {p.target for p in SHARED} <= {"tpu-multichip", "mosaic-gpu", "blackwell"}
    assert any(p.target == "tpu-multichip" for p in SHARED)


@pytest.mark.slow
def test_a_check_in_two_parts_gives_the_whole_checks_verdict(tmp_path: Path):
    files = _files(tmp_path)
    assert len(files) > len(SHARED)
    seen_second = 0
    for i, (name, file) in enumerate(files):
        puzzle = COURSE.find(name)
        total = len(puzzle.cases_for(INTERPRET))
        point = 1 if i % 2 == 0 else total - 1
        whole = check_puzzle(puzzle, file, INTERPRET)
        first = check_puzzle(puzzle, file, INTERPRET, cases=CaseSpan(0, point))
        second = None
        if needs_second(first, point):
            second = check_puzzle(puzzle, file, INTERPRET, cases=CaseSpan(point, total))
        seen_second += second is not None and not second.passed
        assert _verdict(joined(first, second, point, total)) == _verdict(whole), (name, file.name, point)
    assert seen_second  # some mistakes fail only in the second part
