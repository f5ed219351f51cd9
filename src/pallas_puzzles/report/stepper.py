"""The terminal step-through of a grid (`pallas-puzzles show N`): one frame per grid step.

Each operand is a board of blocks; the block this step reads or writes is
drawn solid when it was copied in, shaded when the previous step's block is
reused. Glyphs, not colour alone, carry the meaning, so the view reads in a
plain terminal too. Without a TTY one still frame is printed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from rich.console import Console, Group
from rich.text import Text

from pallas_puzzles.report import sentences
from pallas_puzzles.report.frames import GOOD, GridView, OperandBoard

BOARD_CELL_WIDTH = 2  # characters per cell: 32 cells fit 80 columns with room for the margin
MAX_BOARD_CELLS = 32

# (glyph, style) for each state a cell can be in.
COPIED = ("██", "bold cyan")
REUSED = ("▒▒", "bold blue")
VISITED = ("░░", "green")
UNTOUCHED = ("··", "dim")
OUTSIDE = ("┄┄", "dim red")  # past the array's end: only an index_map's mistake lands here
OUTSIDE_NOW = ("!!", "bold white on red")
FAULT_STYLE = {"x": ("xx", "bold red"), "N": ("NN", "bold magenta"), "?": ("??", "bold yellow")}
CURRENT_FAULT_STYLE = "bold white on red"

KEYS_HELP = "→/l next  ←/h back  b first bad step  o switch operand  g first step  q quit"


def board_size_for(width: int) -> int:
    """Cells per side that fit a terminal `width` columns wide."""
    return max(4, min(MAX_BOARD_CELLS, (width - 6) // BOARD_CELL_WIDTH))


def _cell(board: OperandBoard, step: int, row: int, col: int, visited: set[tuple[int, int]]) -> tuple[str, str]:
    fault = board.faults[row][col] if board.faults is not None else GOOD
    if (row, col) in board.outside:
        now = step < len(board.touched) and board.touched[step] == (row, col)
        return OUTSIDE_NOW if now else OUTSIDE
    if step < len(board.touched) and board.touched[step] == (row, col):
        glyph, style = COPIED if board.copied[step] else REUSED
        return glyph, CURRENT_FAULT_STYLE if fault != GOOD else style
    if fault != GOOD:
        return FAULT_STYLE[fault]
    return VISITED if (row, col) in visited else UNTOUCHED


def _operand_heading(board: OperandBoard, step: int, focused: bool) -> Text:
    marker = "▶ " if focused else "  "
    text = Text(marker, style="bold yellow").append(board.name, style="bold")
    text.append(f"  {board.role} {board.shape} {board.dtype}", style="dim")
    if board.block is not None:
        text.append(f", blocks of {board.block}", style="dim")
    if board.group != (1, 1):
        text.append(f", each cell {board.group[0]}x{board.group[1]} blocks", style="dim")
    if board.fold_note:
        text.append(f"\n    ({board.fold_note})", style="dim")
    text.append("\n    " + board.describe_block(step), style="cyan" if board.pipelined else "dim")
    return text


def render_board(board: OperandBoard, step: int) -> Text:
    visited = board.visited_until(step - 1) if step > 0 else set()
    text = Text()
    for row in range(board.rows):
        text.append("    ")
        for col in range(board.cols):
            glyph, style = _cell(board, step, row, col, visited)
            text.append(glyph, style=style)
        if row < board.rows - 1:
            text.append("\n")
    return text


def legend(view: GridView) -> Text:
    text = Text("    ")
    words = sentences.GRID_LEGEND
    entries = [(COPIED, words["copied"]), (REUSED, words["reused"]), (VISITED, words["visited"])]
    if any(b.faults is not None for b in view.boards):
        entries += [(FAULT_STYLE[c], words[c]) for c in ("x", "N", "?")]
    if any(b.outside for b in view.boards):
        entries.append((OUTSIDE_NOW, words["outside"]))
    for n, ((glyph, style), label) in enumerate(entries):
        if n == 3:
            text.append("\n    ")
        text.append(glyph, style=style).append(f" {label}  ", style="dim")
    return text


def _status_line(view: GridView, step: int) -> Text:
    point = view.points[step] if view.points else ()
    text = Text(f"  kernel {view.kernel} · grid {view.grid}", style="dim")
    if view.semantics:
        text.append(f" ({', '.join(view.semantics)})", style="dim")
    text.append(f"\n  step {step + 1} of {view.steps} · grid point {point}", style="bold")
    if step == view.fault_step:
        text.append(f"  ✗ {sentences.FAULT_AT_STEP}", style="bold red")
    elif step in view.bad_steps:
        text.append(f"  ✗ {sentences.BAD_BLOCK_AT_STEP}", style="bold red")
    if view.ran is not None and step >= view.ran:
        text.append(f"  ({sentences.NOT_REACHED})", style="yellow")
    return text


def render_frame(view: GridView, step: int, focus: int | None = None) -> Group:
    """One frame; `focus` draws one operand's board and lists the rest, None draws every board."""
    parts: list[Text] = [
        Text(f"{view.title} · shape case {view.case}", style="bold"),
        Text("  " + view.verdict, style="green" if view.passed else "bold red"),
    ]
    if view.planned:
        parts.append(Text("  " + sentences.PLANNED_ONLY, style="yellow"))
    parts.append(_status_line(view, step))
    if view.calls_in_case > 1:
        parts.append(Text(f"  (this case made {view.calls_in_case} pallas_calls; showing the one that "
                          "produced the output)", style="dim"))
    if view.boards and any(b.faults is not None for b in view.boards) and not view.bad_steps:
        parts.append(Text("  " + sentences.NO_STEP_COVERS, style="yellow"))
    for index, board in enumerate(view.boards):
        focused = focus == index
        parts.append(_operand_heading(board, step, focused))
        if board.pipelined and (focus is None or focused):
            parts.append(render_board(board, step))
    parts.append(legend(view))
    return Group(*parts)


def still_frame(console: Console, view: GridView) -> None:
    """Without a TTY: the first bad step (or the first step), every operand drawn."""
    step = view.first_bad if view.first_bad is not None else 0
    console.print(render_frame(view, step))
    console.print(Text(f"  ({view.steps} grid step{'s' if view.steps != 1 else ''}; "
                       "run in a terminal to step through them, "
                       "or use --html FILE for a page with a slider)", style="dim"))


@dataclass
class Cursor:
    """Where the viewer is: a grid step and the focused operand."""

    view: GridView
    step: int = 0
    focus: int = 0

    def apply(self, key: str) -> bool:
        """Move for one key; False to quit."""
        last = max(0, self.view.steps - 1)
        if key in ("q", "\x1b", "\x04"):
            return False
        if key in ("l", "n", " ", "right", "j"):
            self.step = min(last, self.step + 1)
        elif key in ("h", "p", "left", "k"):
            self.step = max(0, self.step - 1)
        elif key == "g":
            self.step = 0
        elif key == "G":
            self.step = last
        elif key == "b" and self.view.first_bad is not None:
            self.step = self.view.first_bad
        elif key in ("o", "\t") and self.view.boards:
            self.focus = (self.focus + 1) % len(self.view.boards)
        return True


ARROWS = {"C": "right", "D": "left", "A": "left", "B": "right"}


def _read_key(fd: int) -> str:
    raw = os.read(fd, 1)
    if not raw:
        return "q"  # the terminal is gone
    if raw == b"\x1b":  # an arrow key arrives as ESC [ C
        import select

        if select.select([fd], [], [], 0.05)[0]:
            rest = os.read(fd, 2)
            return ARROWS.get(rest[-1:].decode(errors="ignore"), "")
        return "\x1b"
    return raw.decode(errors="ignore")


@contextmanager
def _cbreak(fd: int) -> Iterator[None]:
    import termios
    import tty

    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def step_through(console: Console, view: GridView) -> None:
    """Interactive when stdin and stdout are terminals; a still frame otherwise."""
    stdin = sys.stdin
    if not (console.is_terminal and stdin is not None and stdin.isatty()):
        still_frame(console, view)
        return
    cursor = Cursor(view, step=view.first_bad if view.first_bad is not None else 0)
    first_operand = next((i for i, b in enumerate(view.boards) if b.role == "output"), 0)
    cursor.focus = first_operand
    fd = stdin.fileno()
    with _cbreak(fd):
        while True:
            console.clear()
            console.print(render_frame(view, cursor.step, cursor.focus))
            console.print(Text("  " + KEYS_HELP, style="dim"))
            if not cursor.apply(_read_key(fd)):
                break
