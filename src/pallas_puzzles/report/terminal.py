"""The terminal view: results, lists, hints, panels and one-line messages, drawn with rich."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from pallas_puzzles import backends
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.metadata import Puzzle
from pallas_puzzles.results import (
    CaseResult,
    CheckResult,
    Finding,
    Mismatch,
    SourceLine,
    value_text,
)

if TYPE_CHECKING:
    from pallas_puzzles.doctor import Report
    from pallas_puzzles.progress import HintReveal, PassOutcome, Progress

# Letters, not coloured squares only, so the map reads without colour too.
CELL_STYLE = {".": ("·", "green"), "x": ("x", "bold red"), "N": ("N", "bold magenta"), "?": ("?", "bold yellow")}

def make_console(force_plain: bool = False, stderr: bool = False) -> Console:
    if force_plain:
        return Console(color_system=None, highlight=False, soft_wrap=True, stderr=stderr)
    return Console(highlight=False, stderr=stderr)


def file_link(path: Path | str) -> Text:
    resolved = Path(path).resolve()
    try:
        shown = str(resolved.relative_to(Path.cwd()))
    except ValueError:
        shown = str(resolved)
    return Text(shown, style=f"bold cyan link file://{resolved}")


# One-line messages wrap softly (the terminal folds them), so paths and commands in
# them stay whole when copied.
def error(console: Console, message: str) -> None:
    console.print(Text("error: ", style="bold red") + Text(message), soft_wrap=True)


def warning(console: Console, message: str) -> None:
    console.print(Text("warning: ", style="bold yellow") + Text(message), soft_wrap=True)


def info(console: Console, message: str) -> None:
    console.print(Text(message), soft_wrap=True)


def _source_block(where: tuple[SourceLine, ...], caret: str = "") -> list[Text]:
    """The learner's lines as `file:line │ code`; `caret` goes under the first line's code."""
    lines = []
    for index, line in enumerate(where):
        prefix = f"  {Path(line.file).name}:{line.line}  │ "
        lines.append(Text(prefix, style="bold cyan") + Text(line.text, style="white"))
        if index == 0 and caret:
            lines.append(Text(" " * len(prefix) + caret, style="red"))
    return lines


def render_finding(finding: Finding) -> Group:
    parts: list[Text] = [Text(finding.message, style="bold red")]
    if finding.grid_point is not None and "grid point" not in finding.message:
        parts.append(Text(f"  at grid point (program ids) {finding.grid_point}", style="red"))
    parts.extend(_source_block(finding.where, finding.detail if finding.kind is FindingKind.SYNTAX else ""))
    if finding.explanation:
        parts.append(Text("→ " + finding.explanation, style="yellow"))
    if finding.kind in (FindingKind.ERROR, FindingKind.IMPORT) and not finding.where and finding.detail:
        parts.append(Text(finding.detail.strip().splitlines()[0][:300], style="dim"))
    if finding.kind is FindingKind.INTERNAL and finding.detail:
        parts.append(Text(finding.detail[-2000:], style="dim"))
    return Group(*parts)


def _block_map(m: Mismatch) -> list[Text]:
    lines = [Text(f"Where, {m.block_map_title}:", style="bold")]
    for row in m.block_map:
        text = Text("  ")
        for cell in row:
            glyph, style = CELL_STYLE[cell]
            text.append(glyph + " ", style=style)
        lines.append(text)
    legend = Text("  ")
    for cell, label in ((".", "right"), ("x", "wrong"), ("N", "NaN/garbage"), ("?", "never written")):
        glyph, style = CELL_STYLE[cell]
        legend.append(glyph, style=style).append(f" {label}   ", style="dim")
    lines.append(legend)
    return lines


def render_mismatch(m: Mismatch, advise: bool = True) -> Group:
    counts = f"{m.n_bad} of {m.total} output elements are wrong"
    extras = []
    if m.n_unwritten:
        extras.append(f"{m.n_unwritten} never written")
    if m.n_nan:
        extras.append(f"{m.n_nan} NaN/garbage")
    if not math.isnan(m.max_abs_error):
        extras.append(f"max abs error {m.max_abs_error:.3g}")
    title = Text(counts + (f" ({', '.join(extras)})" if extras else ""), style="bold red")
    table = Table("index", "expected", "got", box=None, padding=(0, 2), show_edge=False)
    table.columns[0].style, table.columns[1].justify = "cyan", "right"
    table.columns[2].justify, table.columns[2].style = "right", "red"
    for bad in m.examples:
        table.add_row(str(bad.index), value_text(bad.expected), value_text(bad.got, bad.fault))
    parts: list[object] = [title, Text(f"Output shape {m.shape}; tolerance rtol={m.rtol:g}, atol={m.atol:g}. First mismatches:", style="dim"), table]
    origin = [Text(m.origin(), style="bold"), *_source_block(m.stored_at)] if m.origin() else []
    parts.extend([*_block_map(m), *origin])
    if advise:
        parts.append(Text("→ " + m.kind.explanation, style="yellow"))
    return Group(*parts)


def render_case(case: CaseResult, advise: bool = True) -> Group:
    head = Text(f"Shape case {case.label}: ", style="bold")
    head.append("passed" if case.passed else "failed", style="green" if case.passed else "bold red")
    parts: list[object] = [head]
    parts.extend(render_finding(finding) for finding in case.findings)
    if case.mismatch is not None:
        parts.append(render_mismatch(case.mismatch, advise and not case.findings))
    return Group(*parts)


def render_result(console: Console, result: CheckResult, puzzle: Puzzle) -> None:
    title = f"Puzzle {puzzle.number}: {puzzle.title}"
    backend = f"backend {result.backend}" if result.backend else ""
    if result.passed:
        cases = "; ".join(c.label for c in result.cases)
        console.print(Text("✓ ", style="bold green") + Text(title, style="bold") +
                      Text(f"  passed {len(result.cases)} shape cases ({cases}) on {backend} in {result.seconds:.2f} s", style="green"))
        _render_printed(console, result)
        return
    body: list[object] = [Text("File: ") + file_link(result.file)]
    body.extend(render_finding(finding) for finding in result.findings)
    for case in result.cases:
        if case.passed:
            body.append(Text(f"Shape case {case.label}: passed", style="green"))
        else:
            # An untouched stub is wrong by design: advice on fixing it would mislead.
            body.append(render_case(case, advise=not result.not_started))
    if result.skipped_cases:
        body.append(Text(f"({result.skipped_cases} more shape case(s) not run: fix this one first)", style="dim"))
    console.print(Panel(Group(*body), title=Text("✗ " + title, style="bold red"),
                        subtitle=f"{backend} · {result.seconds:.2f} s", border_style="red", expand=True))
    _render_printed(console, result)


def _render_printed(console: Console, result: CheckResult) -> None:
    text = result.printed.strip()
    if text:
        lines = text.splitlines()
        shown = "\n".join(lines[:40]) + (f"\n… {len(lines) - 40} more lines" if len(lines) > 40 else "")
        console.print(Panel(Text(shown), title="your code printed", border_style="dim", expand=True))


def render_success(console: Console, puzzle: Puzzle, outcome: PassOutcome) -> None:
    solution, upcoming = outcome.solution, outcome.upcoming
    lines = [Text(f"Puzzle {puzzle.number} ({puzzle.title}) solved!", style="bold green")]
    if solution is not None:
        lines.append(Text("Compare with the reference solution: ") + file_link(solution))
    if upcoming is not None:
        lines.append(Text(f"Next: puzzle {upcoming.number}, {upcoming.title} — {upcoming.summary}"))
    else:
        lines.append(Text("That was the last unsolved puzzle. Congratulations: you have finished the course!", style="bold"))
    console.print(Panel(Group(*lines), border_style="green", title="✓ passed"))


def progress_bar(solved: int, total: int, width: int = 30) -> Text:
    filled = round(width * solved / total) if total else 0
    text = Text("Progress ")
    text.append("█" * filled, style="green").append("░" * (width - filled), style="dim")
    text.append(f" {solved}/{total} solved")
    return text


# Below this width the file name goes under the title: file names are never folded,
# because a learner copies them.
WIDE_LIST_COLUMNS = 80


def _list_row(progress: Progress, puzzle: Puzzle) -> tuple[str, Text, Text, str, Text]:
    if puzzle.tour:
        status = Text("tour", style="blue")
    elif progress.is_solved(puzzle):
        status = Text("solved", style="green")
    else:
        status = Text("unsolved", style="yellow")
    marker = "▶ " if puzzle == progress.current else ""
    missing = [b.name for b in backends.REGISTRY.values() if not puzzle.supports(b)]
    runs_on = ("all" if not missing else "no " + "/".join(missing)) + (f", jax>={puzzle.min_jax}" if puzzle.min_jax else "")
    if puzzle.tpu_only_idiom:
        runs_on += "*"
    link = Text(puzzle.file, style=f"cyan link file://{progress.exercise(puzzle).resolve()}")
    return marker + str(puzzle.number), Text(puzzle.title), status, runs_on, link


def render_list(console: Console, progress: Progress) -> None:
    course = progress.course
    wide = console.width >= WIDE_LIST_COLUMNS
    table = Table(title=course.title, box=box.SIMPLE_HEAD, pad_edge=False)
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
    console.print(table)
    if any(p.tpu_only_idiom for p in course.puzzles):
        console.print(Text("* uses a TPU-only idiom (scratch on a sequential grid, scalar prefetch)", style="dim"))
    console.print(Text("Commands take a puzzle's number or the name in its file, e.g. `pallas-puzzles hint long_sum`.", style="dim"))
    console.print(progress_bar(progress.solved_count, progress.total))


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
    console.print(Text("Edit ") + file_link(progress.exercise(puzzle)) + Text(" and save; it is checked on every save."))
    console.print(progress_bar(progress.solved_count, progress.total))
    if keys:
        console.print(Text("keys: h hint · l list · n next · r re-run · x reset · q quit", style="dim"))
    else:
        console.print(Text("commands (type, then Enter): h hint · l list · n next · r re-run · x reset · q quit", style="dim"))


def render_source(console: Console, path: Path) -> None:
    """A file's code, highlighted, without line numbers: a learner copies from it."""
    console.print(Syntax(path.read_text(encoding="utf-8"), "python", line_numbers=False))


def render_doctor(console: Console, report: Report) -> None:
    table = Table(title="pallas-puzzles doctor", show_header=False)
    table.add_column("item", style="bold", no_wrap=True)
    table.add_column("value")
    table.add_column("", no_wrap=True)
    for line in report.lines:
        mark = Text("ok", style="green") if line.ok else Text("problem", style="bold red")
        value = Text(line.value)
        if line.fix:
            value.append("\n→ " + line.fix, style="yellow")
        table.add_row(line.item, value, mark)
    console.print(table)
    if report.healthy:
        console.print(Text("Everything needed is in place.", style="green"))
    else:
        console.print(Text("Fix the problems above, then run `pallas-puzzles doctor` again.", style="bold red"))
