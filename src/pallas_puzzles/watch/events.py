"""What feeds the watch loop: typed events and their sources.

Everything the loop reacts to arrives on ONE queue as a small frozen event:
file saves (from a watchdog observer), key presses (from a reader thread),
quit requests, and the verdicts of checks that ran in the background. One
queue means one thread decides what happens next, so nothing needs a lock.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pallas_puzzles.results import CheckResult

DEBOUNCE_SECONDS = 0.2
# After an event that can only mean "the write is finished" (the file was closed
# after writing, or a temp file was renamed onto it) a short quiet time is enough:
# only a second half of the same save can follow (an editor that empties the file
# and writes it again), and its first event reached the queue within 0.1 ms of the
# close when measured (tests/e2e/test_watch.py holds it, with both cores busy too).
# Every save waits this long: it was 30 ms, a tenth of a GPU puzzle's save-to-verdict.
SETTLE_AFTER_COMPLETE_SECONDS = 0.01


@dataclass(frozen=True)
class SaveEvent:
    """A puzzle file was written (one of possibly several events per save)."""

    file: str  # the file name, e.g. "01_constant_add.py"
    complete: bool = False  # the event can only mean the write is finished


@dataclass(frozen=True)
class KeyEvent:
    key: str  # one lower-case character


@dataclass(frozen=True)
class QuitEvent:
    """End watch mode (what `q` does; tests and the benchmark send it directly)."""


@dataclass(frozen=True)
class CheckFinished:
    """A background check ended; `check_id` tells a current check from a superseded one."""

    check_id: int
    result: CheckResult | None  # None: cancelled, or failed with `error`
    error: Exception | None = None  # the checker raised something other than a cancellation

    @property
    def cancelled(self) -> bool:
        return self.result is None and self.error is None


Event = SaveEvent | KeyEvent | QuitEvent | CheckFinished
EventQueue = queue.Queue[Event]


class Debouncer:
    """Collapse an editor's burst of save events into one save of the last file written.

    Editors save with bursts (vim: rename, create, write, close). The burst is
    over after 200 ms of quiet, or 10 ms once an event says the write is
    finished. Time is passed in, so the loop never sleeps here and tests need
    no real clock.
    """

    def __init__(self, quiet: float = DEBOUNCE_SECONDS, settle: float = SETTLE_AFTER_COMPLETE_SECONDS) -> None:
        self.quiet = quiet
        self.settle = settle
        self._latest: str | None = None
        self._deadline: float | None = None

    def add(self, save: SaveEvent, now: float) -> None:
        self._latest = save.file
        self._deadline = now + (self.settle if save.complete else self.quiet)

    @property
    def deadline(self) -> float | None:
        """When the pending save is due; None when nothing is pending."""
        return self._deadline

    def take_due(self, now: float) -> str | None:
        """The file saved, once its burst is over; None while it is still settling."""
        if self._deadline is None or now < self._deadline:
            return None
        latest, self._latest, self._deadline = self._latest, None, None
        return latest


class PuzzleFileHandler:
    """watchdog handler: turn any write/create/rename/delete that touches a puzzle file into a save event.

    Events are filtered by the known puzzle file names, not globs (watchdog
    matches globs against whole paths), so editors' temp files and backups are
    ignored while vim's rename+create and JetBrains' temp-file+rename still
    count as saves of the real file.
    """

    def __init__(self, known_files: set[str], events: EventQueue) -> None:
        self.known_files = known_files
        self.events = events

    def dispatch(self, event: Any) -> None:
        if getattr(event, "is_directory", False):
            return
        # A deletion counts too: once the burst settles, the loop finds the file gone and says so.
        if event.event_type not in ("modified", "created", "moved", "closed", "deleted"):
            return
        dest = getattr(event, "dest_path", "")
        for raw in (dest, event.src_path):
            if not raw:
                continue
            name = os.path.basename(os.fsdecode(raw))
            if name in self.known_files:
                finished = event.event_type == "closed" or (event.event_type == "moved" and raw == dest)
                self.events.put(SaveEvent(name, complete=finished))
                return


def start_observer(folder: Path, handler: PuzzleFileHandler, poll: bool) -> tuple[Any, str]:
    """A native observer, or polling when asked for or when the native one fails.

    Returns the started observer and a few words saying which kind it is.
    """
    from watchdog.observers import Observer
    from watchdog.observers.polling import PollingObserver

    if not poll:
        try:
            observer = Observer()
            observer.schedule(handler, str(folder), recursive=False)
            observer.start()
            return observer, f"native ({type(observer).__name__})"
        except Exception as exc:  # e.g. the inotify watch limit is reached
            fallback = f"polling (the native watcher failed: {exc})"
    else:
        fallback = "polling (--poll)"
    observer = PollingObserver(timeout=0.25)
    observer.schedule(handler, str(folder), recursive=False)
    observer.start()
    return observer, fallback


@contextmanager
def key_reader(events: EventQueue) -> Iterator[bool]:
    """Feed key presses (TTY: cbreak, no Enter needed) or typed lines (no TTY) into the queue.

    Yields whether single keys work (a TTY). The terminal's settings are
    restored on every exit path, Ctrl-C included. cbreak keeps Ctrl-C as a
    signal, so it still interrupts the loop.
    """
    stdin = sys.stdin
    is_tty = stdin is not None and stdin.isatty()
    saved: list[Any] | None = None
    if is_tty:
        import termios
        import tty

        fd = stdin.fileno()
        saved = termios.tcgetattr(fd)
        tty.setcbreak(fd)

        def read_keys() -> None:
            while True:
                try:
                    raw = os.read(fd, 1)
                except OSError:
                    return
                if not raw:
                    return  # end of input: the terminal is gone
                char = raw.decode(errors="ignore")  # a byte of a non-ASCII key decodes to ""
                if char:
                    events.put(KeyEvent(char.lower()))

        threading.Thread(target=read_keys, daemon=True, name="watch-keys").start()
    elif stdin is not None:

        def read_lines() -> None:
            try:
                for line in stdin:
                    if line.strip():
                        events.put(KeyEvent(line.strip()[0].lower()))
            except (OSError, ValueError):  # stdin closed under us
                return

        threading.Thread(target=read_lines, daemon=True, name="watch-lines").start()
    try:
        yield is_tty
    finally:
        if saved is not None:
            import termios

            termios.tcsetattr(stdin.fileno(), termios.TCSADRAIN, saved)
