"""From a check's result to a grid view: pick the shape case, build the frames, write the page.

Shared by `pallas-puzzles show` and the notebook API's `pp.show`.
"""

from __future__ import annotations

from pathlib import Path

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.errors import EXIT_FAIL, UserError
from pallas_puzzles.report import grid_html
from pallas_puzzles.report.frames import GridView, build_view
from pallas_puzzles.report.grid_html import GENERATOR_MARK
from pallas_puzzles.results import CaseResult, CheckResult


class NoGrid(UserError):
    """Nothing ran that can be drawn. `message` says why, for a caller that showed nothing else (the
    notebook); `short` only says so, for one that has just shown the verdict, which says why."""

    def __init__(self, short: str, why: str) -> None:
        super().__init__(f"{short.rstrip('.')}: {why}" if why else short, exit_code=EXIT_FAIL)
        self.short = short


def pick_case(result: CheckResult, case: int | None) -> CaseResult:
    """Shape case `case` (1-based), or the first failing case, or the first case."""
    if not result.cases:
        finding = result.finding
        raise NoGrid(f"Puzzle {result.number} ran no shape case, so there is no grid to show.",
                     finding.message if finding is not None else "")
    if case is None:
        return result.first_failure or result.cases[0]
    if not 1 <= case <= len(result.cases):
        ran = len(result.cases)
        raise UserError(f"There is no shape case {case}: puzzle {result.number} has {ran} "
                        f"(pick --case 1 to {ran}).")
    return result.cases[case - 1]


def view_of(result: CheckResult, puzzle: Puzzle, case: int | None, max_cells: int = 16) -> GridView:
    chosen = pick_case(result, case)
    title = f"Puzzle {puzzle.number}: {puzzle.title}"
    if chosen.devices:  # every device runs the same grid on its own blocks; the view follows one
        title += f" · device 0 of {chosen.devices} (each device runs this grid; shown: device 0's steps)"
    view = build_view(chosen, title, max_cells, max_cells)
    if view is None:
        why = chosen.finding.message if chosen.finding is not None else "it made no pallas_call"
        raise NoGrid(f"Shape case {chosen.label} has no grid to show.", why)
    return view


def page(view: GridView) -> str:
    return grid_html.render_page(view)


def check_target(path: Path) -> Path:
    """The page's path, once it is known to be writable without losing a file of the user's."""
    path = path.expanduser()
    if path.is_dir():
        raise UserError(f"{path} is a folder; give --html a file name such as {path / 'grid.html'}.")
    if path.exists():
        try:
            ours = GENERATOR_MARK in path.read_text(encoding="utf-8", errors="ignore")[:2000]
        except OSError:
            ours = False
        if not ours:
            raise UserError(f"{path} already exists and was not written by `pallas-puzzles show`; "
                            "choose another file name.")
    if not path.parent.is_dir():
        raise UserError(f"The folder {path.parent} does not exist; create it or choose another place.")
    return path


def write_page(path: Path, view: GridView) -> Path:
    """Write the page; a file that is not one of our pages is never overwritten."""
    path = check_target(path)
    path.write_text(page(view), encoding="utf-8")
    return path.resolve()
