"""Saving and loading the learner's progress file (`progress` owns what it means).

Progress names puzzles, never numbers them: a puzzle's number is its position in
the course, and a course may grow in the middle. Written atomically (temp file +
rename) so a crash never leaves half a file; a corrupt file is set aside under a
name not yet taken, with a warning, and progress is rebuilt from what the workspace
shows was solved (`rebuilt_state`) before it starts afresh.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pallas_puzzles.course.model import Course
from pallas_puzzles.workspace.folder import Workspace

STATE_VERSION = 2

# Version 1 files (the first release) stored puzzle numbers. They were positions in the built-in
# course as that release shipped it, which this table keeps, so such a workspace keeps its progress.
V1_NAMES = (
    "tour", "constant_add", "constant_add_blocked", "outer_add", "outer_add_blocked", "fused_outer_mul_relu",
    "fused_outer_mul_relu_backward", "long_sum", "long_softmax", "flash_attention_scalar", "conv2d",
    "batched_matmul", "quantized_matmul", "tiled_transpose", "matmul_grid_k", "fused_layernorm", "prefix_sum",
    "flash_attention", "gather_rows", "vmap_kernel", "bf16_matmul", "fuse_two_calls", "softmax_one_pass",
    "resident_weights", "big_blocks", "dma_copy", "double_buffer", "emit_pipeline", "two_core_sum",
    "grouped_matmul", "paged_gather",
)


@dataclass
class State:
    current: str  # puzzle names throughout
    solved: set[str] = field(default_factory=set)
    hints_seen: dict[str, int] = field(default_factory=dict)
    course: str = ""  # the course these names belong to

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": STATE_VERSION,
                "course": self.course,
                "current": self.current,
                "solved": sorted(self.solved),
                "hints_seen": dict(sorted(self.hints_seen.items())),
            },
            indent=2,
        )


def fresh_state(course: Course) -> State:
    """Where a new learner starts: the course's first puzzle (the guided tour, where it has one)."""
    return State(current=course.puzzles[0].name, course=course.name)


def rebuilt_state(workspace: Workspace, course: Course) -> State:
    """Progress rebuilt from the workspace: each pass put the reference solution in `solutions/`, and the
    stored verdicts (`.pallas_puzzles/results/`) keep the passes of the learner's files. Hints seen are lost;
    the current puzzle is the first unsolved one."""
    from pallas_puzzles.checking.cache import stored_passes

    solved = {p.name for p in course.counted if (workspace.solutions / p.file).is_file()}
    solved |= {name for name in stored_passes(workspace) if course.has(name) and not course.find(name).tour}
    state = fresh_state(course)
    if solved:
        state.solved = solved
        state.current = next((p.name for p in course.counted if p.name not in solved), course.counted[-1].name)
    return state


def _v1_name(number: Any) -> str:
    index = int(number)
    if not 0 <= index < len(V1_NAMES):
        raise ValueError(f"unknown puzzle number {number}")
    return V1_NAMES[index]


def _parse(text: str, course: Course) -> State:
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if data.get("version", 1) == 1:  # numbers: translate them through the first release's course
        current = _v1_name(data["current"])
        solved = [_v1_name(n) for n in data.get("solved", []) if 0 <= int(n) < len(V1_NAMES)]
        hints = {_v1_name(k): int(v) for k, v in data.get("hints_seen", {}).items() if 0 <= int(k) < len(V1_NAMES)}
    elif data["version"] == STATE_VERSION:
        current, solved = str(data["current"]), [str(n) for n in data.get("solved", [])]
        hints = {str(k): int(v) for k, v in data.get("hints_seen", {}).items()}
    else:
        raise ValueError(f"unknown state version {data['version']}")
    # Names this course does not have (a puzzle since removed) are dropped, not fatal.
    if not course.has(current):
        current = next((p.name for p in course.counted if p.name not in solved), course.counted[0].name)
    return State(current=current, solved={n for n in solved if course.has(n)},
                 hints_seen={k: v for k, v in hints.items() if course.has(k)}, course=course.name)


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
    state = rebuilt_state(workspace, course)
    if state.solved:
        now = course.find(state.current)
        found = (f"progress was rebuilt from solutions/ and your stored verdicts: {len(state.solved)} "
                 f"puzzle{'s' if len(state.solved) != 1 else ''} solved, now on puzzle {now.number} ({now.name})")
    else:
        found = "nothing in solutions/ or your stored verdicts shows a solved puzzle, so progress starts afresh"
    aside = _free_name(path)
    try:
        os.replace(path, aside)
    except OSError as exc:
        return state, (f"Your progress file {path} was unreadable ({reason}) and could not be moved aside "
                       f"({exc.strerror}); {found}. Your exercise files are untouched.")
    return state, (f"Your progress file was unreadable ({reason}); it was moved to {aside.name} and {found}. "
                   f"Your exercise files are untouched.")


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
