"""One checker per target, started when a puzzle of that target is first checked.

Watch mode moves from chapter to chapter; a chapter of another target needs a
checker process set up for it (a host device count, other hooks). This keeps
one per target seen, so coming back to a chapter costs nothing, and cancels
whichever one is running. With `keep_warm` (the fast path's, on unless
PALLAS_PUZZLES_FAST=0) each worker keeps a warm spare for a stopped check, and
`warm_up` starts the next chapter's checker before the learner gets there.
"""

from __future__ import annotations

from pathlib import Path

from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.results import CheckResult
from pallas_puzzles.worker.client import Worker
from pallas_puzzles.worker.limits import Limits


class WorkersByTarget:
    def __init__(self, requested: str, mode: Mode = Mode.RUN, limits: Limits = Limits(),
                 keep_warm: bool = False) -> None:
        self.requested = requested
        self.mode = mode
        self.limits = limits
        self.keep_warm = keep_warm
        self.workers: dict[str, Worker] = {}
        self.warning: str | None = None

    def _worker(self, target: str) -> Worker:
        worker = self.workers.get(target)
        if worker is None:
            worker = self.workers[target] = Worker(self.requested, self.mode, target, self.limits,
                                                   keep_spare=self.keep_warm)
        return worker

    def warm_up(self, puzzle: Puzzle) -> None:
        """With keep_warm, have the checker of `puzzle`'s target start (and check its reference solution)
        in the background if it has not started yet: its first check is then as fast as any."""
        if self.keep_warm:
            self._worker(puzzle.target).warm_up(puzzle)

    def start(self, target: str) -> Backend:
        """The checker for `target`, started now if it is new; returns the backend it resolved."""
        worker = self._worker(target)
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
