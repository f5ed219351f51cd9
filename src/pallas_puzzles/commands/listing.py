"""`list`: every puzzle with its status and file."""

from __future__ import annotations

from pallas_puzzles.commands.common import open_progress
from pallas_puzzles.errors import EXIT_PASS
from pallas_puzzles.output import Output


def cmd_list(out: Output) -> int:
    out.write(out.format.listing(open_progress(out, need_workspace=False)))
    return EXIT_PASS
