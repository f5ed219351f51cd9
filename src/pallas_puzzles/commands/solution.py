"""`solution [N]`: the reference solution, asked for first when the puzzle is not solved."""

from __future__ import annotations

from pallas_puzzles.commands.common import Confirm, confirm_or_fail, open_progress
from pallas_puzzles.errors import EXIT_PASS, UserError
from pallas_puzzles.output import Output
from pallas_puzzles.report import terminal
from pallas_puzzles.workspace.folder import reference_solution


def cmd_solution(out: Output, key: str | None, yes: bool, confirm: Confirm) -> int:
    progress = open_progress(out, need_workspace=False)
    if key is None and progress.workspace is None:
        raise UserError("Outside a workspace there is no current puzzle: name one, e.g. `pallas-puzzles solution 2`.")
    puzzle = progress.puzzle(key)
    if not progress.is_solved(puzzle) and not puzzle.tour:
        question = f"Puzzle {puzzle.number} is not solved yet. Show the reference solution anyway?"
        if not confirm_or_fail(question, yes, confirm, "--yes"):
            out.info("Keep going, the hints (`pallas-puzzles hint`) may help.")
            return EXIT_PASS
    terminal.render_source(out.console, reference_solution(puzzle))
    return EXIT_PASS
