"""Watch mode: the loop driven by injected events, the file filter, and real watchdog saves."""

from __future__ import annotations

import io
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console
from watchdog.events import (
    DirModifiedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileModifiedEvent,
    FileMovedEvent,
)

from pallas_puzzles.metadata import load_course
from pallas_puzzles.results import CheckResult
from pallas_puzzles.state import load_state
from pallas_puzzles.watch import Event, PuzzleFileHandler, WatchLoop, key_reader, start_observer
from pallas_puzzles.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
COURSE = load_course()


class FakeChecker:
    """Passes a file exactly when it equals the reference solution."""

    def __init__(self, on_call=None):
        self.calls: list[int] = []
        self.on_call = on_call

    def __call__(self, puzzle, path: Path) -> CheckResult:
        self.calls.append(puzzle.number)
        passed = path.read_text() == (REPO / "solutions" / puzzle.file).read_text()
        if self.on_call:
            self.on_call(len(self.calls))
        return CheckResult(number=puzzle.number, name=puzzle.name, file=str(path), backend="interpret", passed=passed)


def make_loop(workspace: Path, events: queue.Queue, checker: FakeChecker) -> tuple[WatchLoop, io.StringIO]:
    ws = Workspace(workspace)
    state, _ = load_state(ws, COURSE)
    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None)
    return WatchLoop(console, ws, COURSE, state, checker, events, keys=True), out


def solve(workspace: Path, file: str) -> None:
    shutil.copyfile(REPO / "solutions" / file, workspace / "exercises" / file)


def run_with(workspace: Path, events: list[Event], checker: FakeChecker | None = None):
    q: queue.Queue[Event] = queue.Queue()
    for event in events + [Event("quit")]:
        q.put(event)
    checker = checker or FakeChecker()
    loop, out = make_loop(workspace, q, checker)
    assert loop.run() == 0
    return loop, checker, out.getvalue()


def test_saving_a_correct_solution_advances_to_the_next_puzzle(workspace):
    solve(workspace, "01_constant_add.py")
    loop, checker, out = run_with(workspace, [Event("save", "01_constant_add.py")])
    # The first check already passes (file solved before start), so it advances at once.
    assert checker.calls[:2] == [1, 2]
    assert loop.state.current == 2 and 1 in loop.state.solved
    assert (workspace / "solutions" / "01_constant_add.py").read_text() == (REPO / "solutions" / "01_constant_add.py").read_text()
    assert "solved!" in out
    saved, _ = load_state(Workspace(workspace), COURSE)
    assert saved.current == 2 and saved.solved == {1}


def test_a_save_is_checked_and_a_fix_moves_on(workspace):
    def fix_after_first_check(call: int) -> None:
        if call == 1:
            solve(workspace, "01_constant_add.py")

    checker = FakeChecker(on_call=fix_after_first_check)
    loop, checker, _ = run_with(workspace, [Event("save", "01_constant_add.py")], checker)
    assert checker.calls == [1, 1, 2]
    assert loop.state.current == 2


def test_saving_another_puzzle_makes_it_current(workspace):
    loop, checker, out = run_with(workspace, [Event("save", "03_outer_add.py")])
    assert checker.calls == [1, 3]
    assert loop.state.current == 3
    assert "Puzzle 3" in out


def test_unknown_files_are_ignored(workspace):
    _, checker, _ = run_with(workspace, [Event("save", "notes.txt")])
    assert checker.calls == [1]


def test_a_burst_of_saves_is_checked_once(workspace):
    _, checker, _ = run_with(workspace, [Event("save", "02_constant_add_blocked.py")] * 5)
    assert checker.calls == [1, 2]


def test_debounce_waits_200ms_of_quiet_unless_the_write_is_known_to_be_finished(workspace):
    q: queue.Queue[Event] = queue.Queue()
    loop, _ = make_loop(workspace, q, FakeChecker())
    start = time.monotonic()
    assert loop._settle(Event("save", "01_constant_add.py")) == "01_constant_add.py"
    assert time.monotonic() - start >= 0.19
    start = time.monotonic()
    loop._settle(Event("save", "01_constant_add.py", complete=True))
    assert time.monotonic() - start < 0.15
    # A burst straddling the window collapses into the last file saved.
    q.put(Event("save", "01_constant_add.py"))
    q.put(Event("save", "02_constant_add_blocked.py", complete=True))
    assert loop._settle(Event("save", "01_constant_add.py")) == "02_constant_add_blocked.py"
    assert q.empty()


def test_a_save_made_while_a_check_runs_is_not_lost(workspace):
    q: queue.Queue[Event] = queue.Queue()

    def save_during_first_check(call: int) -> None:
        if call == 1:
            q.put(Event("save", "02_constant_add_blocked.py"))
            q.put(Event("quit"))

    checker = FakeChecker(on_call=save_during_first_check)
    loop, _ = make_loop(workspace, q, checker)
    loop.run()
    assert checker.calls == [1, 2]


def test_keys_hint_list_next_rerun_quit(workspace):
    loop, checker, out = run_with(workspace, [Event("key", "h"), Event("key", "h"), Event("key", "l"),
                                              Event("key", "r"), Event("key", "n"), Event("key", "q"),
                                              Event("key", "r")])
    assert loop.state.hints_seen[1] == 2
    assert "Hint 2/" in out and "Progress" in out
    assert checker.calls == [1, 1, 2]  # start, r, n; nothing after q
    assert loop.state.current == 2


def test_reset_key_asks_and_backs_up(workspace):
    exercise = workspace / "exercises" / "01_constant_add.py"
    stub = exercise.read_text()
    exercise.write_text("# attempt\n")
    loop, _, out = run_with(workspace, [Event("key", "x"), Event("key", "n")])
    assert exercise.read_text() == "# attempt\n" and "Nothing was changed" in out
    loop, _, out = run_with(workspace, [Event("key", "x"), Event("key", "y")])
    assert exercise.read_text() == stub
    backups = list((workspace / ".pallas_puzzles" / "backups").iterdir())
    assert [b.read_text() for b in backups] == ["# attempt\n"]


def test_the_file_filter_knows_puzzle_files_only(tmp_path):
    q: queue.Queue[Event] = queue.Queue()
    handler = PuzzleFileHandler({"01_constant_add.py"}, q)
    target = str(tmp_path / "01_constant_add.py")
    handler.dispatch(FileModifiedEvent(target))
    handler.dispatch(FileClosedEvent(target))
    handler.dispatch(FileCreatedEvent(target))
    handler.dispatch(FileMovedEvent(str(tmp_path / "01_constant_add.py___jb_tmp___"), target))
    handler.dispatch(FileModifiedEvent(str(tmp_path / ".01_constant_add.py.swp")))
    handler.dispatch(FileCreatedEvent(str(tmp_path / "4913")))
    handler.dispatch(DirModifiedEvent(str(tmp_path)))
    seen = []
    while not q.empty():
        event = q.get()
        seen.append((event.value, event.complete))
    # Closing after a write and a rename onto the file mark a finished save.
    assert seen == [("01_constant_add.py", False), ("01_constant_add.py", True),
                    ("01_constant_add.py", False), ("01_constant_add.py", True)]


def _in_place(folder: Path, name: str) -> None:
    with open(folder / name, "a") as handle:
        handle.write("# saved in place\n")


def _vim_style(folder: Path, name: str) -> None:
    """vim's default: rename the original to a backup, write a new file, delete the backup."""
    text = (folder / name).read_text()
    os.rename(folder / name, folder / (name + "~"))
    (folder / name).write_text(text + "# saved by vim\n")
    os.unlink(folder / (name + "~"))


def _temp_then_rename(folder: Path, name: str) -> None:
    """JetBrains and many others: write a temp file, then rename it over the original."""
    temp = folder / (name + "___jb_tmp___")
    temp.write_text((folder / name).read_text() + "# saved atomically\n")
    os.replace(temp, folder / name)


@pytest.mark.parametrize("poll", [False, True], ids=["native", "polling"])
@pytest.mark.parametrize("save", [_in_place, _vim_style, _temp_then_rename], ids=["in-place", "vim", "temp+rename"])
def test_real_watchdog_sees_each_save_style(tmp_path, save, poll):
    name = "01_constant_add.py"
    (tmp_path / name).write_text("# stub\n")
    q: queue.Queue[Event] = queue.Queue()
    observer, how = start_observer(tmp_path, PuzzleFileHandler({name}, q), poll=poll)
    try:
        time.sleep(0.3)
        save(tmp_path, name)
        event = q.get(timeout=5)
        assert (event.kind, event.value) == ("save", name)
    finally:
        observer.stop()
        observer.join(timeout=2)
    assert ("polling" in how) == poll


def test_key_reader_restores_the_terminal(monkeypatch):
    import pty
    import termios

    leader, follower = pty.openpty()
    with os.fdopen(follower, "r") as fake_tty:
        monkeypatch.setattr(sys, "stdin", fake_tty)
        before = termios.tcgetattr(follower)
        q: queue.Queue[Event] = queue.Queue()
        with key_reader(q) as keys:
            assert keys
            assert termios.tcgetattr(follower) != before  # cbreak: no Enter needed
            os.write(leader, b"h")
            assert q.get(timeout=2) == Event("key", "h")
        assert termios.tcgetattr(follower) == before
    os.close(leader)


def test_a_real_save_in_watch_mode_advances_to_puzzle_2(workspace):
    """End to end: the real command, the real worker, a vim-style save of a correct file."""
    process = subprocess.Popen(
        [sys.executable, "-m", "pallas_puzzles", "watch", "--backend", "interpret"],
        cwd=workspace, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, env={**os.environ, "COLUMNS": "120"},
    )
    lines: list[str] = []
    seen = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 120
        while not any("Checking on" in x or "never written" in x for x in lines) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert any("never written" in x for x in lines), "".join(lines)
        time.sleep(0.5)
        exercise = workspace / "exercises" / "01_constant_add.py"
        os.rename(exercise, str(exercise) + "~")
        shutil.copyfile(REPO / "solutions" / "01_constant_add.py", exercise)
        os.unlink(str(exercise) + "~")
        saved_at = time.monotonic()
        while time.monotonic() < saved_at + 60 and not seen.is_set():
            if any("solved!" in x for x in lines) and any("Puzzle 2: Constant add, blocked" in x for x in lines):
                seen.set()
            time.sleep(0.05)
        assert seen.is_set(), "".join(lines)
        assert process.stdin is not None
        process.stdin.write("q\n")
        process.stdin.flush()
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
    state, _ = load_state(Workspace(workspace), COURSE)
    assert state.current == 2 and 1 in state.solved
