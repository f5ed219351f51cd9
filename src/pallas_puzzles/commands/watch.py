"""`watch`: the main loop (watch/ holds it)."""

from __future__ import annotations

from pallas_puzzles.commands.common import open_progress
from pallas_puzzles.output import Output


def cmd_watch(out: Output, requested: str, poll: bool) -> int:
    from pallas_puzzles.watch import run_watch

    return run_watch(out.console, open_progress(out), requested, poll)
