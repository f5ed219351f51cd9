"""The one owner of the learner's progress: current puzzle, solved puzzles, hints seen.

Commands and watch mode both go through `Progress`; nothing else decides what
counts as solved, which puzzle comes next, or how a reset keeps the learner's
work. A workspace that cannot be written (a read-only mount) never stops the
learner: the verdict is still shown and the change is kept for this session,
with one warning that it is not being saved.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pallas_puzzles.course.model import Course, Puzzle
from pallas_puzzles.errors import UserError
from pallas_puzzles.workspace.folder import Workspace, install_solution, reset_exercise, untouched
from pallas_puzzles.workspace.state import State, fresh_state, load_state, save_state

Warn = Callable[[str], None]
T = TypeVar("T")


@dataclass(frozen=True)
class PassOutcome:
    """What passing a puzzle led to."""

    solution: Path | None  # the reference solution put next to the learner's work
    upcoming: Puzzle | None  # where to go next; None when the course is finished


@dataclass(frozen=True)
class HintReveal:
    level: int  # how many hints to show; 0 when the puzzle has none
    exhausted: bool  # every hint had already been shown


class Progress:
    def __init__(self, workspace: Workspace | None, course: Course, state: State, warn: Warn) -> None:
        self.workspace = workspace
        self.course = course
        self.state = state
        self.warn = warn  # where a warning goes (watch mode shows it on its next screen)
        self._unsaved_warned = False

    @classmethod
    def open(cls, workspace: Workspace, course: Course, warn: Warn) -> Progress:
        state, warning = load_state(workspace, course)
        progress = cls(workspace, course, state, warn)
        if warning:
            warn(warning)
            progress._save()
        return progress

    @classmethod
    def detached(cls, course: Course, warn: Warn) -> Progress:
        """Progress outside any workspace (a notebook; `list`, `hint` and `solution` in any folder):
        the same rules, kept in memory for this session only."""
        return cls(None, course, fresh_state(course), warn)

    # -- reading --------------------------------------------------------------

    @property
    def current(self) -> Puzzle:
        return self.course.find(self.state.current)

    def puzzle(self, key: str | int | None) -> Puzzle:
        """A puzzle by number or name; the current one when no key is given."""
        return self.current if key is None else self.course.find(key)

    def is_solved(self, puzzle: Puzzle) -> bool:
        return puzzle.name in self.state.solved

    @property
    def solved_count(self) -> int:
        return len([p for p in self.course.counted if self.is_solved(p)])

    @property
    def total(self) -> int:
        return len(self.course.counted)

    @functools.cached_property
    def beyond_this_jax(self) -> dict[str, list[Puzzle]]:
        """The counted puzzles this environment's jax cannot run, by the jax they need."""
        from pallas_puzzles.checking.support import beyond_this_jax

        return beyond_this_jax(self.course.counted)

    @property
    def within_reach(self) -> list[Puzzle]:
        """The counted puzzles this environment's jax can run: what progress is counted against."""
        beyond = {p.name for puzzles in self.beyond_this_jax.values() for p in puzzles}
        return [p for p in self.course.counted if p.name not in beyond]

    def hints_seen(self, puzzle: Puzzle) -> int:
        return self.state.hints_seen.get(puzzle.name, 0)

    def exercise(self, puzzle: Puzzle) -> Path:
        """The learner's file; outside a workspace, the course's own stub."""
        if self.workspace is None:
            return puzzle.stub_path
        return self.workspace.exercise(puzzle)

    def missing_message(self, puzzle: Puzzle) -> str:
        return (f"{self.exercise(puzzle)} is missing; `pallas-puzzles reset {puzzle.name}` "
                f"(or x in watch mode) restores the original exercise.")

    def learner_file(self, puzzle: Puzzle) -> Path:
        """The learner's file for a puzzle; one sentence if it is gone."""
        path = self.exercise(puzzle)
        if not path.is_file():
            raise UserError(self.missing_message(puzzle))
        return path

    def next_unsolved(self, after: Puzzle | None = None) -> Puzzle | None:
        """The first unsolved counted puzzle after `after` (wrapping round), if any."""
        counted = list(self.course.counted)
        if after is not None and after in counted:
            start = counted.index(after) + 1
            counted = counted[start:] + counted[:start]
        return next((p for p in counted if p.name not in self.state.solved), None)

    def following(self, puzzle: Puzzle) -> Puzzle:
        """The puzzle after this one in course order, wrapping round (the `n` key)."""
        return self.course.after(puzzle) or self.course.puzzles[0]

    # -- changing -------------------------------------------------------------

    def record_pass(self, puzzle: Puzzle) -> PassOutcome:
        """A check of this puzzle passed: mark it solved and say where to go next.

        The tour is never "solved" (it starts solved); passing it just leads on.
        """
        if puzzle.tour:
            return PassOutcome(solution=None, upcoming=self.course.after(puzzle))
        self.state.solved.add(puzzle.name)
        self._save()
        workspace = self.workspace
        solution = self._write(lambda: install_solution(workspace, puzzle)) if workspace is not None else None
        return PassOutcome(solution=solution, upcoming=self.next_unsolved(after=puzzle))

    def move_to(self, puzzle: Puzzle) -> None:
        self.state.current = puzzle.name
        self._save()

    def reveal_hint(self, puzzle: Puzzle) -> HintReveal:
        """Reveal one more hint level (remembered) and say how many to show."""
        total = len(puzzle.hints)
        seen = self.hints_seen(puzzle)
        if total == 0:
            return HintReveal(0, True)
        if seen >= total:
            return HintReveal(total, True)
        self.state.hints_seen[puzzle.name] = seen + 1
        self._save()
        return HintReveal(seen + 1, False)

    def reveal_hints_to(self, puzzle: Puzzle, level: int) -> int:
        """Hints 1..level (within those there are), remembered as seen; returns how many to show."""
        shown = max(0, min(level, len(puzzle.hints)))
        if shown > self.hints_seen(puzzle):
            self.state.hints_seen[puzzle.name] = shown
            self._save()
        return shown

    def untouched(self, puzzle: Puzzle) -> bool:
        """Is the learner's file still the original exercise (nothing a reset would change)?"""
        return self.workspace is not None and untouched(self.workspace, puzzle)

    def reset(self, puzzle: Puzzle) -> Path | None:
        """Restore the stub; returns the backup of the learner's version (None if there was none).

        Unlike progress, a reset that cannot write is an error: nothing was restored.
        """
        if self.workspace is None:
            raise UserError("Resetting a file needs a workspace: run `pallas-puzzles init DIR` and work inside it.")
        return reset_exercise(self.workspace, puzzle)

    # -- saving ---------------------------------------------------------------

    def _save(self) -> None:
        workspace = self.workspace
        if workspace is not None:
            self._write(lambda: save_state(workspace, self.state))

    def _write(self, action: Callable[[], T]) -> T | None:
        try:
            return action()
        except OSError as exc:
            if not self._unsaved_warned:
                self._unsaved_warned = True
                where = exc.filename or (self.workspace.meta if self.workspace else "")
                self.warn(f"Your progress cannot be saved ({exc.strerror or exc} at {where}); it is kept "
                           f"for this session only. Make the workspace writable to keep it.")
            return None
