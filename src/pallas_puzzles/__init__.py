"""pallas-puzzles: learn JAX Pallas kernel programming one checked puzzle at a time.

In a notebook or script: `import pallas_puzzles as pp`, then `pp.exercise(N)`,
`pp.check(N, launcher)` and `pp.show(N, launcher)` (see `pallas_puzzles.api`).
Importing the package stays light: JAX is imported on the first check.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["check", "check_file", "exercise", "show"]

_API = ("check", "show", "exercise")


def check_file(path: str) -> int:
    """Check an exercise file by its path (what `python exercises/NN_name.py` runs).

    Returns the exit code `pallas-puzzles verify` would give for that puzzle.
    """
    from pallas_puzzles.commands import verify_file

    return verify_file(path)


def __getattr__(name: str) -> Any:
    if name in _API:  # loaded on first use: the CLI never pays for it
        from pallas_puzzles import api

        return getattr(api, name)
    raise AttributeError(f"module 'pallas_puzzles' has no attribute {name!r}")
