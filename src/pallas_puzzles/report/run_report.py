"""What a run over a course found, as the autograder formats (JUnit, results.json) read it.

Each format is one module in `report/` with an `AutograderFormat` subclass whose `render(report)`
is a view of this data: the course, every puzzle asked for and its verdict (or why it was not checked).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from pallas_puzzles.course.model import Course, Puzzle
from pallas_puzzles.report import formats
from pallas_puzzles.results import CheckResult, Status


@dataclass(frozen=True)
class Outcome:
    puzzle: Puzzle
    result: CheckResult | None  # None: not checked here
    skipped: str = ""  # why not, in one sentence, when result is None

    @property
    def status(self) -> Status:
        if self.result is None:
            return Status.ERROR
        return self.result.status


@dataclass(frozen=True)
class RunReport:
    course: Course
    outcomes: tuple[Outcome, ...]
    backend: str
    seconds: float
    started: datetime.datetime

    def count(self, status: Status) -> int:
        return len([o for o in self.outcomes if o.result is not None and o.status is status])

    @property
    def skipped(self) -> int:
        return len([o for o in self.outcomes if o.result is None])


def make(course: Course, puzzles: list[Puzzle], results: list[CheckResult], skipped: dict[str, str],
         backend: str, seconds: float, started: datetime.datetime) -> RunReport:
    """A report for `puzzles` in course order: each has a result or a sentence saying why it has none."""
    by_name = {r.name: r for r in results}
    outcomes = tuple(Outcome(p, by_name.get(p.name), skipped.get(p.name, "")) for p in puzzles)
    return RunReport(course, outcomes, backend, seconds, started)


class AutograderFormat(formats.Format):
    """A document for an autograder, written once the run is over from a RunReport. Always from fresh
    checks: stored verdicts live in the learner's workspace, which the learner controls."""

    document = True
    trusts_stored = False

    def run(self, report: formats.RunReport) -> str:
        return self.render(of(report))

    def render(self, report: RunReport) -> str:
        raise NotImplementedError


def of(run: formats.RunReport) -> RunReport:
    """The autograders' report of a finished `verify` run (the command fills in course and timing)."""
    assert run.course is not None, "a verify run records its course"
    skipped = {puzzle.name: why for puzzle, why in run.skipped}
    return make(run.course, run.puzzles, run.results, skipped, run.backend, run.seconds,
                run.started or datetime.datetime.now())
