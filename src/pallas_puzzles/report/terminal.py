"""The terminal format: results, lists, hints, panels and one-line messages, drawn with rich.

A check's verdict is laid out in `verdict_text`; `TerminalFormat` is this
format's face behind the seam in `formats`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.rule import Rule
from rich.segment import Segment
from rich.syntax import Syntax
from rich.text import Text

from pallas_puzzles.checking.jobs import RunReport
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.report import course_list, sentences, verdict_text
from pallas_puzzles.report.course_list import progress_bar
from pallas_puzzles.report.formats import Format, Verdict
from pallas_puzzles.report.verdict_text import file_link
from pallas_puzzles.results import CheckResult

if TYPE_CHECKING:
    from pallas_puzzles.dev.check import CourseCheck
    from pallas_puzzles.workspace.progress import HintReveal, Progress


def make_console(force_plain: bool = False, stderr: bool = False) -> Console:
    if force_plain:
        return Console(color_system=None, highlight=False, soft_wrap=True, stderr=stderr)
    return Console(highlight=False, stderr=stderr)


# One-line messages wrap softly (the terminal folds them), so paths and commands in
# them stay whole when copied.
def error(console: Console, message: str) -> None:
    console.print(Text("error: ", style="bold red") + Text(message), soft_wrap=True)


def warning(console: Console, message: str) -> None:
    console.print(Text("warning: ", style="bold yellow") + Text(message), soft_wrap=True)


def info(console: Console, message: str) -> None:
    console.print(Text(message), soft_wrap=True)


def list_view(progress: Progress, width: int) -> RenderableType:
    """The course as `list` shows it (report/course_list.py)."""
    return course_list.view(progress, width)


def render_list(console: Console, progress: Progress) -> None:
    console.print(list_view(progress, console.width))


def render_hint_reveal(console: Console, puzzle: Puzzle, reveal: HintReveal) -> None:
    """What asking for a hint shows: the hints revealed so far, or why there is nothing new."""
    if reveal.level == 0:
        info(console, f"Puzzle {puzzle.number} has no hints.")
        return
    if reveal.exhausted:
        info(console, f"No hints left for puzzle {puzzle.number}: all {reveal.level} are repeated below.")
    render_hint(console, puzzle, reveal.level)


def render_hint(console: Console, puzzle: Puzzle, level: int) -> None:
    console.print(hint_panel(puzzle, level))


def hint_panel(puzzle: Puzzle, level: int) -> Panel:
    """Hints 1 to `level` of a puzzle, and what to do after the last."""
    total = len(puzzle.hints)
    lines = [Text(f"Hint {i + 1}/{total}: ", style="bold") + Text(puzzle.hints[i]) for i in range(level)]
    if level >= total:
        lines.append(Text(f"That was the last hint. `pallas-puzzles solution {puzzle.number}` shows the reference "
                          "solution; while the puzzle is unsolved it asks first.", style="dim"))
    else:
        lines.append(Text(f"Ask again for hint {level + 1}.", style="dim"))
    return Panel(Group(*lines), title=f"Puzzle {puzzle.number}: {puzzle.title}", border_style="blue")


WATCH_KEYS = "h hint · d details · l list · n next · r re-run · x reset · q quit"


def watch_header(progress: Progress, keys: bool) -> Group:
    """What tops every screen of watch mode: the puzzle, its file, the progress and the keys."""
    puzzle = progress.current
    return Group(
        Rule(Text(f"Puzzle {puzzle.number}: {puzzle.title}", style="bold")),
        Text("Edit ") + file_link(progress.exercise(puzzle)) + Text(" and save; it is checked on every save."),
        progress_bar(progress),
        Text(f"keys: {WATCH_KEYS}" if keys else f"commands (type, then Enter): {WATCH_KEYS}", style="dim"))


def render_source(console: Console, path: Path) -> None:
    """A file's code, highlighted, without line numbers: a learner copies from it. Not to a terminal
    (`solution 4 > mine.py`), the file's own text, byte for byte: nothing folded or padded."""
    text = path.read_text(encoding="utf-8")
    if not console.is_terminal:
        console.file.write(text)
        console.file.flush()
        return
    console.print(Syntax(text, "python", line_numbers=False))


def render_result(console: Console, result: CheckResult, puzzle: Puzzle) -> None:
    """A check's verdict (watch mode, `python exercises/NN.py`, `show` when there is no grid)."""
    console.print(verdict_text.check(result, puzzle))


class TerminalFormat(Format):
    """What a person at a terminal reads: panels and tables, each verdict as it lands."""

    name = "terminal"

    def course_check(self, check: CourseCheck) -> RenderableType:
        from pallas_puzzles.report import dev_view

        return dev_view.view(check)

    def check(self, verdict: Verdict) -> RenderableType:
        from pallas_puzzles.report import perf_card

        result, puzzle = verdict.result, verdict.puzzle
        if verdict.one_of_many and result.not_started:
            return _NotStarted(puzzle)
        # Among many, what a passing kernel printed is left out (as pytest keeps a passing test's output).
        shown: list[RenderableType] = [verdict_text.check(result, puzzle,
                                                          with_printed=not (verdict.one_of_many and result.passed))]
        if verdict.card_applies and verdict.full_card:
            shown.extend(perf_card.cards(result))
        elif verdict.card_applies:
            shown.extend(line for line in [perf_card.line(result, puzzle.number)] if line is not None)
        if verdict.one_of_many:
            return Group(*shown)
        return HeadlineLast(Group(*shown), verdict_text.summary(result, puzzle))

    def run(self, report: RunReport) -> RenderableType:
        if not report.many:
            return None
        every_pass = all(r.passed for r in report.results)  # what the exit code says (commands/verify.py)
        return Text(sentences.run_tally(report.results, len(report.refused)),
                    style="bold green" if every_pass else "bold red")

    def listing(self, progress: Progress) -> RenderableType:
        return _ListForWidth(progress)


class _NotStarted:
    """One line however narrow the terminal: the title gives way (…), "— not started" stays whole."""

    def __init__(self, puzzle: Puzzle) -> None:
        self.title = sentences.not_started_line(puzzle).removesuffix(sentences.NOT_STARTED)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        title = Text(self.title, no_wrap=True, overflow="ellipsis")
        title.truncate(max(options.max_width - len(sentences.NOT_STARTED), 1), overflow="ellipsis")
        yield Text.assemble(title, sentences.NOT_STARTED, style="yellow", no_wrap=True)


class HeadlineLast:
    """A verdict taller than the terminal ends with its title and what is wrong again, as pytest ends with
    its short summary: what stays on the screen is what the learner needs first."""

    def __init__(self, verdict: RenderableType, headline: Text) -> None:
        self.verdict, self.headline = verdict, headline

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.verdict, options, pad=False)
        for line in lines:
            yield from line
            yield Segment.line()
        if console.is_terminal and len(lines) >= console.height - 1:
            yield self.headline


class _ListForWidth:
    """The list laid out for the width it is printed at (narrow terminals put the file under the title)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield list_view(self.progress, options.max_width)
