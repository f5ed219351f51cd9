"""Watch mode: the loop driven by injected events, the file filter, real watchdog saves, the real command.

Loop tests run `WatchLoop` in a thread with a `FakeChecker` and feed it events
one step at a time, waiting for `loop.idle` (nothing in flight) between steps,
so they do not depend on how fast this machine is.
"""

from __future__ import annotations

import contextlib
import io
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from helpers import COURSE, read_only
from rich.console import Console
from watchdog.events import (
    DirModifiedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileModifiedEvent,
    FileMovedEvent,
)

from pallas_puzzles.backends import GPU, Backend
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.errors import UserError
from pallas_puzzles.results import CheckResult
from pallas_puzzles.watch import (
    GOODBYE,
    Debouncer,
    Event,
    KeyEvent,
    PuzzleFileHandler,
    QuitEvent,
    SaveEvent,
    WatchLoop,
    key_reader,
    start_observer,
)
from pallas_puzzles.worker.client import CheckCancelled
from pallas_puzzles.workspace.folder import Workspace, init_workspace
from pallas_puzzles.workspace.progress import Progress
from pallas_puzzles.workspace.state import State, load_state, save_state

REPO = Path(__file__).resolve().parents[2]
FIRST = "01_constant_add.py"
SOLUTION_1 = (REPO / "solutions" / FIRST).read_text()
NOTICE = re.compile(r"still checking 01_constant_add\.py… \d+ s — save again or press r to restart, q to quit")


@pytest.fixture()
def workspace(tmp_path: Path) -> Iterator[Path]:
    """A fresh workspace, made without the CLI so these tests depend only on watch mode's own contracts,
    of a learner who has read the tour and is on puzzle 1."""
    save_state(init_workspace(tmp_path / "ws", COURSE), State(current="constant_add", course=COURSE.name))
    with contextlib.chdir(tmp_path / "ws"):
        yield tmp_path / "ws"


class FakeChecker:
    """Passes a file exactly when it equals the reference solution.

    Like the real Worker, `cancel()` ends a running check at once with
    CheckCancelled and does nothing when no check runs. `delays` gives each
    call's duration in seconds (the last one repeats).
    """

    def __init__(self, delays: Sequence[float] = (0.0,), on_call: Callable[[int], None] | None = None,
                 honour_cancel: bool = True, error: Exception | None = None) -> None:
        self.delays = delays
        self.on_call = on_call
        self.honour_cancel = honour_cancel
        self.error = error
        self.calls: list[int] = []  # puzzle number of each check, in order
        self.texts: list[str] = []  # the file each check saw
        self.cancelled: list[int] = []  # indexes into `calls` of checks that were cancelled
        self.verdicts: list[int] = []  # indexes of checks that returned a verdict
        self.prepared: list[int] = []  # puzzle number of each puzzle the loop said it would check soon
        self._running: int | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def check(self, puzzle: Puzzle, file: Path) -> CheckResult:
        with self._lock:
            index = len(self.calls)
            self.calls.append(puzzle.number)
            self._stop.clear()
            self._running = index
        try:
            text = file.read_text()
            self.texts.append(text)
            if self.on_call:
                self.on_call(len(self.calls))
            delay = self.delays[min(index, len(self.delays) - 1)]
            if not self.honour_cancel:
                time.sleep(delay)
            elif self._stop.wait(delay):
                raise CheckCancelled()
            if self.error is not None:
                raise self.error
            passed = text == (REPO / "solutions" / puzzle.file).read_text()
            self.verdicts.append(index)
            return CheckResult(number=puzzle.number, name=puzzle.name, file=str(file),
                               backend="interpret", passed=passed)
        finally:
            with self._lock:
                self._running = None

    def prepare(self, puzzle: Puzzle) -> None:
        self.prepared.append(puzzle.number)

    def cancel(self) -> None:
        with self._lock:
            if self._running is not None and not self._stop.is_set():  # a killed check is dead already
                self.cancelled.append(self._running)
                self._stop.set()


class Session:
    """A WatchLoop running in a thread, fed events by the test."""

    def __init__(self, workspace: Path, checker: FakeChecker, events: queue.Queue[Event] | None = None,
                 terminal: bool = False, backend: Backend | None = None) -> None:
        self.checker = checker
        self.events: queue.Queue[Event] = events if events is not None else queue.Queue()
        self.out = io.StringIO()
        console = Console(file=self.out, width=120, color_system=None, force_terminal=terminal)
        self.warnings: list[str] = []
        self.progress = Progress.open(Workspace(workspace), COURSE, warn=self.warnings.append)
        self.loop = WatchLoop(console, self.progress, checker, self.events, keys=True, backend=backend)
        self.exit_codes: list[int] = []
        self.thread = threading.Thread(target=lambda: self.exit_codes.append(self.loop.run()), daemon=True)

    @property
    def text(self) -> str:
        return self.out.getvalue()

    def start(self, settle: bool = True) -> Session:
        self.thread.start()
        if settle:
            assert self.loop.idle.wait(20), self.text
        return self

    def send(self, *events: Event) -> None:
        """Put events and wait until the loop has handled them and everything they started."""
        self.loop.idle.clear()
        for event in events:
            self.events.put(event)
        assert self.loop.idle.wait(20), self.text

    def quit(self, *events: Event) -> str:
        for event in events or (QuitEvent(),):
            self.events.put(event)
        self.thread.join(10)
        assert not self.thread.is_alive(), "the loop did not end:\n" + self.text
        assert self.exit_codes == [0]
        return self.text


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def solve(workspace: Path, file: str) -> None:
    shutil.copyfile(REPO / "solutions" / file, workspace / "exercises" / file)


# -- the loop, with injected events -------------------------------------------


def test_saving_a_correct_solution_advances_to_the_next_puzzle(workspace: Path) -> None:
    solve(workspace, FIRST)
    session = Session(workspace, FakeChecker()).start()
    # The first check already passes (file solved before start): progress moves on at once, so a
    # restart resumes at puzzle 2, but the pass stays on screen: puzzle 2 is not checked yet.
    assert session.checker.calls == [1]
    assert session.progress.current.number == 2
    assert (workspace / "solutions" / FIRST).read_text() == SOLUTION_1
    assert "solved!" in session.text and "press n to start it" in session.text
    assert session.checker.prepared == [2], "the next puzzle's checker warms up while the pass is read"
    saved, _ = load_state(Workspace(workspace), COURSE)
    assert saved.current == "constant_add_blocked" and saved.solved == {"constant_add"}
    session.send(KeyEvent("n"))  # the learner is done looking
    assert session.checker.calls == [1, 2]
    assert "Puzzle 2: Constant add, blocked" in session.quit()


def test_after_a_pass_any_save_or_key_leaves_the_success_screen(workspace: Path) -> None:
    solve(workspace, FIRST)
    by_save = Session(workspace, FakeChecker()).start()
    by_save.send(SaveEvent("02_constant_add_blocked.py"))
    assert by_save.checker.calls == [1, 2]
    by_save.quit()
    by_hint = Session(workspace, FakeChecker()).start()  # the workspace now resumes at puzzle 2
    solve(workspace, "02_constant_add_blocked.py")
    by_hint.send(SaveEvent("02_constant_add_blocked.py"))
    assert by_hint.checker.calls == [2, 2] and by_hint.progress.current.number == 3
    by_hint.send(KeyEvent("l"))  # the list is shown over the pass, which stays
    assert by_hint.checker.calls == [2, 2]
    by_hint.send(KeyEvent("h"))  # a hint for the next puzzle: its check starts, then the hint
    assert by_hint.checker.calls == [2, 2, 3]
    assert "Hint 1/" in by_hint.quit().split("Puzzle 3: Outer add")[-1]


def test_a_save_is_checked_and_a_fix_moves_on(workspace: Path) -> None:
    session = Session(workspace, FakeChecker()).start()
    solve(workspace, FIRST)
    session.send(SaveEvent(FIRST))
    assert session.checker.calls == [1, 1]
    assert session.progress.current.number == 2
    session.send(KeyEvent("n"))
    assert session.checker.calls == [1, 1, 2]
    session.quit()


def test_saving_another_puzzle_makes_it_current(workspace: Path) -> None:
    session = Session(workspace, FakeChecker()).start()
    session.send(SaveEvent("03_outer_add.py"))
    assert session.checker.calls == [1, 3]
    assert session.progress.current.number == 3
    assert "Puzzle 3" in session.quit()


def test_unknown_files_are_ignored(workspace: Path) -> None:
    session = Session(workspace, FakeChecker()).start()
    session.send(SaveEvent("notes.txt"))
    session.quit()
    assert session.checker.calls == [1]


def test_a_burst_of_saves_is_checked_once(workspace: Path) -> None:
    session = Session(workspace, FakeChecker()).start()
    session.send(*[SaveEvent("02_constant_add_blocked.py")] * 5)
    session.quit()
    assert session.checker.calls == [1, 2]


def test_debounce_waits_200ms_of_quiet_unless_the_write_is_known_to_be_finished() -> None:
    debouncer = Debouncer()
    debouncer.add(SaveEvent(FIRST), now=10.0)
    assert debouncer.take_due(10.199) is None
    assert debouncer.take_due(10.2) == FIRST
    assert debouncer.deadline is None and debouncer.take_due(99.0) is None  # taken once
    debouncer.add(SaveEvent(FIRST, complete=True), now=20.0)
    assert debouncer.take_due(20.009) is None
    assert debouncer.take_due(20.01) == FIRST
    # A burst collapses into the last file saved; a plain event after a finishing one waits again.
    debouncer.add(SaveEvent(FIRST), now=30.0)
    debouncer.add(SaveEvent("02_constant_add_blocked.py", complete=True), now=30.1)
    debouncer.add(SaveEvent("02_constant_add_blocked.py"), now=30.12)
    assert debouncer.take_due(30.2) is None
    assert debouncer.take_due(30.32) == "02_constant_add_blocked.py"


class FakeClock:
    """The loop's clock, moved by the test; counts reads so the test knows the loop looked."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now

    def loop_looked(self, times: int = 3) -> None:
        seen = self.reads
        assert wait_for(lambda: self.reads >= seen + times)


@pytest.mark.parametrize("complete, quiet", [(True, 0.01), (False, 0.2)], ids=["finished-write", "plain"])
def test_the_loop_checks_a_save_once_its_quiet_time_has_passed(workspace: Path, complete: bool, quiet: float) -> None:
    # A fake clock: the loop's debounce is proven exactly, however loaded the machine is.
    checker = FakeChecker()
    session = Session(workspace, checker)
    clock = FakeClock()
    session.loop.clock = clock
    session.start()
    session.events.put(SaveEvent(FIRST, complete=complete))
    assert wait_for(lambda: not session.loop.idle.is_set())  # the loop took the save ...
    clock.loop_looked()  # ... and noted its time
    clock.now += quiet - 0.005
    clock.loop_looked()
    assert checker.calls == [1]  # still settling
    clock.now += 0.005
    assert wait_for(lambda: checker.calls == [1, 1])
    session.quit()


def test_keys_hint_list_next_rerun_quit(workspace: Path) -> None:
    session = Session(workspace, FakeChecker()).start()
    for key in "hhlrn":
        session.send(KeyEvent(key))
    out = session.quit(KeyEvent("q"), KeyEvent("r"))
    assert session.progress.state.hints_seen["constant_add"] == 2
    assert "Hint 2/" in out and "Progress" in out
    assert session.checker.calls == [1, 1, 2]  # start, r, n; nothing after q
    assert session.progress.current.number == 2


def test_reset_key_asks_and_backs_up(workspace: Path) -> None:
    exercise = workspace / "exercises" / FIRST
    stub = exercise.read_text()
    exercise.write_text("# attempt\n")
    session = Session(workspace, FakeChecker()).start()
    session.send(KeyEvent("x"))
    session.send(KeyEvent("n"))
    assert exercise.read_text() == "# attempt\n" and "Nothing was changed" in session.text
    session.send(KeyEvent("x"))
    session.send(KeyEvent("y"))
    session.quit()
    assert exercise.read_text() == stub
    backups = list((workspace / ".pallas_puzzles" / "backups").iterdir())
    assert [b.read_text() for b in backups] == ["# attempt\n"]
    assert session.checker.texts[-1] == stub  # the restored stub was checked


def test_reset_key_on_the_untouched_stub_asks_nothing(workspace: Path) -> None:
    """x on a file that is still the original exercise: said so, no question, no backup, no second check."""
    session = Session(workspace, FakeChecker()).start()
    session.send(KeyEvent("x"))
    session.send(KeyEvent("y"))  # not an answer: there was no question
    session.quit()
    said = " ".join(session.text.split())
    assert "already the original exercise" in said and "(y/n)" not in said
    assert not list((workspace / ".pallas_puzzles").glob("backups/*"))
    assert session.checker.calls == [1]


def test_a_puzzle_the_backend_cannot_run_gets_one_sentence_and_the_offer_to_skip(workspace: Path) -> None:
    """`watch --backend gpu` on a TPU-only puzzle: nothing is run, the learner is told why and how to move on."""
    tpu_only = next(p for p in COURSE.counted if not p.supports(GPU))
    Progress.open(Workspace(workspace), COURSE, warn=lambda message: None).move_to(tpu_only)
    session = Session(workspace, FakeChecker(), backend=GPU).start()
    assert session.checker.calls == []
    said = " ".join(session.text.split())
    assert said.count("does not run") == 1 and "runs on: interpret, tpu" in said
    assert "Press n to skip to the next puzzle" in said
    session.send(KeyEvent("n"))
    following = COURSE.after(tpu_only)
    assert session.progress.current == following
    assert session.checker.calls == ([following.number] if following.supports(GPU) else [])
    session.quit()


def test_a_missing_file_gets_one_warning_and_watch_keeps_running(workspace: Path) -> None:
    (workspace / "exercises" / FIRST).unlink()
    session = Session(workspace, FakeChecker()).start()
    assert session.checker.calls == []
    assert session.text.count("is missing") == 1 and "reset constant_add" in session.text
    session.send(KeyEvent("l"))
    assert "Progress" in session.text
    session.send(KeyEvent("x"))
    session.send(KeyEvent("y"))  # x restores the missing file
    session.quit()
    assert session.checker.calls == [1]


def test_a_checker_error_is_one_warning_and_watch_keeps_running(workspace: Path) -> None:
    checker = FakeChecker(error=UserError("The checker process died while starting JAX."))
    session = Session(workspace, checker).start()
    assert "warning: The checker process died while starting JAX." in session.text
    session.send(KeyEvent("r"))
    session.quit()
    assert checker.calls == [1, 1]


# -- checks run in the background --------------------------------------------


def test_keys_answer_while_a_check_runs(workspace: Path) -> None:
    checker = FakeChecker(delays=[60])
    session = Session(workspace, checker).start(settle=False)
    assert wait_for(lambda: checker.calls == [1])
    session.events.put(KeyEvent("h"))
    assert wait_for(lambda: "Hint 1/" in session.text), session.text
    session.events.put(KeyEvent("l"))
    assert wait_for(lambda: "Progress" in session.text), session.text
    assert checker.verdicts == [] and checker.cancelled == []  # the check is still running
    session.quit()


def test_a_save_during_a_check_cancels_it_and_checks_the_new_file(workspace: Path) -> None:
    checker = FakeChecker(delays=[60, 0])
    session = Session(workspace, checker).start(settle=False)
    assert wait_for(lambda: checker.calls == [1])
    solve(workspace, FIRST)
    session.send(SaveEvent(FIRST, complete=True))
    assert checker.cancelled == [0]
    assert checker.calls == [1, 1] and checker.texts[1] == SOLUTION_1
    assert "the previous check was stopped" in session.text
    assert "solved!" in session.text and session.progress.current.number == 2
    session.quit()


@pytest.mark.parametrize("key, calls, current", [("r", [1, 1], 1), ("n", [1, 2], 2)])
def test_r_and_n_during_a_check_cancel_it(workspace: Path, key: str, calls: list[int], current: int) -> None:
    checker = FakeChecker(delays=[60, 0])
    session = Session(workspace, checker).start(settle=False)
    assert wait_for(lambda: checker.calls == [1])
    session.send(KeyEvent(key))
    assert checker.cancelled == [0] and checker.calls == calls
    assert session.progress.current.number == current
    session.quit()


def test_x_during_a_check_cancels_it_then_asks(workspace: Path) -> None:
    (workspace / "exercises" / FIRST).write_text("# attempt\n")  # something a reset would change
    checker = FakeChecker(delays=[60, 0])
    session = Session(workspace, checker).start(settle=False)
    assert wait_for(lambda: checker.calls == [1])
    session.send(KeyEvent("x"))
    assert checker.cancelled == [0] and "to the original stub?" in session.text
    session.send(KeyEvent("n"))  # nothing reset: the stopped check runs again
    session.quit()
    assert checker.calls == [1, 1] and checker.verdicts == [1]


def test_q_during_a_check_quits_at_once(workspace: Path) -> None:
    checker = FakeChecker(delays=[60])
    session = Session(workspace, checker).start(settle=False)
    assert wait_for(lambda: checker.calls == [1])
    started = time.monotonic()
    out = session.quit(KeyEvent("q"))  # joins with a 10 s limit; the check would take 60 s
    assert time.monotonic() - started < 10
    assert checker.cancelled == [0]
    assert out.rstrip().endswith(GOODBYE)


def test_the_verdict_of_a_superseded_check_is_never_shown(workspace: Path) -> None:
    # This checker ignores cancel(): the stale check still returns its (failing) verdict.
    checker = FakeChecker(delays=[1.0, 0], honour_cancel=False)
    session = Session(workspace, checker).start(settle=False)
    assert wait_for(lambda: checker.calls == [1])
    solve(workspace, FIRST)
    session.send(SaveEvent(FIRST, complete=True))
    session.quit()
    assert checker.verdicts[:2] == [0, 1]  # both checks ended with a verdict ...
    assert "✗ Puzzle 1" not in session.text  # ... but only the current one was shown
    assert "solved!" in session.text


@pytest.mark.parametrize("terminal", [False, True], ids=["plain", "tty"])
def test_a_slow_check_says_how_long_it_has_run(workspace: Path, terminal: bool) -> None:
    checker = FakeChecker(delays=[3.5])
    session = Session(workspace, checker, terminal=terminal).start()
    out = session.quit()
    assert NOTICE.search(out), out
    if not terminal:  # plain lines: one at 1.5 s, the next not before 6.5 s
        assert 1 <= len(NOTICE.findall(out)) <= 2, out


def test_a_fast_check_says_nothing_about_time(workspace: Path) -> None:
    session = Session(workspace, FakeChecker()).start()
    assert "still checking" not in session.quit()


class InterruptingQueue(queue.Queue):
    """Raises KeyboardInterrupt in the loop's thread, as Ctrl-C does, once armed."""

    armed = False

    def get(self, block: bool = True, timeout: float | None = None) -> Event:
        if self.armed:
            raise KeyboardInterrupt
        return super().get(block, timeout)


def test_q_and_ctrl_c_say_the_same_goodbye(workspace: Path) -> None:
    by_q = Session(workspace, FakeChecker()).start()
    by_q_text = by_q.quit(KeyEvent("q"))
    events = InterruptingQueue()
    by_ctrl_c = Session(workspace, FakeChecker(delays=[60]), events=events).start(settle=False)
    assert wait_for(lambda: by_ctrl_c.checker.calls == [1])
    events.armed = True
    by_ctrl_c_text = by_ctrl_c.quit()  # ends although no quit event is ever read
    assert by_ctrl_c.checker.cancelled == [0]
    last_lines = [text.rstrip().splitlines()[-1] for text in (by_q_text, by_ctrl_c_text)]
    assert last_lines == [GOODBYE, GOODBYE]


def test_watch_survives_a_pass_and_a_reset_in_a_read_only_workspace(workspace: Path) -> None:
    solve(workspace, FIRST)
    (workspace / "exercises" / "02_constant_add_blocked.py").write_text("# attempt\n")  # a reset would change it
    undo = read_only(workspace)
    try:
        with pytest.raises(OSError):
            (workspace / "probe").write_text("")
        session = Session(workspace, FakeChecker()).start()
        assert "solved!" in session.text and session.progress.current.number == 2
        session.send(KeyEvent("x"))
        session.send(KeyEvent("y"))
        out = session.quit()
    finally:
        undo()
    assert out.count("cannot be saved") == 1  # said once, on the screen that follows
    assert "Could not reset 02_constant_add_blocked.py" in out
    assert session.checker.calls == [1]  # `x` on the pass's screen asks first; puzzle 2 is not checked yet
    assert out.rstrip().endswith(GOODBYE)


def test_watch_mode_imports_neither_jax_nor_the_commands() -> None:
    code = ("import sys, pallas_puzzles.watch; "
            "print(sorted(m for m in ('jax', 'pallas_puzzles.commands') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# -- sources: the file filter, real watchdog saves, the keyboard --------------


def test_the_file_filter_knows_puzzle_files_only(tmp_path: Path) -> None:
    q: queue.Queue[Event] = queue.Queue()
    handler = PuzzleFileHandler({FIRST}, q)
    target = str(tmp_path / FIRST)
    handler.dispatch(FileModifiedEvent(target))
    handler.dispatch(FileClosedEvent(target))
    handler.dispatch(FileCreatedEvent(target))
    handler.dispatch(FileMovedEvent(str(tmp_path / "01_constant_add.py___jb_tmp___"), target))
    handler.dispatch(FileModifiedEvent(str(tmp_path / ".01_constant_add.py.swp")))
    handler.dispatch(FileCreatedEvent(str(tmp_path / "4913")))
    handler.dispatch(DirModifiedEvent(str(tmp_path)))
    seen: list[Event] = []
    while not q.empty():
        seen.append(q.get())
    # Closing after a write and a rename onto the file mark a finished save.
    assert seen == [SaveEvent(FIRST), SaveEvent(FIRST, complete=True),
                    SaveEvent(FIRST), SaveEvent(FIRST, complete=True)]


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
def test_real_watchdog_sees_each_save_style(tmp_path: Path, save: Callable[[Path, str], None], poll: bool) -> None:
    (tmp_path / FIRST).write_text("# stub\n")
    q: queue.Queue[Event] = queue.Queue()
    observer, how = start_observer(tmp_path, PuzzleFileHandler({FIRST}, q), poll=poll)
    try:
        time.sleep(0.3)
        save(tmp_path, FIRST)
        event = q.get(timeout=5)
        assert isinstance(event, SaveEvent) and event.file == FIRST
    finally:
        observer.stop()
        observer.join(timeout=2)
    assert ("polling" in how) == poll


def test_key_reader_reads_single_keys_and_restores_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
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
            os.write(leader, b"H")
            assert q.get(timeout=2) == KeyEvent("h")
        assert termios.tcgetattr(follower) == before
        # Ctrl-C (or any error) inside the loop restores it too.
        with pytest.raises(KeyboardInterrupt), key_reader(q):
            raise KeyboardInterrupt
        assert termios.tcgetattr(follower) == before
    os.close(leader)


def test_key_reader_reads_lines_without_a_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("h\n\n  list\nQ\n"))
    q: queue.Queue[Event] = queue.Queue()
    with key_reader(q) as keys:
        assert not keys
        got = [q.get(timeout=2) for _ in range(3)]
    assert got == [KeyEvent("h"), KeyEvent("l"), KeyEvent("q")]


# -- the real command ----------------------------------------------------------


