"""Views of a `dev check`: one line per problem and a summary in the terminal, or one JSON document."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from pallas_puzzles.dev.check import CourseJob
from pallas_puzzles.report.formats import Unfolded

if TYPE_CHECKING:
    from pallas_puzzles.checking.jobs import Outcome
    from pallas_puzzles.dev.check import CourseCheck

SCHEMA_VERSION = 1


def summary(check: CourseCheck) -> str:
    course = check.course
    what = f"{course.heading}: {len(course.puzzles)} puzzles, " if course is not None else f"{check.folder}: "
    problems = len(check.problems)
    verdict = "no problems" if not problems else f"{problems} problem{'s' if problems != 1 else ''}"
    return f"dev check: {what}{len(check.checked)} kernels checked, {verdict}"


def view(check: CourseCheck) -> Unfolded:
    """The terminal's view: one line per problem, the skipped puzzles, the summary."""
    lines = [Text("✗ ", style="bold red") + Text(problem.line()) for problem in check.problems]
    lines += [Text(f"- {skipped.puzzle} skipped: {skipped.message}", style="dim") for skipped in check.skipped]
    lines.append(Text(summary(check), style="bold red" if check.problems else "bold green"))
    return Unfolded(Text("\n").join(lines))


def _backend(outcome: Outcome) -> str:
    return outcome.backend.name if outcome.backend is not None else outcome.job.requested


def verdicts(check: CourseCheck) -> list[dict[str, Any]]:
    """Every kernel checked and its verdict, in job order: what a comparison of backends reads."""
    return [{"puzzle": outcome.puzzle.name, "number": outcome.puzzle.number, "subject": job.subject,
             "example": job.example.name if job.example is not None else None,
             "backend": _backend(outcome),
             "cases": job.cases_of or _backend(outcome),
             "mode": job.mode.value, "status": result.status.value,
             "kind": result.kind.id if result.kind is not None else None, "seconds": round(result.seconds, 4),
             "hardware": (job.example.hardware_may_pass or None) if job.example is not None else None}
            for outcome in (check.run.verdicts if check.run is not None else [])
            if isinstance(job := outcome.job, CourseJob) and (result := outcome.result) is not None]


def document(check: CourseCheck) -> dict[str, Any]:
    course = check.course
    return {
        "schema": SCHEMA_VERSION,
        "status": "pass" if check.passed else "fail",
        "folder": str(check.folder),
        "course": None if course is None else {"name": course.name, "title": course.title,
                                               "version": course.version, "puzzles": len(course.puzzles)},
        "checked": len(check.checked),
        "problems": [{"puzzle": p.puzzle, "subject": p.subject, "message": p.message} for p in check.problems],
        "skipped": [{"puzzle": p.puzzle, "message": p.message} for p in check.skipped],
        "verdicts": verdicts(check),
    }
