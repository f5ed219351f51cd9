"""Views of a grade table: CSV and JSON (submission x puzzle -> pass / fail:kind / missing / skipped),
and a short summary for the terminal."""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from pallas_puzzles.checking.grade_results import GradeTable

SCHEMA_VERSION = 1


def csv_text(table: GradeTable) -> str:
    """One row per submission: its name, puzzles passed, puzzles graded, then one cell per puzzle."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["submission", "passed", "total", *(p.name for p in table.puzzles)])
    for sub in table.submissions:
        writer.writerow([sub.name, table.passed(sub), len(table.puzzles),
                         *(table.cell(sub, p).text for p in table.puzzles)])
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
            "results": {p.name: {"status": cell.status, "kind": cell.kind or None, "message": cell.message or None,
                                 "seconds": round(cell.seconds, 3)}
                        for p in table.puzzles for cell in (table.cell(sub, p),)},
        } for sub in table.submissions],
    }


def json_text(table: GradeTable) -> str:
    return json.dumps(document(table), indent=2) + "\n"


def render(console: Console, table: GradeTable) -> None:
    """Per submission: puzzles passed, and the others with what went wrong."""
    for sub in table.submissions:
        line = Text(f"{sub.name}: {table.passed(sub)}/{len(table.puzzles)} passed", style="bold")
        others = [f"{p.number} {table.cell(sub, p).text}" for p in table.puzzles
                  if table.cell(sub, p).status != "pass"]
        if others:
            line.append("  (" + ", ".join(others) + ")", style="dim")
        console.print(line, soft_wrap=True)
