"""Checks run in one background thread, so the watch loop never waits for a kernel.

The loop submits a check and carries on with keys and saves; the verdict comes
back as a `CheckFinished` event on the loop's own queue. Submitting a new check
cancels the running one first: a verdict on a file the learner has already
changed again is worth nothing.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pallas_puzzles.checking.cache import ResultCache
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.results import CheckResult
from pallas_puzzles.watch.events import CheckFinished, EventQueue
from pallas_puzzles.worker.client import CheckCancelled


class Checker(Protocol):
    """What the loop needs from `pallas_puzzles.worker.client.Worker` (tests pass a fake)."""

    def check(self, puzzle: Puzzle, file: Path) -> CheckResult: ...

    def prepare(self, puzzle: Puzzle) -> None:
        """`puzzle` is likely checked next: get ready for it in the background (it may do nothing)."""

    def cancel(self) -> None: ...


class CachingChecker:
    """A checker that answers at once for a file saved back to a content it has already judged."""

    def __init__(self, checker: Checker, cache: ResultCache) -> None:
        self._checker = checker
        self._cache = cache

    def check(self, puzzle: Puzzle, file: Path) -> CheckResult:
        key = self._cache.key(puzzle, file)
        stored = self._cache.get(key, puzzle)
        if stored is not None:
            return stored
        result = self._checker.check(puzzle, file)
        self._cache.put(key, puzzle, file, result)
        return result

    def prepare(self, puzzle: Puzzle) -> None:
        self._checker.prepare(puzzle)

    def cancel(self) -> None:
        self._checker.cancel()


@dataclass(frozen=True)
class CheckRequest:
    check_id: int
    puzzle: Puzzle
    path: Path


class CheckRunner:
    """One thread, one check at a time; a newer request supersedes the running one."""

    def __init__(self, checker: Checker, events: EventQueue) -> None:
        self._checker = checker
        self._events = events
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._waiting: CheckRequest | None = None
        self._active: int | None = None  # id of the check the thread is inside
        self._cancelled: set[int] = set()  # ids whose outcome must read as cancelled
        self._last_id = 0
        self._closed = False
        self._thread = threading.Thread(target=self._serve, daemon=True, name="watch-checks")
        self._thread.start()

    def submit(self, puzzle: Puzzle, path: Path) -> int:
        """Check `path` as soon as the thread is free (cancelling what runs); returns the check id."""
        self.cancel()
        with self._lock:
            self._last_id += 1
            self._waiting = CheckRequest(self._last_id, puzzle, path)
            self._wake.notify()
            return self._last_id

    def prepare(self, puzzle: Puzzle) -> None:
        """`puzzle` is likely checked next: the checker gets ready for it in the background."""
        self._checker.prepare(puzzle)

    def cancel(self) -> None:
        """Drop the waiting check and stop the running one at once."""
        # The lock is held across checker.cancel() so the thread cannot move on
        # to a newer check in between: cancel() only ever hits the check it means.
        with self._lock:
            self._waiting = None
            if self._active is not None:
                self._cancelled.add(self._active)
                self._checker.cancel()

    def repeat_cancel(self) -> None:
        """Cancel again a check that is still running although it was cancelled.

        A cancel that lands just before the checker starts its check finds
        nothing running and does nothing; calling this now and then (the loop
        does on every tick) stops such a check too. It only ever hits a check
        already cancelled, never a newer one.
        """
        with self._lock:
            if self._active is not None and self._active in self._cancelled:
                self._checker.cancel()

    def close(self, timeout: float = 5.0) -> None:
        """Cancel everything and wait (a little) for the thread to end."""
        with self._lock:
            self._closed = True
            self._wake.notify()
        self.cancel()
        deadline = time.monotonic() + timeout
        while self._thread.is_alive() and time.monotonic() < deadline:
            self._thread.join(0.05)
            self.repeat_cancel()

    def _serve(self) -> None:
        while True:
            with self._lock:
                while self._waiting is None and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return
                request, self._waiting = self._waiting, None
                self._active = request.check_id
            finished = self._run(request)
            with self._lock:
                self._active = None
                if request.check_id in self._cancelled:
                    self._cancelled.discard(request.check_id)
                    finished = CheckFinished(request.check_id, None)
            self._events.put(finished)

    def _run(self, request: CheckRequest) -> CheckFinished:
        try:
            result = self._checker.check(request.puzzle, request.path)
        except CheckCancelled:
            return CheckFinished(request.check_id, None)
        except Exception as exc:  # the loop decides: a warning, or re-raised in its own thread
            return CheckFinished(request.check_id, None, error=exc)
        return CheckFinished(request.check_id, result)
