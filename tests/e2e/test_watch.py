"""Watch mode through the real command: a real save advances, a save stops a never-ending kernel.

(The loop itself, driven by injected events with a fake checker, is tested in tests/unit/test_watch_loop.py.)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import COURSE, as_in_a_background_run, ctrl_c_as_in_a_terminal, hungry

from pallas_puzzles.watch import (
    GOODBYE,
)
from pallas_puzzles.workspace.folder import Workspace, init_workspace
from pallas_puzzles.workspace.state import State, load_state, save_state

REPO = Path(__file__).resolve().parents[2]
FIRST = "01_constant_add.py"
SOLUTION_1 = (REPO / "solutions" / FIRST).read_text()
@pytest.fixture()
def workspace(tmp_path: Path) -> Iterator[Path]:
    """A fresh workspace, made without the CLI so these tests depend only on watch mode's own contracts,
    of a learner who has read the tour and is on puzzle 1."""
    save_state(init_workspace(tmp_path / "ws", COURSE), State(current="constant_add", course=COURSE.name))
    with contextlib.chdir(tmp_path / "ws"):
        yield tmp_path / "ws"


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


# -- the loop, with injected events -------------------------------------------


# -- checks run in the background --------------------------------------------


# -- sources: the file filter, real watchdog saves, the keyboard --------------


# -- the real command ----------------------------------------------------------


class WatchProcess:
    """`python -m pallas_puzzles watch --backend interpret`, in line mode (stdin is a pipe)."""

    def __init__(self, workspace: Path, env: dict[str, str] | None = None) -> None:
        with as_in_a_background_run(), ctrl_c_as_in_a_terminal():  # the test sends it SIGINT, whoever started the run
            self.process = subprocess.Popen(
                [sys.executable, "-m", "pallas_puzzles", "watch", "--backend", "interpret"],
                cwd=workspace, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True, env={**os.environ, "COLUMNS": "120", **(env or {})},
            )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def wait_for(self, *needles: str, timeout: float) -> bool:
        return wait_for(lambda: all(n in self.text for n in needles), timeout)

    def type(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def _vim_save(target: Path, text: str) -> None:
    os.rename(target, str(target) + "~")
    target.write_text(text)
    os.unlink(str(target) + "~")


@pytest.mark.slow
def test_a_real_save_in_watch_mode_advances_to_puzzle_2(workspace: Path) -> None:
    """End to end: the real command, the real worker, a vim-style save of a correct file."""
    watch = WatchProcess(workspace)
    try:
        assert watch.wait_for("You have not started puzzle 1", timeout=120), watch.text
        time.sleep(0.5)
        _vim_save(workspace / "exercises" / FIRST, SOLUTION_1)
        assert watch.wait_for("solved!", "type n and Enter to start it", timeout=60), watch.text
        watch.type("n")  # the pass stays until the learner moves on
        assert watch.wait_for("Puzzle 2: Constant add, blocked", timeout=60), watch.text
        watch.type("q")
        assert watch.process.wait(timeout=60) == 0
        assert watch.text.rstrip().endswith(GOODBYE), watch.text
    finally:
        watch.kill()
    state, _ = load_state(Workspace(workspace), COURSE)
    assert state.current == "constant_add_blocked" and "constant_add" in state.solved


SPIN = ("    spin = jax.lax.while_loop(lambda c: c >= 0.0, lambda c: c + 1.0, 0.0)\n"
        "    z_ref[...] = x_ref[...] + 10.0 + spin * 0.0\n")


@pytest.mark.slow
def test_a_save_stops_a_never_ending_kernel_and_ctrl_c_says_goodbye(workspace: Path) -> None:
    """End to end: a kernel that never ends is cancelled by the next save, long before its time limit."""
    spinning = SOLUTION_1.replace("    z_ref[...] = x_ref[...] + 10.0\n", SPIN)
    assert spinning != SOLUTION_1
    # A time limit far beyond the test's 10 s window: only cancelling the spin can give the verdict in time.
    watch = WatchProcess(workspace, env={"PALLAS_PUZZLES_TIME_LIMIT": "300"})
    try:
        assert watch.wait_for("You have not started puzzle 1", timeout=120), watch.text
        exercise = workspace / "exercises" / FIRST
        exercise.write_text(spinning)
        time.sleep(3)
        assert watch.wait_for("still checking 01_constant_add.py", timeout=10), watch.text
        assert "solved!" not in watch.text
        shutil.copyfile(REPO / "solutions" / FIRST, exercise)
        assert watch.wait_for("solved!", timeout=10), watch.text
        watch.process.send_signal(signal.SIGINT)
        assert watch.process.wait(timeout=60) == 130  # Ctrl-C: the exit code every command gives it
        assert watch.text.rstrip().endswith(GOODBYE), watch.text
    finally:
        watch.kill()


@pytest.mark.slow
def test_watch_stops_a_kernel_over_the_memory_limit_and_carries_on(workspace: Path) -> None:
    watch = WatchProcess(workspace, env={"PALLAS_PUZZLES_MEMORY_LIMIT": "700"})
    try:
        assert watch.wait_for("You have not started puzzle 1", timeout=120), watch.text
        hungry(workspace / "exercises")
        assert watch.wait_for("Your kernel took more than 700 MiB of memory", timeout=120), watch.text
        shutil.copyfile(REPO / "solutions" / FIRST, workspace / "exercises" / FIRST)
        assert watch.wait_for("solved!", timeout=120), watch.text  # a fresh checker took over
        watch.type("q")
        assert watch.process.wait(timeout=60) == 0
    finally:
        watch.kill()


def _two_writes(target: Path, text: str) -> None:
    """An editor that empties the file, closes it, then writes it again: two finished writes, back to back."""
    target.write_text("")
    target.write_text(text)


def _rename_onto(target: Path, text: str) -> None:
    """An atomic save: a temporary file written, then renamed onto the file."""
    temporary = target.with_name(f".{target.name}.tmp")
    temporary.write_text(text)
    os.replace(temporary, target)


@pytest.mark.slow
def test_each_way_an_editor_saves_is_checked_once(workspace: Path) -> None:
    """A save's events arrive as a burst; the burst ends soon after a finished write (close or rename), and a
    second half of the same save must join it, not stop the check it started and start another."""
    watch = WatchProcess(workspace)
    exercise = workspace / "exercises" / FIRST
    try:
        assert watch.wait_for("You have not started puzzle 1", timeout=120), watch.text
        checks = watch.text.count(f"Checking {FIRST}")
        for number, save in enumerate((_two_writes, _rename_onto, _vim_save, _two_writes), start=1):
            time.sleep(0.5)
            save(exercise, SOLUTION_1.replace("+ 10.0", f"+ {10 + number}.0"))  # wrong, and new each time
            assert watch.wait_for(f"(max abs error {number})", timeout=60), watch.text
            time.sleep(0.6)  # time for a second check, if the save's second half started one
            assert watch.text.count(f"Checking {FIRST}") == checks + number, (save.__name__, watch.text)
        assert "the previous check was stopped" not in watch.text, watch.text
        watch.type("q")
        assert watch.process.wait(timeout=60) == 0
    finally:
        watch.kill()
