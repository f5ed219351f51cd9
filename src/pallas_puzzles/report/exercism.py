"""results.json, version 3 of exercism's test-runner interface: one test per puzzle.

Fields as exercism documents them: the top level has `version` (3), `status` (`pass` when every
test passed, `fail` when one failed or errored, `error` when nothing could be run, with a
`message` saying why) and `tests`, in course order. Each test has a `name`, `test_code` (the
command that repeats the check), `status` (`pass`, `fail`, `error`), a `message` when it did not
pass (the verdict in plain sentences), the learner's own printed `output` capped at 500 characters,
and `task_id`, the number of the puzzle's chapter.
"""

from __future__ import annotations

import json
from typing import Any

from pallas_puzzles.checking.jobs import Outcome, RunReport
from pallas_puzzles.course.model import Course
from pallas_puzzles.report.formats import AutograderFormat
from pallas_puzzles.report.plain_text import verdict
from pallas_puzzles.results import Status

VERSION = 3
OUTPUT_LIMIT = 500
TRUNCATED = "\n… Output was truncated. Please limit to 500 chars."


def capped(output: str) -> str:
    """The learner's output within exercism's limit, saying so when it was cut."""
    if len(output) <= OUTPUT_LIMIT:
        return output
    return output[: OUTPUT_LIMIT - len(TRUNCATED)] + TRUNCATED


def _test(course: Course, outcome: Outcome) -> dict[str, Any]:
    puzzle, result = outcome.puzzle, outcome.result
    test: dict[str, Any] = {
        "name": f"Puzzle {puzzle.number}: {puzzle.title}",
        "test_code": f"pallas-puzzles verify {puzzle.name}",
        # exercism has no "skipped": a test that could not run here is an error, with its reason.
        "status": (result.status if result is not None else Status.ERROR).value,
        "message": None,
        "output": None,
        "task_id": course.chapter_of(puzzle).number,
    }
    if result is None:
        test["message"] = f"Not checked: {outcome.refusal.sentence if outcome.refusal else ''}"
        return test
    if not result.passed:
        test["message"] = verdict(result, puzzle)
    if result.printed:
        test["output"] = capped(result.printed)
    return test


def document(report: RunReport) -> dict[str, Any]:
    course = report.course
    assert course is not None, "a verify run records its course"
    tests = [_test(course, outcome) for outcome in report.outcomes]
    status = Status.PASS if all(t["status"] == Status.PASS.value for t in tests) else Status.FAIL
    return {"version": VERSION, "status": status.value, "message": None, "tests": tests}


def render(report: RunReport) -> str:
    return json.dumps(document(report), indent=2, ensure_ascii=False) + "\n"


def error(message: str) -> str:
    """results.json for a run that could not check anything (bad input, no workspace)."""
    return json.dumps({"version": VERSION, "status": Status.ERROR.value, "message": message, "tests": []},
                      indent=2, ensure_ascii=False) + "\n"


class ExercismFormat(AutograderFormat):
    """`--format exercism`: exercism's results.json (version 3) on stdout once the run is over."""

    name = "exercism"

    def render(self, report: RunReport) -> str:
        return render(report)

    def error(self, message: str) -> str:
        return error(message)
