"""Where the learner's files live, and where the pristine course files come from.

A workspace is the folder `init` made (it holds `.pallas_puzzles/`), found from any
subfolder. The pristine stubs and reference solutions belong to the course each puzzle
comes from (`Puzzle.stub_path`, `Puzzle.solution_path`). The project's own repository is
never a workspace, as rustlings refuses to run in its own: its exercises are the course's
pristine stubs, and a learner's edits there would be edits to the course.
"""

from __future__ import annotations

import filecmp
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from pallas_puzzles.course.model import Course, Puzzle
from pallas_puzzles.errors import UserError

MARKER = ".pallas_puzzles"


def _is_our_repository(folder: Path) -> bool:
    """The pallas-puzzles repository itself (a clone): the package's source beside the course's stubs."""
    return (folder / "src" / "pallas_puzzles").is_dir() and (folder / "exercises").is_dir()


@dataclass(frozen=True)
class Workspace:
    root: Path

    @property
    def exercises(self) -> Path:
        return self.root / "exercises"

    @property
    def solutions(self) -> Path:
        return self.root / "solutions"

    @property
    def meta(self) -> Path:
        return self.root / MARKER

    @property
    def state_file(self) -> Path:
        return self.meta / "state.json"

    @property
    def backups(self) -> Path:
        return self.meta / "backups"

    @property
    def results(self) -> Path:
        """The stored verdicts (checking/cache.py): a cache of this machine's checks."""
        return self.meta / "results"

    def exercise(self, puzzle: Puzzle) -> Path:
        return self.exercises / puzzle.file


def find_workspace(start: Path | None = None) -> Workspace:
    folder = (start or Path.cwd()).resolve()
    found = _enclosing_workspace(folder)
    if found is not None:
        return Workspace(found)
    repository = next((c for c in (folder, *folder.parents) if _is_our_repository(c)), None)
    if repository is not None:
        raise UserError(
            f"{repository} is the pallas-puzzles repository, whose exercises are the course's pristine stubs, "
            f"not a workspace; create one with `pallas-puzzles init my-puzzles` and run commands inside it."
        )
    raise UserError(
        "This folder is not inside a pallas-puzzles workspace; create one with "
        "`pallas-puzzles init DIR` and run commands from inside it."
    )


WORKSPACE_README = """\
# My Pallas puzzles

This folder is a pallas-puzzles workspace.

- `exercises/` holds one file per puzzle. Edit them in any editor.
- `solutions/` receives the reference solution of each puzzle you solve.
- `.pallas_puzzles/` keeps your progress and backups (of files you `reset`).

Start with `pallas-puzzles watch` (or just `pallas-puzzles`) in this folder:
it checks the current puzzle every time you save and moves on when it passes.
`pallas-puzzles --help` lists the other commands.
"""


def _enclosing_workspace(folder: Path) -> Path | None:
    """The nearest folder at or above `folder` that is a workspace."""
    return next((c for c in (folder, *folder.parents) if (c / MARKER).is_dir()), None)


def init_workspace(target: Path, course: Course) -> Workspace:
    """Write a fresh workspace into a new or empty-enough folder; never overwrite, never nest."""
    target = target.resolve()
    # A workspace inside a clone of the repository is fine (the README makes one there).
    enclosing = _enclosing_workspace(target)
    if enclosing == target:
        raise UserError(f"{target} already holds a workspace; pick another folder (nothing was changed).")
    if enclosing is not None:
        raise UserError(f"{target} is inside the workspace {enclosing}; create the new one somewhere "
                        f"else (nothing was changed).")
    ours = [target / MARKER, target / "exercises", target / "solutions", target / "README.md"]
    taken = [p.name + ("/" if p.is_dir() else "") for p in ours if p.exists() or p.is_symlink()]
    if taken:
        raise UserError(f"{target} already has {', '.join(taken)}; pick a new or empty folder so nothing "
                        f"of yours is overwritten (nothing was changed).")
    if target.exists() and not target.is_dir():
        raise UserError(f"{target} is a file, not a folder; pick another name (nothing was changed).")
    target.mkdir(parents=True, exist_ok=True)
    workspace = Workspace(target)
    workspace.exercises.mkdir()
    for puzzle in course.puzzles:
        shutil.copyfile(puzzle.stub_path, workspace.exercise(puzzle))
    workspace.solutions.mkdir()
    workspace.backups.mkdir(parents=True)
    # Stored verdicts are a cache of this machine's checks: they stay out of a repository.
    (workspace.meta / ".gitignore").write_text(f"{workspace.results.name}/\n", encoding="utf-8")
    (target / "README.md").write_text(WORKSPACE_README, encoding="utf-8")
    return workspace


def back_up(workspace: Workspace, path: Path) -> Path:
    """Keep a timestamped copy of a learner's file before anything replaces it."""
    workspace.backups.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    destination = workspace.backups / f"{path.stem}.{stamp}{path.suffix}"
    counter = 1
    while destination.exists():
        destination = workspace.backups / f"{path.stem}.{stamp}-{counter}{path.suffix}"
        counter += 1
    shutil.copy2(path, destination)
    return destination


def pristine_stub(puzzle: Puzzle) -> bytes:
    """The original exercise text for a puzzle."""
    return puzzle.stub_path.read_bytes()


def untouched(workspace: Workspace, puzzle: Puzzle) -> bool:
    """Is the learner's file still the original exercise, byte for byte? (False where either cannot be read.)"""
    try:
        return workspace.exercise(puzzle).read_bytes() == pristine_stub(puzzle)
    except OSError:
        return False


def reset_exercise(workspace: Workspace, puzzle: Puzzle) -> Path | None:
    """Restore the stub; returns the backup of the learner's version (None if there was none)."""
    target = workspace.exercise(puzzle)
    original = pristine_stub(puzzle)
    backup = back_up(workspace, target) if target.exists() else None
    target.write_bytes(original)
    return backup


def reference_solution(puzzle: Puzzle) -> Path:
    return puzzle.solution_path


def install_solution(workspace: Workspace, puzzle: Puzzle) -> Path:
    """Put the reference solution next to the learner's work once they solved it."""
    source = reference_solution(puzzle)
    target = workspace.solutions / puzzle.file
    workspace.solutions.mkdir(exist_ok=True)
    if not target.exists() or not filecmp.cmp(source, target, shallow=False):
        if source.resolve() != target.resolve():
            shutil.copyfile(source, target)
    return target
