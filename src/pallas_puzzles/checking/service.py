"""The checking service: every command that checks many files (verify/lower/perf, grade, dev check,
the reference-time tool, the mutation harness) hands its jobs here.

For each backend and mode asked for, it learns what the backend is (without a checker when that
is known beforehand, else from the first pool it starts), skips the jobs that cannot run there
(`support.refusal`, or bad input when the caller named one puzzle), answers from the result cache
where the caller allows it, and checks the rest on pools of checker processes: one pool per group of
targets that can share a process (engine.targets.process_groups: every built-in one), backend and
mode, one pool at a time (two would double the memory). Listeners hear of each step
(`events`); the report holds every job's outcome in job order.

An accelerator's jobs go first: one that is not there stops the run before it has cost much.
"""

from __future__ import annotations

import datetime
import queue
import threading
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING

from pallas_puzzles.backends import INTERPRET, Backend, Mode
from pallas_puzzles.checking import support
from pallas_puzzles.checking.cache import ResultCache, known_backend
from pallas_puzzles.checking.events import Dispatcher, Listener
from pallas_puzzles.checking.jobs import Job, Options, Outcome, RunReport
from pallas_puzzles.checking.support import Refusal
from pallas_puzzles.errors import UserError
from pallas_puzzles.results import CheckResult

if TYPE_CHECKING:
    from pallas_puzzles.worker.pool import WorkerPool

Settle = Callable[[int, CheckResult, float], None]  # job index, result, seconds the check took


def run(jobs: Sequence[Job], options: Options = Options(), listeners: Sequence[Listener] = ()) -> RunReport:
    """Check every job; the outcomes come back in job order, and listeners hear of each as it comes."""
    started, clock = datetime.datetime.now(), time.perf_counter()
    dispatch = Dispatcher(listeners, jobs)
    with _OnePool(options, dispatch) as pools:
        for (requested, mode), indices in _by_backend(jobs).items():
            _answer(jobs, indices, requested, mode, options, dispatch, pools)
    outcomes = [outcome for outcome in dispatch.outcomes if outcome is not None]
    assert len(outcomes) == len(jobs), "every job has an outcome"
    report = RunReport(outcomes, started, time.perf_counter() - clock)
    dispatch.done(report)
    return report


def _by_backend(jobs: Sequence[Job]) -> dict[tuple[str, Mode], list[int]]:
    """Job indices by (backend requested, mode): an accelerator's first, the interpreter's next, lowering last."""
    keys: dict[tuple[str, Mode], list[int]] = {}
    for index, job in enumerate(jobs):
        keys.setdefault((job.requested, job.mode), []).append(index)
    order = sorted(keys, key=lambda key: (key[1] is Mode.LOWER, key[0] == INTERPRET.name))
    return {key: keys[key] for key in order}


def _by_checker(jobs: Sequence[Job], indices: list[int]) -> dict[tuple[str, ...], list[int]]:
    """Job indices by the process group that checks them (engine.targets.process_groups), in job order
    within a group: one pool of checkers serves a whole group, switching target from job to job."""
    from pallas_puzzles.engine.targets import process_groups

    groups = process_groups([jobs[index].puzzle.target for index in indices])
    group_of = {target: group for group in groups for target in group}
    found: dict[tuple[str, ...], list[int]] = {group: [] for group in groups}
    for index in indices:
        found[group_of[jobs[index].puzzle.target]].append(index)
    return found


def _refusals(jobs: Sequence[Job], indices: list[int], backend: Backend | None, mode: Mode,
              options: Options) -> dict[int, Refusal]:
    found = {i: refusal for i in indices if (refusal := support.refusal(jobs[i].puzzle, backend, mode)) is not None}
    if found and options.refusal_is_bad_input:
        raise UserError(next(iter(found.values())).sentence)
    return found


def _answer(jobs: Sequence[Job], indices: list[int], requested: str, mode: Mode, options: Options,
            dispatch: Dispatcher, pools: _OnePool) -> None:
    """Every job of one backend request and mode: refused, stored or checked."""
    # What can be refused before any checker starts is: a jax too old for every backend the puzzle
    # declares, or, where the backend is known beforehand, anything about it.
    backend = known_backend(requested, mode)
    refused = _refusals(jobs, indices, backend, mode, options)
    if backend is None and (left := [i for i in indices if i not in refused]):
        serves, first = next(iter(_by_checker(jobs, left).items()))
        backend = pools.open(requested, mode, serves, len(first)).backend
        refused |= _refusals(jobs, left, backend, mode, options)
    if backend is not None:
        dispatch.resolved(backend, mode)
    timed = options.timed_runs > 0 and backend is not None and not backend.interprets  # a measurement: not stored
    cache = ResultCache(options.workspace, requested, mode, options.fail_fast) if options.workspace and not timed \
        else None
    keys: dict[int, str | None] = {}
    for index in indices:
        job = jobs[index]
        if index in refused:
            dispatch.settled(index, Outcome(job, refusal=refused[index], backend=backend))
            continue
        keys[index] = cache.key(job.puzzle, job.file) if cache is not None else None
        stored = cache.get(keys[index], job.puzzle) if cache is not None and options.use_stored else None
        if stored is not None:
            dispatch.settled(index, Outcome(job, stored, backend=backend, cached=True))

    def settle(index: int, result: CheckResult, seconds: float) -> None:
        job = jobs[index]
        if cache is not None:
            cache.put(keys[index], job.puzzle, job.file, result)
        dispatch.settled(index, Outcome(job, result, backend=backend, seconds=seconds))

    unchecked = [i for i in keys if dispatch.outcomes[i] is None]
    for serves, group in _by_checker(jobs, unchecked).items():
        _check(pools.open(requested, mode, serves, len(group)), jobs, group, options, dispatch, settle)
    pools.close()


def _check(pool: WorkerPool, jobs: Sequence[Job], group: list[int], options: Options, dispatch: Dispatcher,
           settle: Settle) -> None:
    """Check `group` on `pool`. The pool's threads only post what happens; it is told to the listeners
    here, on the caller's thread, so that a listener needs no lock and Ctrl-C reaches the caller."""
    posted: queue.Queue[tuple[int, float, CheckResult | None] | BaseException | None] = queue.Queue()

    def drain() -> None:
        try:
            for _ in pool.check_in_order([(jobs[i].puzzle, jobs[i].file) for i in group], options.fail_fast,
                                         on_start=lambda n: posted.put((n, time.perf_counter(), None)),
                                         on_done=lambda n, result: posted.put((n, time.perf_counter(), result)),
                                         timed_runs=options.timed_runs):
                pass
        except BaseException as exc:  # raised on the caller's thread, below
            posted.put(exc)
        else:
            posted.put(None)

    threading.Thread(target=drain, daemon=True).start()
    began: dict[int, float] = {}
    while (event := posted.get()) is not None:
        if isinstance(event, BaseException):
            raise event
        n, at, result = event
        if result is None:
            began[n] = at
            dispatch.started(group[n])
        else:
            settle(group[n], result, at - began.get(n, at))


class _OnePool:
    """The one pool of checkers a run holds at a time: opening another closes the one before."""

    def __init__(self, options: Options, dispatch: Dispatcher) -> None:
        self.options = options
        self.dispatch = dispatch
        self.held: tuple[tuple[str, Mode], WorkerPool] | None = None

    def open(self, requested: str, mode: Mode, serves: tuple[str, ...], jobs: int) -> WorkerPool:
        """A started pool for the checks of the targets `serves` (a process group) on this backend and mode:
        the one held, if it serves them all."""
        from pallas_puzzles.worker import pool as pools
        from pallas_puzzles.worker.limits import Limits

        key = (requested, mode)
        if self.held is not None and self.held[0] == key and set(serves) <= set(self.held[1].serves):
            return self.held[1]
        self.close()
        size = pools.pool_size(jobs, self.options.workers or None)
        pool = pools.WorkerPool(requested, size, mode, serves[0], self.options.limits or Limits(), serves)
        self.held = (key, pool)
        pool.start()
        if pool.warning:
            self.dispatch.warned(pool.warning)
        return pool

    def close(self) -> None:
        if self.held is not None:
            self.held[1].stop()
            self.held = None

    def __enter__(self) -> _OnePool:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()
