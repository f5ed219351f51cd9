"""Watch mode as a learner sees it: the real command in a real pseudo-terminal of 80x24.

The pty's output goes through pyte, a VT100 emulator, so the assertions are
about what is on the 24 lines of the screen at that moment, not about what
was printed at some point and may long have scrolled away.
"""

from __future__ import annotations

import contextlib
import fcntl
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
    """`pallas-puzzles watch` with a pty as its controlling terminal, so Ctrl-C is a real SIGINT."""

    def __init__(self, workspace: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        env["TERM"] = "xterm-256color"
        leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        command = [sys.executable, "-m", "pallas_puzzles", "watch", "--backend", "interpret"]
        self.process = subprocess.Popen([sys.executable, "-c", ATTACH, os.ttyname(follower), *command],
                                        cwd=workspace, env=env, start_new_session=True, stdin=follower,
                                        stdout=follower, stderr=follower, close_fds=True)
        os.close(follower)
        self.fd = leader
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

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
        """The 24 lines on screen now."""
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


def _still(terminal: Terminal, condition: Callable[[str], bool], seconds: float) -> bool:
    """The condition holds on screen the whole time (sampled)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not condition(terminal.text):
            return False
        time.sleep(0.1)
    return True


@pytest.mark.slow
def test_watch_at_80x24_keeps_the_pass_on_screen_until_the_learner_acts(workspace: Path,
                                                                          watching: Terminal) -> None:
    first = workspace / "exercises" / "01_constant_add.py"
    # An untouched stub: a short "not started" that fits under the header, nothing about mismatches.
    assert watching.wait_for("not started", "TODO"), watching.text
    assert "Puzzle 1: Constant add" in watching.text and "output elements" not in watching.text

    _save(first, (REPO / "solutions" / "01_constant_add.py").read_text())
    assert watching.wait_for("solved!", "✓ passed", timeout=90), watching.text
    # The pass stays: no check of puzzle 2 replaces it while the learner reads.
    assert _still(watching, lambda screen: "solved!" in screen and "✓ passed" in screen, 3.0), watching.text
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
    assert watching.wait_for("not started", "TODO"), watching.text
    first.unlink()
    assert watching.wait_for("01_constant_add.py is missing", timeout=20), watching.text
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

