"""Several checker processes working through a list of puzzles; results come back in order.

The pool never hangs: whatever goes wrong in a drain thread (a worker that
cannot restart, a broken pipe) is handed to the caller, who raises it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.course.reader import DEFAULT_TARGET
from pallas_puzzles.errors import UserError
from pallas_puzzles.results import CheckResult
from pallas_puzzles.worker import forked
from pallas_puzzles.worker.client import Worker
from pallas_puzzles.worker.limits import Limits

# How many checkers run at once. A check is one single-threaded compile after
# another, so more than one checker per core only adds waiting. Memory is the
# other bound: the CLI and its checkers together stay within MEMORY_BUDGET_MIB.
# Measured on the whole course with bench/bench.py (jax 0.10.2, checkers that
# drop JAX's caches between puzzles): the CLI with two checkers peaks at about
# 320 MiB of proportional set size (PSS: the JAX libraries' pages, shared by the
# checkers, counted once), i.e. about WORKER_MIB per checker beside CLI_MIB.
# Summed resident sizes count those shared pages once per checker: ~300 MiB for
# one checker, ~550 MiB for two.
MAX_WORKERS = 4
WORKER_MIB = 140
CLI_MIB = 60
MEMORY_BUDGET_MIB = 500


def pool_size(jobs: int, cores: int | None = None) -> int:
    """Checkers for `jobs` puzzles: no more than the jobs, the cores or the memory budget allow."""
    by_memory = (MEMORY_BUDGET_MIB - CLI_MIB) // WORKER_MIB
    return max(1, min(jobs, cores or os.cpu_count() or 1, MAX_WORKERS, by_memory))


JobStarted = Callable[[int], None]  # the job's index in the list given
JobDone = Callable[[int, CheckResult], None]


class WorkerPool:
    """Checkers for one target, or for each target of `serves` (a process group, `target` first): a
    course whose targets need different processes is checked one pool after another."""

    def __init__(self, requested: str, size: int, mode: Mode = Mode.RUN, target: str = DEFAULT_TARGET,
                 limits: Limits = Limits(), serves: tuple[str, ...] = ()) -> None:
        self.target = target
        self.serves = serves or (target,)
        self.workers = [Worker(requested, mode, target, limits, self.serves) for _ in range(max(1, size))]
        # Cleared while a worker finishes starting in the background (start): its jobs wait for it.
        self._ready = {id(worker): threading.Event() for worker in self.workers}
        for event in self._ready.values():
            event.set()
        self._start_errors: list[BaseException] = []

    @property
    def warning(self) -> str | None:
        return self.workers[0].warning

    @property
    def backend(self) -> Backend:
        backend = self.workers[0].backend
        assert backend is not None, "start() the pool first"
        return backend

    def start(self) -> Backend:
        """Launch every checker, and return once the first is ready (it tells the backend): the others
        finish starting while it checks, each taking jobs once it is ready (the first is often the one
        started early, half a second before the others)."""
        for worker in self.workers:  # in order: the first takes the checker started early, if it suits
            try:
                worker.launch()
            except OSError as exc:
                self.stop()
                raise UserError(f"A checker process could not be started ({exc}); run `pallas-puzzles doctor`.") \
                    from None
        # Every checker of the pool is asked for: its zygote (where checkers are forked) may hand over to
        # a small reaper. A restart (a time-out, a crash) is rare enough to pay for a new zygote.
        forked.retire(self.workers[0].requested, self.workers[0].mode)
        try:
            backend = self.workers[0].wait_ready()
        except BaseException:
            self.stop()
            raise
        for worker in self.workers[1:]:
            self._ready[id(worker)].clear()
            threading.Thread(target=self._wait_ready, args=(worker,), daemon=True, name="checker-start").start()
        return backend

    def _wait_ready(self, worker: Worker) -> None:
        try:
            worker.wait_ready()
        except BaseException as exc:  # handed to whoever waits for this worker's jobs
            self._start_errors.append(exc)
        finally:
            self._ready[id(worker)].set()

    def check_in_order(self, jobs: list[tuple[Puzzle, Path]], fail_fast: bool = True,
                       on_start: JobStarted | None = None, on_done: JobDone | None = None,
                       timed_runs: int = 0) -> Iterator[CheckResult]:
        """Yield each job's result in the order given, as soon as it and those before it are done.

        `on_start` and `on_done` are called from the worker threads with the job's index as each
        job starts and ends, in whatever order that happens (for a progress view).
        """
        results: list[CheckResult | None] = [None] * len(jobs)
        done = [threading.Event() for _ in jobs]
        failures: list[BaseException] = []
        pending = _Pending([(puzzle.name, puzzle.target) for puzzle, _ in jobs])

        def drain(worker: Worker) -> None:
            try:
                self._ready[id(worker)].wait()
                if self._start_errors:
                    raise self._start_errors[0]
                while not failures:
                    index = pending.take(id(worker))
                    if index is None:
                        return
                    puzzle, file = jobs[index]
                    if on_start is not None:
                        on_start(index)
                    results[index] = result = worker.check(puzzle, file, fail_fast=fail_fast, timed_runs=timed_runs)
                    if on_done is not None:
                        on_done(index, result)
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
            worker.ask_to_stop()
        for worker in self.workers:
            worker.stop()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Pending:
    """The jobs no worker has taken yet, as (puzzle, target). A worker keeps to one puzzle while it has
    jobs left: a checker computes a puzzle's inputs and expected outputs once, and drops its compiled
    programs when it moves to another puzzle, so several jobs of one puzzle (dev check's stub, solution
    and mistakes; grade's submissions) cost least on one checker. Then it takes a puzzle no other worker
    is on: of its own target first, else of a target no other worker is on, else the first left. A
    checker pays a target's first checks once (up to 0.05-0.23 s of imports and first compiles, measured
    per target of the course), so checkers that work through different chapters pay it once each, not
    every checker for every chapter."""

    def __init__(self, jobs: list[tuple[str, str]]) -> None:
        self._jobs = jobs
        self._left = list(range(len(jobs)))
        self._on: dict[int, tuple[str, str]] = {}  # worker -> the (puzzle, target) it took last
        self._lock = threading.Lock()

    def take(self, worker: int) -> int | None:
        with self._lock:
            if not self._left:
                return None
            mine = self._on.get(worker)
            others = [job for key, job in self._on.items() if key != worker]
            busy_puzzles, busy_targets = {name for name, _ in others}, {target for _, target in others}
            free = [i for i in self._left if self._jobs[i][0] not in busy_puzzles]
            preferred = (
                (i for i in self._left if mine is not None and self._jobs[i][0] == mine[0]),  # its puzzle
                (i for i in free if mine is not None and self._jobs[i][1] == mine[1]),  # its target
                (i for i in free if self._jobs[i][1] not in busy_targets),  # a target no other is on
                iter(free),
                iter(self._left),
            )
            index = next(found for rule in preferred if (found := next(rule, None)) is not None)
            self._left.remove(index)
            self._on[worker] = self._jobs[index]
            return index


def _as_error(failure: BaseException, puzzle: Puzzle) -> BaseException:
    if isinstance(failure, (UserError, KeyboardInterrupt)):
        return failure
    return RuntimeError(f"a checker process failed while checking puzzle {puzzle.number}: "
                        f"{type(failure).__name__}: {failure}")
