"""Views of a `dev check`: one line per problem and a summary in the terminal, or one JSON document."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from pallas_puzzles.report.formats import Unfolded

if TYPE_CHECKING:
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
    }
