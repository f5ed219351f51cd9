"""A check's verdict for the terminal: the ✗ panel, the ✓ line, the short "not started", as rich renderables.

Every sentence comes from `sentences`; this module only lays them out and
colours them. `Namer` says how a line of the learner's code is named (a
notebook names its cells as IPython does). `Detail` folds a verdict to fit a
small screen (watch mode at 80x24): the block map, then the rows of the
mismatch table and what the kernel printed go first; the title, the finding
and its cause sentence always stay.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.report import sentences
from pallas_puzzles.report.printed_lines import PrintedLines, rejoined
from pallas_puzzles.results import (
    CaseResult,
    CheckResult,
    Finding,
    Mismatch,
    SourceLine,
    value_text,
)

Namer = Callable[[str, int], str]  # (file, line) -> "03_outer_add.py:28" or "Cell In[3], line 4"

@dataclass(frozen=True)
class Detail:
    """How much of a verdict is shown: all of it, or folded to fit a screen."""

    block_map: bool = True
    examples: int | None = None  # rows of the mismatch table (None: every one the check kept)
    printed: int = 40  # lines of what the kernel printed
    source: int | None = None  # learner lines under each finding (None: all)
    folded: str = ""  # said where something was left out ("" when nothing is)


FULL = Detail()


def folds(said: str) -> tuple[Detail, ...]:
    """The ways to show a verdict, from all of it to the least that still says what is wrong and why;
    `said` tells the reader how to see the rest."""
    return (FULL, Detail(block_map=False, printed=6, folded=said), Detail(block_map=False, examples=2, printed=3,
                                                                           folded=said),
            Detail(block_map=False, examples=0, printed=0, source=1, folded=said))


# Letters, not coloured squares only, so the map reads without colour too.
CELL_STYLE = {".": ("·", "green"), "x": ("x", "bold red"), "N": ("N", "bold magenta"), "?": ("?", "bold yellow")}


def file_link(path: Path | str) -> Text:
    resolved = Path(path).resolve()
    try:
        shown = str(resolved.relative_to(Path.cwd()))
    except ValueError:
        shown = str(resolved)
    return Text(shown, style=f"bold cyan link file://{resolved}")


def source_block(where: tuple[SourceLine, ...], caret: str = "", name: Namer = sentences.place,
                 fold: bool = True) -> list[Text]:
    """The learner's lines as `file:line │ code`; `caret` goes under the first line's code."""
    lines = []
    for index, line in enumerate(where):
        prefix = f"  {name(line.file, line.line)}  │ "
        text = Text(prefix, style="bold cyan") + Text(line.text, style="white")
        if not fold:
            text.no_wrap, text.overflow = True, "ellipsis"
        lines.append(text)
        if index == 0 and caret:
            lines.append(Text(" " * len(prefix) + caret, style="red"))
    return lines


def finding(found: Finding, name: Namer = sentences.place, detail: Detail = FULL) -> Group:
    parts: list[Text] = [Text(found.message, style="bold red")]
    where = sentences.finding_place(found)
    if where:
        parts.append(Text(f"  {where}", style="red"))
    lines = found.where if detail.source is None else found.where[:detail.source]
    parts.extend(source_block(lines, found.detail if found.kind is FindingKind.SYNTAX else "", name))
    if found.explanation:
        parts.append(Text("→ " + found.explanation, style="yellow"))
    if found.kind in (FindingKind.ERROR, FindingKind.IMPORT) and not found.where and found.detail:
        parts.append(Text(found.detail.strip().splitlines()[0][:300], style="dim"))
    if found.kind is FindingKind.INTERNAL and found.detail:
        parts.append(Text(found.detail[-2000:], style="dim"))
    return Group(*parts)


def block_map(m: Mismatch) -> list[Text]:
    lines = [Text(sentences.block_map_heading(m), style="bold")]
    for row in m.block_map:
        text = Text("  ")
        for cell in row:
            glyph, style = CELL_STYLE[cell]
            text.append(glyph + " ", style=style)
        lines.append(text)
    legend = Text("  ")
    for cell, label in sentences.MAP_LEGEND:
        glyph, style = CELL_STYLE[cell]
        legend.append(glyph, style=style).append(f" {label}   ", style="dim")
    lines.append(legend)
    return lines


def mismatch(m: Mismatch, advise: bool = True, name: Namer = sentences.place, detail: Detail = FULL) -> Group:
    parts: list[RenderableType] = [Text(sentences.mismatch_counts(m), style="bold red")]
    examples = m.examples if detail.examples is None else m.examples[:detail.examples]
    if examples:
        table = Table("index", "expected", "got", box=None, padding=(0, 2), show_edge=False)
        table.columns[0].style, table.columns[1].justify = "cyan", "right"
        table.columns[2].justify, table.columns[2].style = "right", "red"
        for bad in examples:
            table.add_row(str(bad.index), value_text(bad.expected), value_text(bad.got, bad.fault))
        parts.extend([Text(sentences.mismatch_scope(m), style="dim"), table])
    if detail.block_map:
        parts.extend(block_map(m))
    if m.origin():
        stored = m.stored_at if detail.source is None else m.stored_at[:detail.source]
        parts.extend([Text(m.origin(), style="bold"), *source_block(stored, name=name)])
    if advise:
        parts.append(Text("→ " + m.kind.explanation, style="yellow"))
    return Group(*parts)


def case(result: CaseResult, advise: bool = True, name: Namer = sentences.place, detail: Detail = FULL) -> Group:
    passed = result.passed
    head = Text(sentences.case_outcome(result), style="green" if passed else "bold")
    parts: list[RenderableType] = [head]
    parts.extend(finding(f, name, detail) for f in result.findings)
    if result.mismatch is not None:
        parts.append(mismatch(result.mismatch, advise and not result.findings, name, detail))
    return Group(*parts)


def printed(result: CheckResult, detail: Detail = FULL) -> RenderableType | None:
    text = result.printed.strip()
    if not text:
        return None
    lines = rejoined(text.splitlines())
    if detail.printed == 0:
        return Text(f"(your code printed {len(lines)} line{'s' if len(lines) != 1 else ''}; {detail.folded})",
                    style="dim")
    more = len(lines) - detail.printed
    shown = lines[:detail.printed] + ([f"… {more} more line{'s' if more != 1 else ''}"] if more > 0 else [])
    return Panel(PrintedLines(shown), title=sentences.PRINTED, border_style="dim", expand=True)


def summary(result: CheckResult, puzzle: Puzzle) -> Text:
    """The verdict in one line, for the end of one taller than the screen: its title and what is wrong."""
    from pallas_puzzles.report.headline import message

    mark, style = ("✓", "bold green") if result.passed else ("✗", "bold red")
    return Text(f"{mark} {sentences.puzzle_title(puzzle)}: ", style=style) + Text(message(result), style="bold")


def not_started(result: CheckResult, name: Namer = sentences.place) -> Group:
    """An untouched stub: a few lines, not a wall (it must fit an 80x24 terminal under watch mode's header)."""
    found = next(f for f in result.findings if f.kind is FindingKind.NOT_STARTED)
    head = Text("○ ", style="bold yellow") + Text(found.message, style="bold")
    task = Text(sentences.NOT_STARTED_TASK + " ") + file_link(result.file)
    shown = source_block(found.where[:4], name=name, fold=False)
    if len(found.where) > 4:
        shown.append(Text(f"  … and {len(found.where) - 4} more", style="dim"))
    return Group(head, task, *shown)


def check(result: CheckResult, puzzle: Puzzle, name: Namer = sentences.place,
          link: Callable[[str], Text] = file_link, with_printed: bool = True, detail: Detail = FULL) -> Group:
    """The whole verdict (or as much as `detail` says): a ✓ line on a pass, a short note for an untouched
    stub, else the ✗ panel; then what the kernel printed (unless `with_printed` is False)."""
    title = sentences.puzzle_title(puzzle)
    shown: list[RenderableType] = []
    if result.passed:
        line = Text("✓ ", style="bold green") + Text(title, style="bold")
        shown.append(line + Text(f"  {sentences.pass_line(result)}", style="green"))
    elif result.not_started:
        shown.append(not_started(result, name))
    else:
        body: list[RenderableType] = [Text("File: ") + link(result.file)]
        body.extend(finding(f, name, detail) for f in result.findings)
        for one in result.cases:
            body.append(case(one, True, name, detail) if not one.passed else
                        Text(sentences.case_outcome(one), style="green"))
        if result.skipped_cases:
            body.append(Text(sentences.cases_not_run(result), style="dim"))
        if detail.folded:
            body.append(Text(f"(Folded to fit the screen: {detail.folded}.)", style="dim"))
        shown.append(Panel(Group(*body), title=Text("✗ " + title, style="bold red"),
                           subtitle=sentences.footer(result), border_style="red", expand=True))
    output = printed(result, detail) if with_printed else None
    return Group(*shown, *([output] if output is not None else []))
