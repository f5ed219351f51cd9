"""One grading run's outcome as data: the submissions, and the run's report of their checks.

grade.py fills a GradeTable; report/grade_table.py turns it into CSV, JSON or a terminal table.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from pallas_puzzles.checking.jobs import Job, Outcome, RunReport
from pallas_puzzles.course.model import Course, Puzzle


@dataclass(frozen=True)
class Submission:
    name: str  # as given on the command line
    folder: Path  # where its exercise files are


@dataclass(frozen=True, kw_only=True)
class GradeJob(Job):
    """One submission's file of one puzzle."""

    submission: Submission


@dataclass
class GradeTable:
    course: Course
    submissions: list[Submission]
    report: RunReport  # one job per (submission, puzzle) whose file was handed in

    @property
    def puzzles(self) -> tuple[Puzzle, ...]:
        return self.course.counted

    @property
    def backend(self) -> str:
        return self.report.backend

    def outcome(self, submission: Submission, puzzle: Puzzle) -> Outcome | None:
        """The check of this submission's file of `puzzle`; None when it handed no such file in."""
        return self._outcomes.get((submission.name, puzzle.name))

    def passed(self, submission: Submission) -> int:
        return len([p for p in self.puzzles
                    if (o := self.outcome(submission, p)) is not None and o.result is not None and o.result.passed])

    @functools.cached_property
    def _outcomes(self) -> dict[tuple[str, str], Outcome]:
        return {(o.job.submission.name, o.puzzle.name): o for o in self.report.outcomes
                if isinstance(o.job, GradeJob)}
