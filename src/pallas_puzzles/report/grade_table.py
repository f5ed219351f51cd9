"""Views of a grade table: CSV and JSON (submission x puzzle -> pass / fail:kind / missing / skipped),
and a short summary for the terminal."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from pallas_puzzles.report.headline import headline
from pallas_puzzles.results import Status

if TYPE_CHECKING:
    from pallas_puzzles.checking.grade_results import GradeTable, Submission
    from pallas_puzzles.course.model import Puzzle

SCHEMA_VERSION = 1
MISSING, SKIPPED = "missing", "skipped"


@dataclass(frozen=True)
class Cell:
    """One submission's verdict on one puzzle, as the table shows it."""

    status: str  # pass, fail, error (the checker failed), missing or skipped
    kind: str = ""  # the finding kind behind a fail or an error, or the refusal's behind a skip
    message: str = ""  # one line: what went wrong, or why it was skipped
    seconds: float = 0.0

    @property
    def text(self) -> str:
        """"pass", "fail:oob-read", "missing": the table's cell."""
        return f"{self.status}:{self.kind}" if self.kind else self.status


def cell(table: GradeTable, submission: Submission, puzzle: Puzzle) -> Cell:
    outcome = table.outcome(submission, puzzle)
    if outcome is None:
        return Cell(MISSING, message=f"{puzzle.file} is not there")
    result = outcome.result
    if result is None:
        assert outcome.refusal is not None
        return Cell(SKIPPED, outcome.refusal.kind.id, outcome.refusal.sentence)
    if result.passed:
        return Cell(Status.PASS.value, seconds=result.seconds)
    kind = result.kind.id if result.kind is not None else ""
    return Cell(result.status.value, kind, headline(result), result.seconds)


def csv_text(table: GradeTable) -> str:
    """One row per submission: its name, puzzles passed, puzzles graded, then one cell per puzzle."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["submission", "passed", "total", *(p.name for p in table.puzzles)])
    for sub in table.submissions:
        writer.writerow([sub.name, table.passed(sub), len(table.puzzles),
                         *(cell(table, sub, p).text for p in table.puzzles)])
    return buffer.getvalue()


def document(table: GradeTable) -> dict[str, Any]:
    course = table.course
    return {
        "schema": SCHEMA_VERSION,
        "course": {"name": course.name, "title": course.title, "version": course.version},
        "backend": table.backend,
        "puzzles": [{"puzzle": p.number, "name": p.name, "title": p.title} for p in table.puzzles],
        "submissions": [{
            "submission": sub.name,
            "folder": str(sub.folder),
            "passed": table.passed(sub),
            "total": len(table.puzzles),
            "results": {p.name: {"status": c.status, "kind": c.kind or None, "message": c.message or None,
                                 "seconds": round(c.seconds, 3)}
                        for p in table.puzzles for c in (cell(table, sub, p),)},
        } for sub in table.submissions],
    }


def json_text(table: GradeTable) -> str:
    return json.dumps(document(table), indent=2) + "\n"


def render(console: Console, table: GradeTable) -> None:
    """Per submission: puzzles passed, and the others with what went wrong."""
    for sub in table.submissions:
        line = Text(f"{sub.name}: {table.passed(sub)}/{len(table.puzzles)} passed", style="bold")
        numbers: dict[str, list[int]] = {}  # what went wrong -> the puzzles it went wrong in, in course order
        for puzzle in table.puzzles:
            if (c := cell(table, sub, puzzle)).status != Status.PASS.value:
                numbers.setdefault(c.text, []).append(puzzle.number)
        if numbers:
            line.append("  (" + "; ".join(f"{_ranges(n)} {text}" for text, n in numbers.items()) + ")", style="dim")
        console.print(line, soft_wrap=True)


def _ranges(numbers: list[int]) -> str:
    """[1, 3, 4, 5, 9] -> '1, 3–5, 9'."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{run[0]}–{run[-1]}" if len(run) > 2 else ", ".join(map(str, run)) for run in runs)
