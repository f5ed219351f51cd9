"""One checker process serves every built-in target (engine.targets.process_groups), switching from job to
job: its verdicts are those of checkers started for one target each, whatever it checked before.

The jobs go target by target and then round again (a solution, a mistake, the stub of one puzzle of each
target), so every check comes right after another target's, and each target is met again after the
others have run in the process."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import COURSE, MISTAKES, build_mistake, checkable

from pallas_puzzles.backends import Mode
from pallas_puzzles.checking import service
from pallas_puzzles.checking.jobs import Job, Options
from pallas_puzzles.engine import targets
from pallas_puzzles.results import CheckResult
from pallas_puzzles.worker.client import Worker

pytestmark = pytest.mark.slow

# One puzzle per target: the first this jax can check that has a mistake in the list.
PUZZLES = list({p.target: p for p in reversed(checkable(COURSE.puzzles))
                if any(m.puzzle == p.name for m in MISTAKES)}.values())


def _seen(result: CheckResult) -> tuple[object, ...]:
    """What a learner reads of a verdict: everything but the seconds."""
    return (result.passed, [(c.label, c.passed, [(f.kind, f.message, f.where) for f in c.findings], repr(c.mismatch))
                            for c in result.cases], [(f.kind, f.message, f.where) for f in result.findings],
            result.printed, result.skipped_cases)


def _jobs(tmp_path: Path) -> list[Job]:
    files = []
    for puzzle in PUZZLES:
        mistake = next(m for m in MISTAKES if m.puzzle == puzzle.name)
        files.append([puzzle.solution_path, build_mistake(mistake, tmp_path), puzzle.stub_path])
    return [Job(puzzle, kinds[round_], "interpret") for round_ in range(3) for puzzle, kinds in zip(PUZZLES, files)]


def test_every_target_shares_one_process_group():
    assert len(PUZZLES) >= 3
    assert targets.process_groups([p.target for p in COURSE.puzzles]) == [
        tuple(dict.fromkeys(p.target for p in COURSE.puzzles))]


def test_one_checker_switching_targets_gives_each_targets_own_checkers_verdicts(tmp_path: Path):
    jobs = _jobs(tmp_path)
    report = service.run(jobs, Options(workers=1))  # one process: a switch before every check
    shared = [outcome.result for outcome in report.outcomes]
    alone: dict[str, Worker] = {}
    try:
        for job, result in zip(jobs, shared):
            worker = alone.get(job.puzzle.target)
            if worker is None:
                worker = alone[job.puzzle.target] = Worker("interpret", Mode.RUN, job.puzzle.target)
                worker.start()
            assert result is not None
            assert _seen(result) == _seen(worker.check(job.puzzle, job.file)), (job.puzzle.name, job.file.name)
    finally:
        for worker in alone.values():
            worker.stop()
    passed = [result.passed for result in shared if result is not None]
    assert passed == [True] * len(PUZZLES) + [False] * 2 * len(PUZZLES), "solutions pass, mistakes and stubs fail"
