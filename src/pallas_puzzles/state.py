"""Saving and loading the learner's progress file (`progress` owns what it means).

Written atomically (temp file + rename) so a crash never leaves half a file;
a corrupt file is set aside under a name not yet taken, with a warning, and
progress starts afresh.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

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


def _free_name(path: Path) -> Path:
    """state.corrupt.json, then state.corrupt-2.json, ...: never overwrite an earlier one."""
    candidate = path.with_suffix(".corrupt.json")
    counter = 2
    while candidate.exists():
        candidate = path.with_name(f"{path.stem}.corrupt-{counter}.json")
        counter += 1
    return candidate


def load_state(workspace: Workspace, course: Course) -> tuple[State, str | None]:
    """The saved state, or a fresh one; the second value is a warning to show, if any."""
    path = workspace.state_file
    if not path.exists():
        return fresh_state(course), None
    try:
        return _parse(path.read_text(encoding="utf-8"), course), None
    except (ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        reason = exc.__class__.__name__
    aside = _free_name(path)
    try:
        os.replace(path, aside)
    except OSError as exc:
        return fresh_state(course), (
            f"Your progress file {path} was unreadable ({reason}) and could not be moved aside "
            f"({exc.strerror}); progress starts afresh for now. Your exercise files are untouched."
        )
    return fresh_state(course), (
        f"Your progress file was unreadable ({reason}); it was moved to {aside.name} and progress "
        f"starts afresh. Your exercise files are untouched."
    )


def save_state(workspace: Workspace, state: State) -> None:
    """Write the state atomically; raises OSError when the workspace cannot be written."""
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
