"""`hint [N]`: the next hint level of a puzzle."""

from __future__ import annotations

from pallas_puzzles.commands.common import open_progress
from pallas_puzzles.errors import EXIT_PASS, UserError
from pallas_puzzles.output import Output
from pallas_puzzles.report import terminal


def cmd_hint(out: Output, key: str | None, level: int | None = None) -> int:
    progress = open_progress(out, need_workspace=False)
    if key is None and progress.workspace is None:
        raise UserError("Outside a workspace there is no current puzzle: name one, e.g. `pallas-puzzles hint 2`.")
    puzzle = progress.puzzle(key)
    if level is not None:  # a level asked for by number: shown, and remembered as seen
        terminal.render_hint(out.console, puzzle, progress.reveal_hints_to(puzzle, level))
        return EXIT_PASS
    terminal.render_hint_reveal(out.console, puzzle, progress.reveal_hint(puzzle))
    if progress.workspace is None and len(puzzle.hints) > 1:
        out.info(f"Outside a workspace hints are not remembered: `pallas-puzzles hint {puzzle.number} --level 2` "
                 f"shows the next one.")
    return EXIT_PASS
