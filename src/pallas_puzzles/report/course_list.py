"""The course as a list for a terminal: `list` (every chapter) and watch's `l` (the chapter you are in).

Each chapter's title is a line of its own, across the whole width, and its puzzles a table below
it; every chapter's table has the same column widths, so the columns line up down the list. Where
the five columns leave the titles too little room, the file name goes under the title: file names
are never folded, because a learner copies them.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from pallas_puzzles import backends
from pallas_puzzles.checking import support
from pallas_puzzles.course.model import Chapter, Puzzle
from pallas_puzzles.report import sentences

if TYPE_CHECKING:
    from pallas_puzzles.workspace.progress import Progress

MIN_TITLE = 24  # the narrowest title column of the five-column layout
GAP = 3  # between two columns: a cell's padding on each side and the box's (blank) column separator


@dataclass(frozen=True)
class Row:
    number: str
    title: Text
    status: Text
    runs_on: str
    file: Text


def _jax_needed(puzzle: Puzzle) -> tuple[str, str]:
    """What the list says of jax: ", jax>=0.12" (what the CPU's interpreter needs) and a footnote
    when another backend needs another jax ("" : none)."""
    needed = support.jax_needed(puzzle)
    here = needed.get(backends.INTERPRET.name, "")
    others = sorted(f"--backend {name} needs {v}" for name, v in needed.items() if v and v != here)
    shown = f", jax>={here}" if here else ""
    return (shown + "†", "; ".join(others)) if others else (shown, "")


def row(progress: Progress, puzzle: Puzzle) -> Row:
    if puzzle.tour:
        status = Text("tour", style="blue")
    elif progress.is_solved(puzzle):
        status = Text("solved", style="green")
    else:  # outside a workspace nothing records progress: say nothing rather than "unsolved"
        status = Text("unsolved", style="yellow") if progress.workspace is not None else Text("·", style="dim")
    marker = "▶ " if puzzle == progress.current else ""
    missing = [b.name for b in backends.REGISTRY.values() if not puzzle.supports(b)]
    runs_on = ("all" if not missing else "no " + "/".join(missing)) + _jax_needed(puzzle)[0]
    if puzzle.tpu_only_idiom:
        runs_on += "*"
    link = Text(puzzle.file, style=f"cyan link file://{progress.exercise(puzzle).resolve()}"
                if progress.workspace is not None else "cyan")
    return Row(marker + str(puzzle.number), Text(puzzle.title), status, runs_on, link)


class Layout:
    """Column widths shared by every chapter's table, for a terminal `width` columns wide; `compact`: one
    line per puzzle, without the backends and the file (watch's header names the file)."""

    def __init__(self, rows: list[Row], width: int, compact: bool = False) -> None:
        self.compact = compact
        self.number = max(len(r.number) for r in rows)
        self.file = max(len(r.file) for r in rows)
        self.status = max(len(r.status) for r in rows)
        self.runs_on = max(len(r.runs_on) for r in rows)
        longest = max(len(r.title) for r in rows)
        rest = width - self.number - self.status - self.runs_on - self.file - 4 * GAP
        # Five columns where the titles get room enough; else the file under the title.
        self.wide = rest >= min(longest, MIN_TITLE)
        if compact:
            self.title = max(MIN_TITLE, min(longest, width - self.number - self.status - 2 * GAP))
        elif self.wide:
            self.title = min(longest, rest)
        else:
            rest = width - self.number - max(self.status, self.runs_on) - 2 * GAP
            self.title = max(self.file, min(longest, rest))
        # Narrow: status over "runs on", which may fold (the file name, never) to keep within the width.
        self.side = max(self.status, min(self.runs_on, width - self.number - self.title - 2 * GAP))

    def table(self, rows: list[Row], header: bool) -> Table:
        # The same box for every table, drawn or not, keeps the same gaps between columns.
        table = Table(box=box.SIMPLE_HEAD, show_header=header, pad_edge=False, show_edge=False)
        table.add_column("#", justify="right", no_wrap=True, width=self.number)
        table.add_column("puzzle" if self.wide or self.compact else "puzzle / file", width=self.title)
        if self.compact:
            table.add_column("status", no_wrap=True, width=self.status)
            for r in rows:
                table.add_row(r.number, r.title, r.status)
        elif self.wide:
            table.add_column("status", no_wrap=True, width=self.status)
            table.add_column("runs on", no_wrap=True, width=self.runs_on)
            table.add_column("file", no_wrap=True, width=self.file)
            for r in rows:
                table.add_row(r.number, r.title, r.status, r.runs_on, r.file)
        else:
            table.add_column("status", width=self.side)
            for r in rows:
                table.add_row(r.number, r.title + Text("\n") + r.file, r.status + Text("\n" + r.runs_on, style="dim"))
        return table


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


def heading(chapter: Chapter, progress: Progress, counts: bool = False) -> Text:
    text = Text(f"Chapter {chapter.number}: {chapter.title}", style="bold")
    counted = [p for p in progress.course.in_chapter(chapter) if not p.tour]
    if counts and counted and progress.workspace is not None:
        text.append(f"  {len([p for p in counted if progress.is_solved(p)])}/{len(counted)} solved", style="dim")
    return text


def chapters(progress: Progress, width: int) -> list[RenderableType]:
    """Every chapter: its title on a line of its own, then its puzzles."""
    course = progress.course
    rows = {chapter.name: [row(progress, p) for p in course.in_chapter(chapter)] for chapter in course.chapters}
    layout = Layout([r for chapter_rows in rows.values() for r in chapter_rows], width)
    shown: list[RenderableType] = []
    for index, chapter in enumerate(course.chapters):
        shown.extend([Text(""), heading(chapter, progress), layout.table(rows[chapter.name], header=index == 0)])
    return shown


def _lines(text: Text, width: int) -> int:
    """How many lines `text` takes at `width` columns, folded as the terminal will fold it."""
    return len(text.wrap(Console(width=width, file=io.StringIO()), width))


def around_current(progress: Progress, width: int, height: int, around: int = 0) -> list[RenderableType]:
    """The chapter of the current puzzle, whole (or the puzzles around the current one where the screen
    is short), and the heading of each other chapter: what watch's `l` shows on one screen, beside
    `around` lines of its own."""
    course = progress.course
    here = course.chapter_of(progress.current)
    puzzles = list(course.in_chapter(here))
    headings = {chapter.name: heading(chapter, progress, counts=True) for chapter in course.chapters}
    # A line per puzzle; around them the chapters' headings (a long one folds), the table's head (two
    # lines), a "…" line on each side and a line to spare.
    room = max(3, height - around - sum(_lines(h, width) for h in headings.values()) - 5)
    start = max(0, min(puzzles.index(progress.current) - room // 2, len(puzzles) - room))
    shown_rows = [row(progress, p) for p in puzzles[start:start + room]]
    layout = Layout([row(progress, p) for p in course.puzzles], width, compact=True)
    shown: list[RenderableType] = []
    for chapter in course.chapters:
        shown.append(headings[chapter.name])
        if chapter == here:
            if start:
                shown.append(Text(f"  … {start} puzzle(s) before", style="dim"))
            shown.append(layout.table(shown_rows, header=True))
            after = len(puzzles) - start - len(shown_rows)
            if after > 0:
                shown.append(Text(f"  … {after} puzzle(s) after", style="dim"))
    return shown


def footnotes(progress: Progress) -> list[Text]:
    notes = []
    if any(p.tpu_only_idiom for p in progress.course.puzzles):
        notes.append(Text("* uses a TPU-only idiom (scratch on a sequential grid, scalar prefetch)", style="dim"))
    for note in dict.fromkeys(note for p in progress.course.puzzles if (note := _jax_needed(p)[1])):
        notes.append(Text(f"† what the interpreter (on the CPU) needs; {note}", style="dim"))
    return notes


def view(progress: Progress, width: int) -> Group:
    """`list`: the course, chapter by chapter, for a terminal `width` columns wide."""
    course = progress.course
    lines: list[RenderableType] = [Text(course.heading, style="bold", justify="center"), *chapters(progress, width)]
    lines.extend(footnotes(progress))
    example = progress.current if not progress.current.tour else course.counted[0]
    lines.append(Text(f"Commands take a puzzle's number or the name in its file, e.g. "
                      f"`pallas-puzzles hint {example.name}`.", style="dim"))
    if progress.workspace is not None:
        lines.append(progress_bar(progress))
    else:
        lines.append(Text("Outside a workspace progress is not tracked; `pallas-puzzles init DIR` makes one.",
                          style="dim"))
    return Group(*lines)


def watch_view(progress: Progress, width: int, height: int) -> Group:
    """Watch's `l`: one screen, the current chapter in full."""
    bar = progress_bar(progress)
    footer = Text("`pallas-puzzles list` shows every chapter's puzzles; r checks the current one again.", style="dim")
    around = _lines(bar, width) + _lines(footer, width)
    return Group(bar, *around_current(progress, width, height, around), footer)
