"""What several commands share: the learner's progress, a question asked at a terminal, a path as typed."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from pallas_puzzles.course import source as course_source
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.errors import UserError
from pallas_puzzles.output import Output
from pallas_puzzles.workspace.folder import find_workspace
from pallas_puzzles.workspace.progress import Progress

Confirm = Callable[[str], bool]


def open_progress(out: Output, need_workspace: bool = True) -> Progress:
    """The learner's progress in the workspace's own course; outside a workspace, a detached one on
    the built-in course for the commands that need none (list, hint, solution)."""
    try:
        workspace = find_workspace()
    except UserError:
        if need_workspace:
            raise
        return Progress.detached(load_course(), warn=out.warning)
    return Progress.open(workspace, course_source.course_of(workspace), warn=out.warning)


def interactive() -> bool:
    """Whether there is a person at a terminal to answer a question."""
    return bool(sys.stdin is not None and sys.stdin.isatty())


def confirm_or_fail(question: str, yes: bool, confirm: Confirm, flag_hint: str) -> bool:
    if yes:
        return True
    if not interactive():
        raise UserError(f"{question.rstrip('?')}: no terminal to ask at; pass {flag_hint} to confirm.")
    return confirm(question)


def shown_path(path: Path, folder: bool = True) -> str:
    """A path as the learner would type it from here: relative when it lies below the current folder
    (a folder's with a trailing slash)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve())) + ("/" if folder else "")
    except ValueError:
        return str(path)
