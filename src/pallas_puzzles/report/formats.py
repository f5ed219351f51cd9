"""The output formats of `verify`: the terminal, today's JSON, and two for autograders.

`text` and `json` are drawn as each result arrives (report/terminal.py, report/json_view.py);
`junit` and `exercism` are whole documents made at the end from a RunReport, one module each.
"""

from __future__ import annotations

from collections.abc import Callable

from pallas_puzzles.errors import UserError
from pallas_puzzles.report import exercism, junit
from pallas_puzzles.report.run_report import RunReport

TEXT, JSON, JUNIT, EXERCISM = "text", "json", "junit", "exercism"
FORMATS = (TEXT, JSON, JUNIT, EXERCISM)
DOCUMENTS: dict[str, Callable[[RunReport], str]] = {JUNIT: junit.render, EXERCISM: exercism.render}
# What a format prints when the command fails before checking anything (its sentence goes to stderr).
ERROR_DOCUMENTS: dict[str, Callable[[str], str]] = {EXERCISM: exercism.error}


def validate(name: str | None, as_json: bool = False) -> str:
    """The format asked for; `--json` is `--format json`."""
    chosen = (name or (JSON if as_json else TEXT)).strip().lower()
    if chosen not in FORMATS or (as_json and chosen != JSON):
        raise UserError(f"Unknown output format '{name}'; choose one of {', '.join(FORMATS)} "
                        f"(--json is the same as --format json).")
    return chosen
