"""pallas-puzzles: learn JAX Pallas kernel programming one checked puzzle at a time."""

from __future__ import annotations

__version__ = "0.1.0"


def check_file(path: str) -> int:
    """Check an exercise file by its path (what `python exercises/NN_name.py` runs).

    Returns the exit code `pallas-puzzles verify` would give for that puzzle.
    """
    from pallas_puzzles.commands import verify_file

    return verify_file(path)
