"""Two checkers sharing a check give one checker's verdict (worker/split.py): for every reference
solution, mistake and correct alternative of the chapters whose checks are shared, the check run whole
and the check run as two parts joined agree, case by case, finding by finding.

The parts run in this process after other checks, so the test also holds each case's result to
depending on the file and the case alone, not on what the checker ran before. Each file is split at
one point, the first case for one file and the last for the next, so failures are met in the first
part and in the second. For targets that lower each case for a GPU, each file is also checked with a
case cut in two (its lowering in the first part, the rest in the second): the first case for one file,
the last for the next. About 2-3x the checks of the files once, so the test is marked slow.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import COURSE, MISTAKES, build_mistake, checkable, skip_if_jax_too_old

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.dev import examples
from pallas_puzzles.engine import targets
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.results import CaseSpan, CheckResult
from pallas_puzzles.worker.split import Split, joined, needs_second

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
    seen_second, cuts_seen = 0, set()
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
        if targets.get(puzzle.target).lowers_apart:  # and with a case cut in two: lowered in one, run in the other
            cut = 0 if i % 2 == 0 else total - 1
            verdict = _cut_in_two(puzzle, file, cut, total)
            assert _verdict(verdict) == _verdict(whole), (name, file.name, "cut", cut)
            cuts_seen.add((whole.passed, cut == 0))
    assert seen_second  # some mistakes fail only in the second part
    if any(targets.get(p.target).lowers_apart for p in SHARED):  # not on a jax without the GPU interpreter
        assert cuts_seen == {(True, True), (True, False), (False, True), (False, False)}


def _cut_in_two(puzzle, file: Path, cut: int, total: int) -> CheckResult:
    first_span, second_span = Split(cut, cut=True).spans(total)
    first = check_puzzle(puzzle, file, INTERPRET, cases=first_span)
    second = check_puzzle(puzzle, file, INTERPRET, cases=second_span) if needs_second(first, cut + 1) else None
    return joined(first, second, cut, total, cut=True)


def test_a_case_cut_in_two_prints_what_one_checker_prints(tmp_path: Path):
    """What the launcher prints while it is traced comes once per trace, as from one checker: the second
    part traces the cut case again (for the rest of it) without printing it a second time."""
    puzzle = COURSE.find("tma_copy")
    skip_if_jax_too_old(puzzle)
    file = tmp_path / puzzle.solution_path.name
    source = puzzle.solution_path.read_text()
    file.write_text(source.replace("def tma_copy(x: Float[Array, \"R C\"]) -> Float[Array, \"R C\"]:\n",
                                   "def tma_copy(x: Float[Array, \"R C\"]) -> Float[Array, \"R C\"]:\n"
                                   "    print('tracing', x.shape)\n", 1))
    total = len(puzzle.cases_for(INTERPRET))
    whole = check_puzzle(puzzle, file, INTERPRET)
    assert whole.passed and whole.printed.count("tracing") == 2 * total  # the lowering's trace and the run's
    for cut in range(total):
        assert _verdict(_cut_in_two(puzzle, file, cut, total)) == _verdict(whole), cut
