"""A verdict as plain text without colour: the terminal's own view, for files other programs show."""

from __future__ import annotations

import io

from rich.console import Console

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.report import terminal
from pallas_puzzles.results import CheckResult

WIDTH = 100


def verdict(result: CheckResult, puzzle: Puzzle, width: int = WIDTH) -> str:
    """What `verify` prints for this result, as plain text."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, highlight=False, force_terminal=False,
                      emoji=False, legacy_windows=False)
    terminal.render_result(console, result, puzzle)
    return buffer.getvalue().rstrip() + "\n"
