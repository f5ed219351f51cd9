"""`reset N`: the original stub back, the learner's version kept as a backup."""

from __future__ import annotations

from pallas_puzzles.commands.common import Confirm, confirm_or_fail, open_progress
from pallas_puzzles.errors import EXIT_PASS
from pallas_puzzles.output import Output


def cmd_reset(out: Output, key: str, yes: bool, confirm: Confirm) -> int:
    progress = open_progress(out)
    puzzle = progress.puzzle(key)
    if progress.untouched(puzzle):
        out.info(f"{puzzle.file} is already the original exercise: nothing to reset.")
        return EXIT_PASS
    question = f"Replace {puzzle.file} with the original stub (your version is backed up first)?"
    if not confirm_or_fail(question, yes, confirm, "--yes"):
        out.info("Nothing was changed.")
        return EXIT_PASS
    backup = progress.reset(puzzle)
    if backup is not None:
        out.info(f"Your version was saved as {backup}.")
    out.info(f"Restored {progress.exercise(puzzle)}.")
    return EXIT_PASS
