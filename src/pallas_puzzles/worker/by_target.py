"""One checker per target, started when a puzzle of that target is first checked.

Watch mode moves from chapter to chapter; a chapter of another target needs a
checker process set up for it (a host device count, other hooks). This keeps
one per target seen, so coming back to a chapter costs nothing, and cancels
whichever one is running.
"""

from __future__ import annotations

from pathlib import Path

from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.results import CheckResult
from pallas_puzzles.worker.client import Limits, Worker


class WorkersByTarget:
    def __init__(self, requested: str, mode: Mode = Mode.RUN, limits: Limits = Limits()) -> None:
        self.requested = requested
        self.mode = mode
        self.limits = limits
        self.workers: dict[str, Worker] = {}
        self.warning: str | None = None

    def start(self, target: str) -> Backend:
        """The checker for `target`, started now if it is new; returns the backend it resolved."""
        worker = self.workers.get(target)
        if worker is None:
            worker = self.workers[target] = Worker(self.requested, self.mode, target, self.limits)
        if worker.backend is None:
            try:
                backend = worker.start()
            except BaseException:
                del self.workers[target]
                raise
            self.warning = self.warning or worker.warning
            return backend
        return worker.backend

    def check(self, puzzle: Puzzle, file: Path) -> CheckResult:
        self.start(puzzle.target)
        return self.workers[puzzle.target].check(puzzle, file)

    def cancel(self) -> None:
        for worker in list(self.workers.values()):
            worker.cancel()

    def stop(self) -> None:
        for worker in self.workers.values():
            worker.stop()

    def __enter__(self) -> WorkersByTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
