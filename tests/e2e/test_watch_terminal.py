"""Watch mode as a learner sees it: the real command in a real pseudo-terminal of 80x24.

The pty's output goes through pyte, a VT100 emulator, so the assertions are
about what is on the 24 lines of the screen at that moment, not about what
was printed at some point and may long have scrolled away.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import COURSE, checkable, heading_on_its_own_lines, read_only

pyte = pytest.importorskip("pyte")

REPO = Path(__file__).resolve().parents[2]
ROWS, COLUMNS = 24, 80
GOODBYE = "Bye! Run `pallas-puzzles watch`"


# Run in the child, a fresh single-threaded Python (no fork of the threaded test process): a session
# leader that opens a terminal makes it its controlling terminal, then it becomes the command. Like a
# shell starting a foreground job, it gives Ctrl-C its default action, which a test run started in the
# background (where SIGINT is ignored, and stays ignored in every child) would otherwise pass on.
ATTACH = ("import os, signal, sys\n"
          "signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
          "fd = os.open(sys.argv[1], os.O_RDWR)\n"
          "[os.dup2(fd, target) for target in (0, 1, 2)]\n"
          "os.execvp(sys.argv[2], sys.argv[2:])\n")


class Terminal:
    """`pallas-puzzles watch` (or another command) with a pty as its controlling terminal, so Ctrl-C is a
    real SIGINT."""

    def __init__(self, workspace: Path, *args: str, columns: int = COLUMNS, rows: int = ROWS) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        env["TERM"] = "xterm-256color"
        leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        command = [sys.executable, "-m", "pallas_puzzles", *(args or ("watch", "--backend", "interpret"))]
        self.process = subprocess.Popen([sys.executable, "-c", ATTACH, os.ttyname(follower), *command],
                                        cwd=workspace, env=env, start_new_session=True, stdin=follower,
                                        stdout=follower, stderr=follower, close_fds=True)
        os.close(follower)
        self.fd = leader
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.2)
                if not ready:
                    continue
                data = os.read(self.fd, 65536)
            except OSError:
                return
            if not data:
                return
            with self.lock:
                self.stream.feed(data)

    @property
    def text(self) -> str:
        """The lines on screen now."""
        with self.lock:
            return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, *needles: str, timeout: float = 120.0, gone: tuple[str, ...] = ()) -> bool:
        """Every needle on screen (and none of `gone`) within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.text
            if all(n in screen for n in needles) and not any(g in screen for g in gone):
                return True
            time.sleep(0.1)
        return False

    def drained(self, timeout: float = 60.0) -> bool:
        """After the command (and every process it started) has closed the terminal: has the emulator read
        all it wrote? (A fixed sleep is not enough on a loaded machine: the emulator is Python too.)"""
        self.reader.join(timeout)
        return not self.reader.is_alive()

    def press(self, key: bytes) -> None:
        os.write(self.fd, key)

    def wait_exit(self, timeout: float = 60.0) -> int | None:
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        with contextlib.suppress(OSError):
            os.close(self.fd)


@pytest.fixture()
def watching(workspace: Path) -> Iterator[Terminal]:
    terminal = Terminal(workspace)
    try:
        yield terminal
    finally:
        terminal.kill()


def _save(target: Path, text: str) -> None:
    """As vim saves: rename the old file aside, write a new one, delete the old."""
    os.rename(target, str(target) + "~")
    target.write_text(text)
    os.unlink(str(target) + "~")


def _eventually(terminal: Terminal, condition: Callable[[str], bool], seconds: float) -> bool:
    """The condition holds on screen within `seconds` (sampled)."""
    deadline = time.monotonic() + seconds
    while not condition(terminal.text):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _still(terminal: Terminal, condition: Callable[[str], bool], seconds: float) -> bool:
    """The condition holds on screen the whole time (sampled)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not condition(terminal.text):
            return False
        time.sleep(0.1)
    return True


@pytest.mark.slow
def test_watch_at_80x24_opens_on_the_tour_and_keeps_each_pass_on_screen_until_the_learner_acts(
        workspace: Path, watching: Terminal) -> None:
    first = workspace / "exercises" / "01_constant_add.py"
    # A fresh workspace opens on the tour, which starts solved: it stays, with the way on to puzzle 1.
    assert watching.wait_for("✓ Puzzle 0: A guided tour", "press n to start it", "Next: puzzle 1, Constant add"), \
        watching.text
    assert _still(watching, lambda screen: "✓ Puzzle 0: A guided tour" in screen and "Puzzle 1" not in
                  screen.splitlines()[0], 3.0), watching.text
    # Progress counts the puzzles this jax can run, as `init` and `doctor` do (on jax 0.10: 36, not 43).
    assert f" 0/{len(checkable(COURSE.counted))} solved" in watching.text, watching.text
    watching.press(b"n")
    # An untouched stub: a short "not started" that fits under the header, nothing about mismatches.
    assert watching.wait_for("Puzzle 1: Constant add", "not started", "TODO", gone=("guided tour",)), watching.text
    assert "output elements" not in watching.text

    _save(first, (REPO / "solutions" / "01_constant_add.py").read_text())
    assert watching.wait_for("solved!", "✓ passed", timeout=90), watching.text
    # The pass fits the screen: its ✓ line stays on it, the performance card in one line (chapter 1 is not
    # graded on cost), and it stays while the learner reads: no check of puzzle 2 replaces it.
    assert _still(watching, lambda screen: "✓ Puzzle 1: Constant add" in screen and "solved!" in screen, 3.0), \
        watching.text
    assert "`pallas-puzzles perf 1` shows the card" in watching.text and "HBM traffic" in watching.text
    assert "press n to start it" in watching.text

    watching.press(b"n")
    # Each screen replaces the one before.
    assert watching.wait_for("Puzzle 2: Constant add, blocked", "not started", timeout=60, gone=("solved!",)), \
        watching.text

    # Ctrl-C: a real SIGINT from the terminal; the same goodbye as q, and the exit code the README promises.
    watching.press(b"\x03")
    assert watching.wait_exit() == 130
    assert GOODBYE in watching.text


@pytest.mark.slow
def test_watch_notices_a_deleted_file_and_restores_it_without_promising_a_backup(
        workspace: Path, watching: Terminal) -> None:
    first = workspace / "exercises" / "01_constant_add.py"
    original = first.read_text()
    assert watching.wait_for("press n to start it"), watching.text  # the tour
    watching.press(b"n")
    assert watching.wait_for("not started", "TODO"), watching.text
    first.unlink()
    # The file's verdict goes with it, and the notice is said once however often the learner asks again.
    assert watching.wait_for("01_constant_add.py is missing", timeout=20, gone=("not started",)), watching.text
    for _ in range(2):
        watching.press(b"r")
        time.sleep(1.0)
    assert watching.text.count("is missing") == 1, watching.text
    watching.press(b"x")
    assert watching.wait_for("01_constant_add.py is gone. Restore the original exercise? (y/n)", timeout=10), \
        watching.text
    assert "backed up" not in watching.text
    watching.press(b"y")  # restored and checked again: a fresh screen with the stub's verdict
    assert watching.wait_for("not started", timeout=30, gone=("is gone",)), watching.text
    assert first.read_text() == original
    assert not list((workspace / ".pallas_puzzles" / "backups").iterdir())  # nothing was there to back up
    watching.press(b"q")
    assert watching.wait_exit() == 0



def _readme_sample(name: str):
    """A sample verdict of the docs (scripts/readme_samples.py): its puzzle, file and the learner's edit."""
    spec = importlib.util.spec_from_file_location("readme_samples", REPO / "scripts" / "readme_samples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("readme_samples", module)
    spec.loader.exec_module(module)
    return next(sample for sample in module.SAMPLES if sample.name == name)


TITLE_4 = "✗ Puzzle 4: Outer add, blocked in 2-D"
CAUSE_4 = "21600 element(s) of z_ref lie in no block that any grid point writes"


def _grid_rounds_down(workspace: Path) -> None:
    """The docs' own sample mistake (docs/checker.md): puzzle 4's grid rounds down."""
    sample = _readme_sample("verify-4-grid-rounds-down")
    source = (REPO / "solutions" / sample.file).read_text()
    _save(workspace / "exercises" / sample.file, source.replace(sample.old, sample.new))


def _joined(screen: str) -> str:
    """The screen's words, lines joined and panel borders dropped: a sentence may wrap."""
    return " ".join(screen.replace("│", " ").split())


@pytest.mark.slow
def test_a_long_failing_verdict_keeps_its_title_and_cause_on_an_80x24_screen(workspace: Path,
                                                                            watching: Terminal) -> None:
    assert watching.wait_for("press n to start it"), watching.text  # the tour
    _grid_rounds_down(workspace)  # a save of puzzle 4 moves watch there
    assert watching.wait_for(TITLE_4, timeout=90), watching.text
    assert CAUSE_4 in _joined(watching.text), watching.text
    assert "press d for the whole verdict" in _joined(watching.text)
    watching.press(b"d")  # the whole verdict: the block map too, and the title and cause again at the end
    assert watching.wait_for("? never written", timeout=20), watching.text

    def ends_with_the_headline(screen: str) -> bool:
        return f"{TITLE_4}: {CAUSE_4}" in _joined("\n".join(screen.rstrip().splitlines()[-4:]))

    assert _eventually(watching, ends_with_the_headline, 10.0), watching.text


@pytest.mark.slow
def test_verify_of_a_long_failing_verdict_ends_with_its_title_and_cause_at_80x24(workspace: Path) -> None:
    _grid_rounds_down(workspace)
    verifying = Terminal(workspace, "verify", "4", "--backend", "interpret")
    try:
        assert verifying.wait_exit(timeout=120) == 1
        assert verifying.drained()
        screen = _joined(verifying.text)
        assert TITLE_4 in screen and CAUSE_4 in screen, verifying.text
    finally:
        verifying.kill()


@pytest.mark.slow
def test_l_in_watch_shows_the_chapter_of_the_current_puzzle_on_one_screen(workspace: Path,
                                                                         watching: Terminal) -> None:
    assert watching.wait_for("press n to start it"), watching.text  # the tour
    watching.press(b"n")
    assert watching.wait_for("Puzzle 1: Constant add", "not started"), watching.text
    watching.press(b"l")
    assert watching.wait_for("Chapter 1: Blocks and grids", "Chapter 6:", timeout=20), watching.text
    screen = watching.text
    assert "▶ 1   Constant add" in screen and screen.splitlines()[0].startswith("Progress"), screen


@pytest.mark.slow
def test_a_read_only_workspace_keeps_the_screen_and_says_once_that_progress_is_not_saved(workspace: Path) -> None:
    undo = read_only(workspace)
    try:
        watching = Terminal(workspace)
        try:
            # The tour's pass moves progress on, which cannot be saved: said on the tour's screen, which fits.
            assert watching.wait_for("press n to start it", "Your progress cannot be saved"), watching.text
            assert "✓ Puzzle 0: A guided tour" in watching.text, watching.text
            watching.press(b"n")
            assert watching.wait_for("Puzzle 1: Constant add", "not started", gone=("guided tour",)), watching.text
            for _ in range(2):
                watching.press(b"r")
                time.sleep(1.0)
            assert watching.text.count("cannot be saved") <= 1, watching.text
            watching.press(b"q")
            assert watching.wait_exit() == 0
        finally:
            watching.kill()
    finally:
        undo()


@pytest.mark.parametrize("columns", [80, 100])
def test_list_in_a_terminal_gives_each_chapter_title_a_whole_line(workspace: Path, columns: int) -> None:
    """`list` in a real terminal of 80 or 100 columns (tall enough for the whole list): each chapter's title
    is a line of its own from the left edge (folded at the width only when longer), not folded into the
    narrow puzzle column; file names whole."""
    listing = Terminal(workspace, "list", columns=columns, rows=200)
    try:
        assert listing.wait_exit(timeout=60) == 0
        assert listing.drained()
        lines = listing.text.splitlines()
    finally:
        listing.kill()
    for chapter in COURSE.chapters:
        heading = f"Chapter {chapter.number}: {chapter.title}"
        assert heading_on_its_own_lines(lines, heading, columns), (columns, heading, listing.text)
    for puzzle in COURSE.puzzles:
        assert any(puzzle.file in line for line in lines), (columns, puzzle.file)
