"""The output formats, behind one seam.

A command hands a format data (one check's verdict, a finished run, the course
listing, a grid view, a failure sentence) and prints what the format returns:
rich renderables for the terminal, text for the others. No format words a
verdict itself: the sentences come from `sentences`.

Adding a format (JUnit XML, exercism's results.json) is one module with a
`Format` subclass plus one line in FORMATS; the CLI's `--format` offers every
name listed there. Modules are imported on first use, like the checker's targets.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pallas_puzzles.checking.jobs import RunReport
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.errors import UserError
from pallas_puzzles.results import CheckResult

if TYPE_CHECKING:
    from pallas_puzzles.dev.check import CourseCheck
    from pallas_puzzles.report.frames import GridView
    from pallas_puzzles.workspace.progress import Progress

# name -> "module:Class"; the first is the default.
FORMATS: dict[str, str] = {
    "terminal": "pallas_puzzles.report.terminal:TerminalFormat",
    "json": "pallas_puzzles.report.json_view:JsonFormat",
    "notebook": "pallas_puzzles.report.verdict_html:NotebookFormat",
    "junit": "pallas_puzzles.report.junit:JunitFormat",
    "exercism": "pallas_puzzles.report.exercism:ExercismFormat",
}


@dataclass(frozen=True)
class Verdict:
    """One check, as a command knows it."""

    puzzle: Puzzle
    result: CheckResult
    card: bool = False  # the performance card belongs after it (one puzzle checked, not lowered)
    full_card: bool = False  # the whole card (`perf`, or a chapter where it teaches); else its line
    one_of_many: bool = False  # part of `--all`: an untouched stub is one line

    @property
    def card_applies(self) -> bool:
        """The card is shown when the numbers were right, even if the check failed on its budget."""
        return self.card and self.result.numbers_right


Rendered = Any  # a rich renderable (terminal) or text (the others); None: nothing to write


@dataclass(frozen=True)
class Unfolded:
    """Lines a reader greps and copies (`dev check`'s problems): written whole, never folded or cut
    at the terminal's width; the terminal wraps them softly."""

    lines: Any  # a rich Text


class Format:
    """One way of writing what pallas-puzzles says. A format that cannot show something says so."""

    name: ClassVar[str] = ""
    document: ClassVar[bool] = False  # writes one document once the run is over, and nothing before
    # Whether a verdict stored in the workspace may stand in for a check. An autograder's document
    # may not: the stored verdicts live in the learner's workspace, which the learner controls.
    trusts_stored: ClassVar[bool] = True

    def check(self, verdict: Verdict) -> Rendered:
        """One verdict, as soon as it is known (a document format writes nothing and waits for `run`)."""
        return None if self.document else self._cannot("a check")

    def run(self, report: RunReport) -> Rendered:
        """Everything is checked (the run's report, in course order): a summary, or the one document."""
        return None

    def listing(self, progress: Progress) -> Rendered:
        return self._cannot("the course list")

    def grid(self, view: GridView) -> Rendered:
        return self._cannot("a grid view")

    def course_check(self, check: CourseCheck) -> Rendered:
        """What `dev check` found in a course."""
        return self._cannot("a course check")

    def error(self, message: str) -> Rendered:
        """A command failed with this sentence (already said on stderr); a document format records it."""
        return None

    def _cannot(self, what: str) -> Rendered:
        raise UserError(f"The {self.name} format cannot show {what}.")


class AutograderFormat(Format):
    """A document for an autograder (JUnit XML, results.json), written once the run is over. Always
    from fresh checks: stored verdicts live in the learner's workspace, which the learner controls."""

    document = True
    trusts_stored = False

    def run(self, report: RunReport) -> str:
        return self.render(report)

    def render(self, report: RunReport) -> str:
        raise NotImplementedError


def get(name: str) -> Format:
    """A format by name; one sentence for a name that is not one."""
    if name not in FORMATS:
        raise UserError(f"There is no output format '{name}'; choose one of: {', '.join(FORMATS)}.")
    module, _, cls = FORMATS[name].partition(":")
    return getattr(importlib.import_module(module), cls)()
