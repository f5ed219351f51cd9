"""Watch mode: one event queue feeds the loop.

File saves (from a watchdog observer), key presses (from a reader thread) and
quit requests all arrive as `Event`s on one queue, so a save made while a
check runs simply waits its turn. Tests drive `WatchLoop` by putting events
on the queue and injecting a fake checker.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from pallas_puzzles import render
from pallas_puzzles.commands import record_pass, show_next_hint
from pallas_puzzles.metadata import Course, Puzzle
from pallas_puzzles.results import CheckResult
from pallas_puzzles.state import State, save_state
from pallas_puzzles.workspace import Workspace, reset_exercise

DEBOUNCE_SECONDS = 0.2
# After an event that can only mean "the write is finished" (the file was closed
# after writing, or a temp file was renamed onto it) a short quiet time is enough.
SETTLE_AFTER_COMPLETE_SECONDS = 0.03


@dataclass(frozen=True)
class Event:
    kind: str  # "save" (value: file name), "key" (value: one character), "quit"
    value: str = ""
    complete: bool = False  # a save event that marks a finished write


Checker = Callable[[Puzzle, Path], CheckResult]


class PuzzleFileHandler:
    """watchdog handler: turn any write/create/rename that lands on a puzzle file into a save event.

    Events are filtered by the known puzzle file names, not globs, so editors'
    temp files and backups are ignored while vim's rename+create and
    JetBrains' temp-file+rename still count as saves of the real file.
    """

    def __init__(self, known_files: set[str], events: queue.Queue[Event]) -> None:
        self.known_files = known_files
        self.events = events

    def dispatch(self, event: Any) -> None:
        if getattr(event, "is_directory", False):
            return
        if event.event_type not in ("modified", "created", "moved", "closed"):
            return
        for raw in (getattr(event, "dest_path", ""), event.src_path):
            if not raw:
                continue
            name = os.path.basename(os.fsdecode(raw))
            if name in self.known_files:
                finished = event.event_type == "closed" or (event.event_type == "moved" and raw == event.dest_path)
                self.events.put(Event("save", name, complete=finished))
                return


def start_observer(folder: Path, handler: PuzzleFileHandler, poll: bool) -> tuple[Any, str]:
    """A native observer, or polling when asked for or when the native one fails."""
    from watchdog.observers import Observer
    from watchdog.observers.polling import PollingObserver

    if not poll:
        try:
            observer = Observer()
            observer.schedule(handler, str(folder), recursive=False)
            observer.start()
            return observer, f"native ({type(observer).__name__})"
        except Exception as exc:  # e.g. inotify watch limit reached
            fallback = f"polling (the native watcher failed: {exc})"
    else:
        fallback = "polling (--poll)"
    observer = PollingObserver(timeout=0.25)
    observer.schedule(handler, str(folder), recursive=False)
    observer.start()
    return observer, fallback


@contextmanager
def key_reader(events: queue.Queue[Event]) -> Any:
    """Feed key presses (TTY, no Enter needed) or typed lines (no TTY) into the queue.

    The terminal's settings are restored on every exit path, Ctrl-C included.
    """
    stdin = sys.stdin
    is_tty = stdin is not None and stdin.isatty()
    saved = None
    if is_tty:
        import termios
        import tty

        fd = stdin.fileno()
        saved = termios.tcgetattr(fd)
        tty.setcbreak(fd)

        def read_keys() -> None:
            while True:
                try:
                    char = os.read(fd, 1).decode(errors="ignore")
                except OSError:
                    return
                if char:
                    events.put(Event("key", char.lower()))

        threading.Thread(target=read_keys, daemon=True, name="keys").start()
    elif stdin is not None:

        def read_lines() -> None:
            for line in stdin:
                if line.strip():
                    events.put(Event("key", line.strip()[0].lower()))

        threading.Thread(target=read_lines, daemon=True, name="lines").start()
    try:
        yield is_tty
    finally:
        if saved is not None:
            import termios

            termios.tcsetattr(stdin.fileno(), termios.TCSADRAIN, saved)


class WatchLoop:
    def __init__(self, console: Console, workspace: Workspace, course: Course, state: State,
                 checker: Checker, events: queue.Queue[Event], keys: bool = False) -> None:
        self.console = console
        self.workspace = workspace
        self.course = course
        self.state = state
        self.checker = checker
        self.events = events
        self.keys = keys
        self._deferred: list[Event] = []
        self.checks_run = 0

    # -- events -------------------------------------------------------------

    def _next_event(self) -> Event:
        if self._deferred:
            return self._deferred.pop(0)
        while True:
            try:
                return self.events.get(timeout=0.5)
            except queue.Empty:
                continue

    def _settle(self, first: Event) -> str:
        """Debounce: wait until saves stop for a moment; return the last file saved.

        Editors save with bursts of events (vim: rename, create, write, close).
        The burst is over after 200 ms of quiet, or after a short quiet time
        once an event says the write is finished.
        """
        latest = first.value

        def quiet_time(event: Event) -> float:
            return SETTLE_AFTER_COMPLETE_SECONDS if event.complete else DEBOUNCE_SECONDS

        deadline = time.monotonic() + quiet_time(first)
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                event = self.events.get(timeout=remaining)
            except queue.Empty:
                break
            if event.kind == "save":
                latest = event.value
                deadline = time.monotonic() + quiet_time(event)
            else:
                self._deferred.append(event)
        return latest

    # -- actions ------------------------------------------------------------

    @property
    def current(self) -> Puzzle:
        return self.course.find(self.state.current)

    def _header(self) -> None:
        counted = self.course.counted
        solved = len([p for p in counted if p.number in self.state.solved])
        render.render_watch_header(self.console, self.current, self.workspace.exercise(self.current),
                                   solved, len(counted), self.keys)

    def _switch(self, puzzle: Puzzle) -> None:
        self.state.current = puzzle.number
        save_state(self.workspace, self.state)
        self._header()

    def check_current(self) -> CheckResult | None:
        puzzle = self.current
        path = self.workspace.exercise(puzzle)
        if not path.is_file():
            render.warning(self.console, f"{path} is missing; press x (or run `pallas-puzzles reset {puzzle.number}`) to restore it.")
            return None
        self.console.print(f"Checking {puzzle.file}…", style="dim")
        result = self.checker(puzzle, path)
        self.checks_run += 1
        render.render_result(self.console, result, puzzle)
        if result.passed and not puzzle.tour:
            self._on_pass(puzzle)
        elif result.passed and puzzle.tour:
            self._advance(puzzle)
        return result

    def _on_pass(self, puzzle: Puzzle) -> None:
        solution = record_pass(self.workspace, self.state, puzzle)
        upcoming_number = self.state.next_unsolved(self.course, after=puzzle.number)
        upcoming = self.course.find(upcoming_number) if upcoming_number is not None else None
        render.render_success(self.console, puzzle, solution, upcoming)
        if upcoming is not None:
            self._switch(upcoming)
            self.check_current()

    def _advance(self, puzzle: Puzzle) -> None:
        following = self.course.after(puzzle)
        if following is not None:
            self._switch(following)
            self.check_current()

    def _ask_yes(self, question: str) -> bool:
        self.console.print(f"{question} (y/n)", style="bold")
        while True:
            event = self._next_event()
            if event.kind == "key" and event.value in ("y", "n"):
                return event.value == "y"
            if event.kind == "quit":
                self._deferred.insert(0, event)
                return False

    def handle_key(self, key: str) -> bool:
        """Returns False when the loop should end."""
        puzzle = self.current
        if key == "q":
            return False
        if key == "h":
            show_next_hint(self.console, self.workspace, self.state, puzzle)
        elif key == "l":
            render.render_list(self.console, self.course, self.state.solved, self.state.current, self.workspace.exercises)
        elif key == "n":
            following = self.course.after(puzzle) or self.course.puzzles[0]
            self._switch(following)
            self.check_current()
        elif key == "r":
            self.check_current()
        elif key == "x":
            if self._ask_yes(f"Reset {puzzle.file} to the original stub? Your version is backed up first."):
                backup = reset_exercise(self.workspace, puzzle)
                if backup is not None:
                    self.console.print(f"Your version was saved as {backup}.")
                self.check_current()
            else:
                self.console.print("Nothing was changed.")
        return True

    def run(self) -> int:
        self._header()
        self.check_current()
        while True:
            event = self._next_event()
            if event.kind == "quit":
                return 0
            if event.kind == "key":
                if not self.handle_key(event.value):
                    return 0
            elif event.kind == "save":
                name = self._settle(event)
                puzzle = self.course.by_file(name)
                if puzzle is None:
                    continue
                if puzzle.number != self.state.current:
                    self._switch(puzzle)
                self.check_current()


def run_watch(console: Console, workspace: Workspace, course: Course, state: State, backend: str, poll: bool) -> int:
    from pallas_puzzles.worker import Worker

    events: queue.Queue[Event] = queue.Queue()
    with Worker(backend) as worker:
        console.print("Starting JAX…", style="dim")
        resolved = worker.start()
        if worker.warning:
            render.warning(console, worker.warning)
        handler = PuzzleFileHandler({p.file for p in course.puzzles}, events)
        observer, how = start_observer(workspace.exercises, handler, poll)
        console.print(f"Backend: {resolved} · watching {workspace.exercises} · file watcher: {how}", style="dim")
        try:
            with key_reader(events) as keys:
                loop = WatchLoop(console, workspace, course, state,
                                 worker.check, events, keys=keys)
                return loop.run()
        except KeyboardInterrupt:
            console.print("Bye!")
            return 0
        finally:
            observer.stop()
            observer.join(timeout=2)
