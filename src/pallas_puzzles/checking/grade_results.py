"""One grading run's outcome as data: the submissions, and one cell per (submission, puzzle).

grade.py fills a GradeTable; report/grade_table.py turns it into CSV, JSON or a terminal table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pallas_puzzles.course.model import Course, Puzzle
from pallas_puzzles.report.headline import headline
from pallas_puzzles.results import CheckResult, Status


@dataclass(frozen=True)
class Submission:
    name: str  # as given on the command line
    folder: Path  # where its exercise files are


@dataclass(frozen=True)
class Cell:
    """One submission's verdict on one puzzle."""

    status: str  # pass, fail, error (the checker failed), missing or skipped
    kind: str = ""  # the finding kind behind a fail or an error
    message: str = ""  # one line: what went wrong, or why it was skipped
    seconds: float = 0.0

    @property
    def text(self) -> str:
        """"pass", "fail:oob-read", "missing": the table's cell."""
        return f"{self.status}:{self.kind}" if self.kind else self.status

    @classmethod
    def of(cls, result: CheckResult) -> Cell:
        if result.passed:
            return cls(Status.PASS.value, seconds=result.seconds)
        kind = result.kind.id if result.kind is not None else ""
        return cls(result.status.value, kind, headline(result), result.seconds)


@dataclass
class GradeTable:
    course: Course
    submissions: list[Submission]
    backend: str = ""
    cells: dict[tuple[str, str], Cell] = field(default_factory=dict)  # (submission, puzzle name) -> cell

    @property
    def puzzles(self) -> tuple[Puzzle, ...]:
        return self.course.counted

    def cell(self, submission: Submission, puzzle: Puzzle) -> Cell:
        return self.cells[(submission.name, puzzle.name)]

    def passed(self, submission: Submission) -> int:
        return len([p for p in self.puzzles if self.cell(submission, p).status == Status.PASS.value])
