"""pallas-puzzles: learn JAX Pallas kernel programming one checked puzzle at a time.

In a notebook or script: `import pallas_puzzles as pp`, then `pp.exercise(N)`,
`pp.check(N, launcher)`, `pp.show(N, launcher)`, `pp.hint(N)`, `pp.list()` and
`pp.solution(N)` (see `pallas_puzzles.notebook.api` and `pallas_puzzles.notebook.course`).
Importing the package stays light: JAX is imported on the first check.
"""

from __future__ import annotations

from typing import Any

# not `list`: a star import would shadow the builtin
__all__ = ["check", "check_file", "exercise", "hint", "show", "solution"]

# name -> (module, attribute): loaded on first use, so the CLI never pays for them.
_API = {
    "check": ("notebook.api", "check"),
    "show": ("notebook.api", "show"),
    "exercise": ("notebook.course", "exercise"),
    "hint": ("notebook.course", "hint"),
    "list": ("notebook.course", "list_puzzles"),
    "solution": ("notebook.course", "solution"),
}


def check_file(path: str) -> int:
    """Check an exercise file by its path (what `python exercises/NN_name.py` runs).

    Returns the exit code `pallas-puzzles verify` would give for that puzzle.
    """
    from pallas_puzzles.commands.verify import verify_file

    return verify_file(path)


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from pallas_puzzles.versions import ours

        return ours()
    if name in _API:
        import importlib

        module, attribute = _API[name]
        return getattr(importlib.import_module(f"pallas_puzzles.{module}"), attribute)
    raise AttributeError(f"module 'pallas_puzzles' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What tab completion offers: the notebook API too, though it is loaded only when first used."""
    return sorted({*globals(), *_API})
