"""The watch loop: one thread takes events off one queue and decides what happens.

Checks run in a background thread (`CheckRunner`), so keys answer at once even
while a kernel spins; a new save, `r`, `n` or `q` cancels the running check
rather than waiting for it. Tests drive `WatchLoop` by putting events on its
queue and injecting a fake checker.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console

from pallas_puzzles.backends import Backend
from pallas_puzzles.checking import support
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.errors import EXIT_INTERRUPTED, EXIT_PASS, UserError
from pallas_puzzles.report import terminal
from pallas_puzzles.watch.events import (
    CheckFinished,
    Debouncer,
    Event,
    EventQueue,
    KeyEvent,
    QuitEvent,
    SaveEvent,
)
from pallas_puzzles.watch.runner import Checker, CheckRunner
from pallas_puzzles.watch.screen import Screen
from pallas_puzzles.workspace.progress import Progress

GOODBYE = "Bye! Run `pallas-puzzles watch` to carry on where you left off."
NOTICE_AFTER_SECONDS = 1.5  # a check this old tells the learner it is still running
PLAIN_NOTICE_MIN_GAP_SECONDS = 5.0  # without a TTY each notice is a new line: few of them
TTY_NOTICE_GAP_SECONDS = 1.0  # in a TTY the notice is one transient line, updated in place
TICK_SECONDS = 0.25  # longest the loop sleeps without looking at the clock


def say_goodbye(console: Console) -> None:
    """The one way watch mode ends, whether by `q` or Ctrl-C."""
    terminal.info(console, GOODBYE)


@dataclass
class RunningCheck:
    check_id: int
    puzzle: Puzzle
    started: float
    next_notice: float


@dataclass(frozen=True)
class ResetQuestion:
    puzzle: Puzzle
    recheck_on_no: bool  # `x` stopped a check of this puzzle: "no" runs it again


class WatchLoop:
    def __init__(self, console: Console, progress: Progress, checker: Checker, events: EventQueue,
                 keys: bool = False, clock: Callable[[], float] = time.monotonic,
                 backend: Backend | None = None) -> None:
        self.console = console
        self.backend = backend  # where checks run; None: not known (only the jax version is asked about)
        self.progress = progress
        self.events = events
        self.keys = keys
        self.clock = clock
        # Set when the loop, having handled its events, has nothing in flight (no
        # check, no save settling): tests and the benchmark wait on it.
        self.idle = threading.Event()
        self._idle_reported = False
        self._runner = CheckRunner(checker, events)
        self._debouncer = Debouncer()
        self._running: RunningCheck | None = None
        self._question: ResetQuestion | None = None
        self.screen = Screen(console, progress, keys)
        self._resting = False  # a pass is on screen and stays there until the learner acts or saves

    # -- the loop -------------------------------------------------------------

    def run(self) -> int:
        """Watch until `q`, a quit event or Ctrl-C; returns the exit code (130 after Ctrl-C)."""
        code = EXIT_PASS
        try:
            self.screen.header()
            self._check(self.progress.current)
            while self._handle(self._next_event()):
                pass
        except KeyboardInterrupt:
            code = EXIT_INTERRUPTED  # the same goodbye as `q`, the exit code every command gives Ctrl-C
        finally:
            self._stop_status()
            self._runner.close()
        say_goodbye(self.console)
        return code

    def _next_event(self) -> Event | None:
        """The next event, or None when it is time to look at the clock."""
        now = self.clock()
        wake_at = now + TICK_SECONDS
        if self._debouncer.deadline is not None:
            wake_at = min(wake_at, self._debouncer.deadline)
        if self._running is not None:
            wake_at = min(wake_at, self._running.next_notice)
        nothing_in_flight = self._running is None and self._debouncer.deadline is None
        if nothing_in_flight and self.events.empty() and not self._idle_reported:
            self._idle_reported = True  # once per quiet spell, so a cleared `idle` means "after my event"
            self.idle.set()
        try:
            event = self.events.get(timeout=max(wake_at - now, 0.0))
        except queue.Empty:
            return None
        self._idle_reported = False
        self.idle.clear()
        return event

    def _handle(self, event: Event | None) -> bool:
        """React to one event (None: only time passed); False ends the loop."""
        if isinstance(event, QuitEvent):
            return False
        if isinstance(event, KeyEvent) and not self._on_key(event.key):
            return False
        if isinstance(event, SaveEvent):
            self._debouncer.add(event, self.clock())
        elif isinstance(event, CheckFinished):
            self._on_check_finished(event)
        saved = self._debouncer.take_due(self.clock())
        if saved is not None:
            self._on_save(saved)
        self._runner.repeat_cancel()
        self._show_progress_notice()
        return True

    # -- saves and checks -----------------------------------------------------

    def _on_save(self, file: str) -> None:
        puzzle = self.progress.course.by_file(file)
        if puzzle is None:
            return
        self._resting = False
        if self._question is not None:
            self._question = None
            terminal.info(self.console, "You saved again, so nothing was reset.")
        if puzzle == self.progress.current:
            self._check(puzzle)
        else:
            self._switch(puzzle)

    def _switch(self, puzzle: Puzzle) -> None:
        self._cancel_running()
        self.progress.move_to(puzzle)
        self.screen.header()
        self._check(puzzle)

    def _check(self, puzzle: Puzzle) -> None:
        """Start checking the learner's file in the background (stopping any running check)."""
        stopped = self._cancel_running()
        path = self.progress.exercise(puzzle)
        if not path.is_file():
            self.screen.notice(puzzle, self.progress.missing_message(puzzle))
            return
        refusal = support.refusal(puzzle, self.backend)
        if refusal is not None:
            self.screen.notice(puzzle, f"{refusal.sentence} Press n to skip to the next puzzle.")
            return
        note = " (the previous check was stopped)" if stopped else ""
        self.console.print(f"Checking {puzzle.file}…{note}", style="dim")
        check_id = self._runner.submit(puzzle, path)
        now = self.clock()
        self._running = RunningCheck(check_id, puzzle, now, now + NOTICE_AFTER_SECONDS)

    def _cancel_running(self) -> bool:
        """Stop the running check, if any; its verdict will be ignored. Says whether one ran."""
        self._stop_status()
        if self._running is None:
            return False
        self._running = None
        self._runner.cancel()
        return True

    def _on_check_finished(self, event: CheckFinished) -> None:
        running = self._running
        if running is None or event.check_id != running.check_id:
            return  # a cancelled or superseded check: its file has changed since
        self._running = None
        self._stop_status()
        if event.error is not None:
            if isinstance(event.error, UserError):
                self.screen.notice(running.puzzle, event.error.message + " Save again or press r to retry.")
                return
            raise event.error  # a fault in pallas-puzzles: the CLI's error boundary reports it
        if event.result is None:
            terminal.info(self.console, "The check was stopped.")
            return
        if not event.result.passed:
            self.screen.verdict(event.result, running.puzzle)
            return
        outcome = self.progress.record_pass(running.puzzle)
        # The next puzzle is where a restart resumes, but the pass (or the tour, which starts solved) stays
        # on screen until the learner acts.
        if outcome.upcoming is not None:
            self.progress.move_to(outcome.upcoming)
            self._resting = True
            self._runner.prepare(outcome.upcoming)  # another chapter's checker starts while this is read
        self.screen.success(event.result, running.puzzle, outcome)

    def _show_progress_notice(self) -> None:
        """Tell the learner a slow check is still running, and how to get out of it."""
        running = self._running
        now = self.clock()
        if running is None or now < running.next_notice:
            return
        elapsed = now - running.started
        self.screen.still_checking(f"still checking {running.puzzle.file}… {elapsed:.0f} s — "
                                   f"save again or press r to restart, q to quit")
        running.next_notice = now + (TTY_NOTICE_GAP_SECONDS if self.screen.clears
                                     else max(PLAIN_NOTICE_MIN_GAP_SECONDS, elapsed / 2))

    def _stop_status(self) -> None:
        self.screen.stop_notice()

    # -- keys -----------------------------------------------------------------

    def _on_key(self, key: str) -> bool:
        """React to a key; False when the loop should end."""
        if self._question is not None:
            return self._answer_reset(key)
        puzzle = self.progress.current
        if key == "q":
            return False
        left_pass = self._resting and key not in ("l", "d")
        if left_pass:  # leave the pass's screen for the next puzzle; that is all `n` does here
            self._resting = False
            self.screen.header()
            if key in ("n", "h"):
                self._check(puzzle)
            if key == "n":
                return True
        if key == "h":
            self.screen.hint(puzzle, self.progress.reveal_hint(puzzle))
        elif key == "l":
            self.screen.listing()
        elif key == "d":
            self.screen.details()
        elif key == "n":
            self._switch(self.progress.following(puzzle))
        elif key == "r":
            self._check(puzzle)
        elif key == "x":
            self._ask_reset(puzzle, unchecked=left_pass)
        return True

    def _ask_reset(self, puzzle: Puzzle, unchecked: bool = False) -> None:
        # Asking must not block the loop, so the question is state and the answer a later key.
        if self.progress.untouched(puzzle):
            terminal.info(self.console, f"{puzzle.file} is already the original exercise: nothing to reset.")
            if unchecked:  # x left a pass's screen: the puzzle is checked as any other key would
                self._check(puzzle)
            return
        checking_it = unchecked or (self._running is not None and self._running.puzzle == puzzle)
        self._cancel_running()
        self._question = ResetQuestion(puzzle, recheck_on_no=checking_it)
        if self.progress.exercise(puzzle).is_file():
            question = f"Reset {puzzle.file} to the original stub? Your version is backed up first. (y/n)"
        else:  # nothing to back up: promise nothing
            question = f"{puzzle.file} is gone. Restore the original exercise? (y/n)"
        self.console.print(question, style="bold")

    def _answer_reset(self, key: str) -> bool:
        question = self._question
        assert question is not None
        self._question = None
        if key == "y":
            self._reset(question.puzzle)
            return True
        terminal.info(self.console, "Nothing was changed.")
        if key == "n":
            if question.recheck_on_no:
                self._check(question.puzzle)
            return True
        return self._on_key(key)  # any other key means "no" and then does its usual job

    def _reset(self, puzzle: Puzzle) -> None:
        try:
            backup = self.progress.reset(puzzle)
        except OSError as exc:  # e.g. a read-only workspace: say so and keep watching
            where = exc.filename or self.progress.exercise(puzzle)
            terminal.warning(self.console, f"Could not reset {puzzle.file} ({exc.strerror or exc} at {where}).")
            return
        except UserError as exc:  # e.g. the original stub cannot be found
            terminal.warning(self.console, exc.message)
            return
        if backup is not None:
            terminal.info(self.console, f"Your version was saved as {backup}.")
        self._check(puzzle)
