"""Progress: current puzzle, solved puzzles, hint levels seen.

Written atomically (temp file + rename) so a crash never leaves half a file;
a corrupt file is set aside with a warning and progress starts afresh.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field

from pallas_puzzles.metadata import Course
from pallas_puzzles.workspace import Workspace

STATE_VERSION = 1


@dataclass
class State:
    current: int
    solved: set[int] = field(default_factory=set)
    hints_seen: dict[int, int] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": STATE_VERSION,
                "current": self.current,
                "solved": sorted(self.solved),
                "hints_seen": {str(k): v for k, v in sorted(self.hints_seen.items())},
            },
            indent=2,
        )

    def next_unsolved(self, course: Course, after: int | None = None) -> int | None:
        """The first unsolved counted puzzle after `after` (wrapping round), if any."""
        numbers = [p.number for p in course.counted]
        if after is not None and after in numbers:
            start = numbers.index(after) + 1
            numbers = numbers[start:] + numbers[:start]
        return next((n for n in numbers if n not in self.solved), None)


def fresh_state(course: Course) -> State:
    return State(current=course.counted[0].number)


def _parse(text: str, course: Course) -> State:
    data = json.loads(text)
    numbers = {p.number for p in course.puzzles}
    current = int(data["current"])
    if current not in numbers:
        raise ValueError(f"unknown current puzzle {current}")
    solved = {int(n) for n in data.get("solved", []) if int(n) in numbers}
    hints = {int(k): int(v) for k, v in data.get("hints_seen", {}).items() if int(k) in numbers}
    return State(current=current, solved=solved, hints_seen=hints)


def load_state(workspace: Workspace, course: Course) -> tuple[State, str | None]:
    """The saved state, or a fresh one; the second value is a warning to show, if any."""
    path = workspace.state_file
    if not path.exists():
        return fresh_state(course), None
    try:
        return _parse(path.read_text(encoding="utf-8"), course), None
    except (ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        aside = path.with_suffix(".corrupt.json")
        os.replace(path, aside)
        warning = (
            f"Your progress file was unreadable ({exc.__class__.__name__}); it was moved to "
            f"{aside.name} and progress starts afresh. Your exercise files are untouched."
        )
        return fresh_state(course), warning


def save_state(workspace: Workspace, state: State) -> None:
    workspace.meta.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=workspace.meta, prefix=".state-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(state.to_json())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, workspace.state_file)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
