"""The terminal format: results, lists, hints, panels and one-line messages, drawn with rich.

A check's verdict is laid out in `verdict_text`; `TerminalFormat` is this
format's face behind the seam in `formats`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from pallas_puzzles import backends
from pallas_puzzles.checking.jobs import RunReport
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.report import sentences, verdict_text
from pallas_puzzles.report.formats import Format, Verdict
from pallas_puzzles.report.verdict_text import file_link
from pallas_puzzles.results import CheckResult

if TYPE_CHECKING:
    from pallas_puzzles.dev.check import CourseCheck
    from pallas_puzzles.report.frames import GridView
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


def progress_bar(progress: Progress) -> Text:
    """'Progress ████░░ 5/36 solved (puzzles 37–43 need jax 0.12)': out of the puzzles this jax can run."""
    reachable = progress.within_reach
    solved, total = len([p for p in reachable if progress.is_solved(p)]), len(reachable)
    beyond = "; ".join(sentences.puzzles_need(puzzles, f"jax {needed}")
                       for needed, puzzles in progress.beyond_this_jax.items())
    width = 20 if beyond else 30  # the note and the bar still fit 80 columns
    filled = round(width * solved / total) if total else 0
    text = Text("Progress ")
    text.append("█" * filled, style="green").append("░" * (width - filled), style="dim")
    text.append(f" {solved}/{total} solved")
    if beyond:
        text.append(f" ({beyond})", style="dim")
    return text


# Below this width the file name goes under the title: file names are never folded,
# because a learner copies them.
WIDE_LIST_COLUMNS = 80


def _list_row(progress: Progress, puzzle: Puzzle) -> tuple[str, Text, Text, str, Text]:
    if puzzle.tour:
        status = Text("tour", style="blue")
    elif progress.is_solved(puzzle):
        status = Text("solved", style="green")
    else:  # outside a workspace nothing records progress: say nothing rather than "unsolved"
        status = Text("unsolved", style="yellow") if progress.workspace is not None else Text("·", style="dim")
    marker = "▶ " if puzzle == progress.current else ""
    missing = [b.name for b in backends.REGISTRY.values() if not puzzle.supports(b)]
    runs_on = (("all" if not missing else "no " + "/".join(missing))
               + (f", jax>={puzzle.min_jax}" if puzzle.min_jax else ""))
    if puzzle.tpu_only_idiom:
        runs_on += "*"
    link = Text(puzzle.file, style=f"cyan link file://{progress.exercise(puzzle).resolve()}"
                if progress.workspace is not None else "cyan")
    return marker + str(puzzle.number), Text(puzzle.title), status, runs_on, link


def list_view(progress: Progress, width: int) -> Group:
    """The course as a table for a terminal `width` columns wide."""
    course = progress.course
    wide = width >= WIDE_LIST_COLUMNS
    table = Table(title=course.heading, box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("#", justify="right", no_wrap=True)
    longest_file = max(len(p.file) for p in course.puzzles)
    table.add_column("puzzle" if wide else "puzzle / file", min_width=16 if wide else longest_file)
    table.add_column("status", no_wrap=True)
    if wide:
        table.add_column("runs on", no_wrap=True)
        table.add_column("file", no_wrap=True)
    for chapter in course.chapters:
        if chapter.number > 1:
            table.add_section()
        table.add_row("", Text(f"Chapter {chapter.number}: {chapter.title}", style="bold"))
        for puzzle in course.in_chapter(chapter):
            number, title, status, runs_on, link = _list_row(progress, puzzle)
            if wide:
                table.add_row(number, title, status, runs_on, link)
            else:
                table.add_row(number, title + Text("\n") + link, status + Text("\n" + runs_on, style="dim"))
    lines: list[RenderableType] = [table]
    if any(p.tpu_only_idiom for p in course.puzzles):
        lines.append(Text("* uses a TPU-only idiom (scratch on a sequential grid, scalar prefetch)", style="dim"))
    example = progress.current if not progress.current.tour else course.counted[0]
    lines.append(Text(f"Commands take a puzzle's number or the name in its file, e.g. "
                      f"`pallas-puzzles hint {example.name}`.", style="dim"))
    if progress.workspace is not None:
        lines.append(progress_bar(progress))
    else:
        lines.append(Text("Outside a workspace progress is not tracked; `pallas-puzzles init DIR` makes one.",
                          style="dim"))
    return Group(*lines)


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
    total = len(puzzle.hints)
    lines = [Text(f"Hint {i + 1}/{total}: ", style="bold") + Text(puzzle.hints[i]) for i in range(level)]
    if level >= total:
        lines.append(Text(f"That was the last hint. `pallas-puzzles solution {puzzle.number}` shows the reference "
                          "solution; while the puzzle is unsolved it asks first.", style="dim"))
    else:
        lines.append(Text(f"Ask again for hint {level + 1}.", style="dim"))
    console.print(Panel(Group(*lines), title=f"Puzzle {puzzle.number}: {puzzle.title}", border_style="blue"))


def render_watch_header(console: Console, progress: Progress, keys: bool) -> None:
    puzzle = progress.current
    console.rule(Text(f"Puzzle {puzzle.number}: {puzzle.title}", style="bold"))
    console.print(Text("Edit ") + file_link(progress.exercise(puzzle))
                  + Text(" and save; it is checked on every save."))
    console.print(progress_bar(progress))
    if keys:
        console.print(Text("keys: h hint · l list · n next · r re-run · x reset · q quit", style="dim"))
    else:
        console.print(Text("commands (type, then Enter): h hint · l list · n next · r re-run · x reset · q quit",
                           style="dim"))


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
            return Text(sentences.not_started_line(puzzle), style="yellow", no_wrap=True, overflow="ellipsis")
        # Among many, what a passing kernel printed is left out (as pytest keeps a passing test's output).
        shown: list[RenderableType] = [verdict_text.check(result, puzzle,
                                                          with_printed=not (verdict.one_of_many and result.passed))]
        if verdict.card_applies:
            shown.extend(perf_card.cards(result))
        return Group(*shown)

    def run(self, report: RunReport) -> RenderableType:
        if not report.many:
            return None
        every_pass = all(r.passed for r in report.results)  # what the exit code says (commands/verify.py)
        return Text(sentences.run_tally(report.results, len(report.refused)),
                    style="bold green" if every_pass else "bold red")

    def listing(self, progress: Progress) -> RenderableType:
        return _ListForWidth(progress)

    def grid(self, view: GridView) -> RenderableType:
        from pallas_puzzles.report import stepper

        return stepper.render_frame(view, view.first_bad if view.first_bad is not None else 0)


class _ListForWidth:
    """The list laid out for the width it is printed at (narrow terminals put the file under the title)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield list_view(self.progress, options.max_width)
