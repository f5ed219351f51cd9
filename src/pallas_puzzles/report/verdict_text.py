"""A check's verdict for the terminal: the ✗ panel, the ✓ line, the short "not started", as rich renderables.

Every sentence comes from `sentences`; this module only lays them out and
colours them. `Namer` says how a line of the learner's code is named (a
notebook names its cells as IPython does).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.report import sentences
from pallas_puzzles.results import (
    CaseResult,
    CheckResult,
    Finding,
    Mismatch,
    SourceLine,
    value_text,
)

Namer = Callable[[str, int], str]  # (file, line) -> "03_outer_add.py:28" or "Cell In[3], line 4"

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


def finding(found: Finding, name: Namer = sentences.place) -> Group:
    parts: list[Text] = [Text(found.message, style="bold red")]
    where = sentences.finding_place(found)
    if where:
        parts.append(Text(f"  {where}", style="red"))
    parts.extend(source_block(found.where, found.detail if found.kind is FindingKind.SYNTAX else "", name))
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


def mismatch(m: Mismatch, advise: bool = True, name: Namer = sentences.place) -> Group:
    table = Table("index", "expected", "got", box=None, padding=(0, 2), show_edge=False)
    table.columns[0].style, table.columns[1].justify = "cyan", "right"
    table.columns[2].justify, table.columns[2].style = "right", "red"
    for bad in m.examples:
        table.add_row(str(bad.index), value_text(bad.expected), value_text(bad.got, bad.fault))
    parts: list[RenderableType] = [Text(sentences.mismatch_counts(m), style="bold red"),
                                   Text(sentences.mismatch_scope(m), style="dim"), table]
    parts.extend(block_map(m))
    if m.origin():
        parts.extend([Text(m.origin(), style="bold"), *source_block(m.stored_at, name=name)])
    if advise:
        parts.append(Text("→ " + m.kind.explanation, style="yellow"))
    return Group(*parts)


def case(result: CaseResult, advise: bool = True, name: Namer = sentences.place) -> Group:
    passed = result.passed
    head = Text(sentences.case_outcome(result), style="green" if passed else "bold")
    parts: list[RenderableType] = [head]
    parts.extend(finding(f, name) for f in result.findings)
    if result.mismatch is not None:
        parts.append(mismatch(result.mismatch, advise and not result.findings, name))
    return Group(*parts)


def printed(result: CheckResult) -> RenderableType | None:
    text = result.printed.strip()
    if not text:
        return None
    lines = text.splitlines()
    shown = "\n".join(lines[:40]) + (f"\n… {len(lines) - 40} more lines" if len(lines) > 40 else "")
    return Panel(Text(shown), title=sentences.PRINTED, border_style="dim", expand=True)


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
          link: Callable[[str], Text] = file_link, with_printed: bool = True) -> Group:
    """The whole verdict: a ✓ line on a pass, a short note for an untouched stub, else the ✗ panel;
    then what the kernel printed (unless `with_printed` is False)."""
    title = sentences.puzzle_title(puzzle)
    shown: list[RenderableType] = []
    if result.passed:
        line = Text("✓ ", style="bold green") + Text(title, style="bold")
        shown.append(line + Text(f"  {sentences.pass_line(result)}", style="green"))
    elif result.not_started:
        shown.append(not_started(result, name))
    else:
        body: list[RenderableType] = [Text("File: ") + link(result.file)]
        body.extend(finding(f, name) for f in result.findings)
        for one in result.cases:
            body.append(case(one, True, name) if not one.passed else
                        Text(sentences.case_outcome(one), style="green"))
        if result.skipped_cases:
            body.append(Text(sentences.cases_not_run(result), style="dim"))
        shown.append(Panel(Group(*body), title=Text("✗ " + title, style="bold red"),
                           subtitle=sentences.footer(result), border_style="red", expand=True))
    output = printed(result) if with_printed else None
    return Group(*shown, *([output] if output is not None else []))
