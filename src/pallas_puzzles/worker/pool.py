"""Several checker processes working through a list of puzzles; results come back in order.

The pool never hangs: whatever goes wrong in a drain thread (a worker that
cannot restart, a broken pipe) is handed to the caller, who raises it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from pathlib import Path

from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.errors import UserError
from pallas_puzzles.metadata import Puzzle
from pallas_puzzles.results import CheckResult
from pallas_puzzles.worker.client import Worker


class WorkerPool:
    def __init__(self, requested: str, size: int, mode: Mode = Mode.RUN) -> None:
        self.workers = [Worker(requested, mode) for _ in range(max(1, size))]

    @property
    def warning(self) -> str | None:
        return self.workers[0].warning

    def start(self) -> Backend:
        errors: list[BaseException] = []

        def start_one(worker: Worker) -> None:
            try:
                worker.start()
            except BaseException as exc:  # handed to the caller below
                errors.append(exc)

        threads = [threading.Thread(target=start_one, args=(w,)) for w in self.workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            self.stop()
            raise errors[0]
        backend = self.workers[0].backend
        assert backend is not None
        return backend

    def check_in_order(self, jobs: list[tuple[Puzzle, Path]], fail_fast: bool = True) -> Iterator[CheckResult]:
        """Yield each job's result in the order given, as soon as it and those before it are done."""
        results: list[CheckResult | None] = [None] * len(jobs)
        done = [threading.Event() for _ in jobs]
        failures: list[BaseException] = []
        pending: queue.Queue[int] = queue.Queue()
        for index in range(len(jobs)):
            pending.put(index)

        def drain(worker: Worker) -> None:
            try:
                while not failures:
                    try:
                        index = pending.get_nowait()
                    except queue.Empty:
                        return
                    puzzle, file = jobs[index]
                    results[index] = worker.check(puzzle, file, fail_fast=fail_fast)
                    done[index].set()
            except BaseException as exc:  # raised in the caller's thread, below
                failures.append(exc)
                for event in done:  # wake the caller whatever it waits for
                    event.set()

        threads = [threading.Thread(target=drain, args=(w,), daemon=True) for w in self.workers]
        for thread in threads:
            thread.start()
        for index in range(len(jobs)):
            done[index].wait()
            if failures:
                raise _as_error(failures[0], jobs[index][0])
            result = results[index]
            assert result is not None
            yield result

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _as_error(failure: BaseException, puzzle: Puzzle) -> BaseException:
    if isinstance(failure, (UserError, KeyboardInterrupt)):
        return failure
    return RuntimeError(f"a checker process failed while checking puzzle {puzzle.number}: "
                        f"{type(failure).__name__}: {failure}")
