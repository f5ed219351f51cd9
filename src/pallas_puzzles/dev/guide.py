"""`dev guide`: the course-format guide, from the installed package.

Its one source is the repository's docs/course-format.md; the wheel carries it beside this module
(pyproject.toml's force-include), and a clone (an editable install) reads it where it is.
"""

from __future__ import annotations

from pathlib import Path

from pallas_puzzles.errors import UserError

GUIDE = "course-format.md"


def guide_path() -> Path:
    """Where the guide is: in the installed package, else in the clone this package runs from."""
    for candidate in (Path(__file__).resolve().parent / GUIDE, Path(__file__).resolve().parents[3] / "docs" / GUIDE):
        if candidate.is_file():
            return candidate
    raise UserError("The installed pallas-puzzles has no course-format guide; reinstall it with "
                    "`pip install --force-reinstall pallas-puzzles`.")
