"""One checker per target, started when a puzzle of that target is first checked.

Watch mode moves from chapter to chapter; a chapter of another target needs a
checker process set up for it (a host device count, other hooks). This keeps
the checkers of the last KEPT_CHECKERS targets used, so going back a chapter
costs nothing, and cancels whichever one is running. An older one is stopped:
each idle checker holds 150-300 MiB, and a session through the whole course
would otherwise keep one JAX process per target. A target whose cases are slow
gets two checkers that share each check (worker/split.py).
"""

from __future__ import annotations

import threading
from pathlib import Path

from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.results import CheckResult
from pallas_puzzles.worker.client import Worker
from pallas_puzzles.worker.limits import Limits
from pallas_puzzles.worker.split import SharedChecker, shares

KEPT_CHECKERS = 2  # the current chapter's and the one before


class WorkersByTarget:
    def __init__(self, requested: str, mode: Mode = Mode.RUN, limits: Limits = Limits()) -> None:
        self.requested = requested
        self.mode = mode
        self.limits = limits
        self.workers: dict[str, Worker | SharedChecker] = {}
        self.warning: str | None = None
        self._starting = threading.Lock()  # one start at a time: the loop's checks and `prepare`'s

    def start(self, target: str) -> Backend:
        """The checker for `target`, started now if it is new; returns the backend it resolved."""
        with self._starting:
            return self._start(target)

    def _start(self, target: str) -> Backend:
        worker = self.workers.pop(target, None) or self._new(target)
        self.workers[target] = worker  # the most recently used last
        if worker.backend is None:
            try:
                backend = worker.start()
            except BaseException:
                del self.workers[target]
                raise
            self.warning = self.warning or worker.warning
            self._stop_least_recent()
            return backend
        return worker.backend

    def _new(self, target: str) -> Worker | SharedChecker:
        """A checker for `target`: two sharing each check where its cases are slow (worker/split.py)."""
        if self.mode is Mode.RUN and shares(target):
            return SharedChecker(self.requested, self.mode, target, self.limits)
        return Worker(self.requested, self.mode, target, self.limits)

    def _stop_least_recent(self) -> None:
        """Stop the checkers beyond KEPT_CHECKERS, least recently used first; never one that is checking."""
        idle = [target for target, worker in list(self.workers.items())[:-1] if not worker.busy]
        for target in idle[:max(0, len(self.workers) - KEPT_CHECKERS)]:
            self.workers.pop(target).stop()

    def wait_until_ready(self, target: str, timeout: float = 60.0) -> bool:
        """Wait until `target`'s checker shares its checks, where it will (benchmarks measure that state)."""
        worker = self.workers.get(target)
        return not isinstance(worker, SharedChecker) or worker.wait_until_shared(timeout)

    def prepare(self, puzzle: Puzzle) -> None:
        """Start `puzzle`'s checker in the background if it is not running: the learner is about to
        check a puzzle of another chapter. A failure to start is left for that check to report."""
        if puzzle.target in self.workers:
            return

        def start_quietly() -> None:
            try:
                self.start(puzzle.target)
            except Exception:  # the check that needs this checker says what went wrong
                pass

        threading.Thread(target=start_quietly, daemon=True, name="watch-prepare").start()

    def check(self, puzzle: Puzzle, file: Path) -> CheckResult:
        self.start(puzzle.target)
        return self.workers[puzzle.target].check(puzzle, file)

    def cancel(self) -> None:
        for worker in list(self.workers.values()):
            worker.cancel()

    def stop(self) -> None:
        workers = list(self.workers.values())  # a background start may end (and leave) meanwhile
        for worker in workers:  # every checker told first: they end together
            worker.ask_to_stop()
        for worker in workers:
            worker.stop()

    def __enter__(self) -> WorkersByTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
