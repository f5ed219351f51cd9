"""Hooks that make the TPU interpreter's DMA and semaphore faults stop fast and name a line.

Three faults the interpreter alone handles badly for a learner (and one
thing it cannot run on a CPU without help, emit_pipeline, see below):
- a wait on a semaphore that nothing will ever signal spins forever (it polls
  every 0.1 s for a failure elsewhere); here it stops once the semaphore has
  had no pending copy and no change of count for STALL_SECONDS;
- on jax 0.10 a detected race is only printed; here it raises, as jax 0.12
  does by default, so the first race stops the kernel with both lines;
- a copy between refs of different shapes fails deep inside the simulated
  DMA; here it is refused when the kernel is traced, at the learner's line.

The interpreter's classes are private (Semaphore.wait, SharedMemory.check_failed and
get_random_virtual_device_id, and in the race detector's module its module-level `print`,
RaceDetectionState.check_read/check_write, its `writes` records and _ranges_overlap:
pallas_call/jax_private.py lists them, with the versions checked). Nothing here changes
what a correct kernel computes.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pallas_puzzles.engine.learner_lines import learner_call_site
from pallas_puzzles.engine.targets.pallas_call import jax_private
from pallas_puzzles.engine.targets.pallas_call.explain import lowering
from pallas_puzzles.engine.targets.pallas_call.intercept import (
    core_threads,
    core_waits,
    descriptors,
    dma_ledger,
    landing_order,
    semaphore_bounds,
    semaphore_clocks,
)
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictViolation, active
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

STALL_SECONDS = 1.5  # far longer than any pending copy of a puzzle takes to be picked up
DMA_ID_START = 100  # the interpreter numbers DMAs from 100; cores and devices are small numbers


class RaceReport(RuntimeError):
    """The race detector's report, and how many copies have written the racing window so far."""

    def __init__(self, report: str, copies: int) -> None:
        super().__init__(report)
        self.copies = copies


class SemaphoreStall(RuntimeError):
    """A wait that nothing can end: no copy pending on the semaphore, its count unchanged."""

    def __init__(self, waited_for: int, count: int, is_dma: bool, seconds: float,
                 cores: tuple[core_waits.CoreWait, ...] = (), of: int = 0) -> None:
        super().__init__(f"semaphore wait for {waited_for} with count {count} stalled for {seconds:.1f} s")
        self.waited_for, self.count, self.is_dma = waited_for, count, is_dma
        self.cores, self.of = cores, of  # on several cores: every running core's stuck wait, of `of` cores


@dataclass
class _Wait:
    semaphore: Any
    value: int
    core: int
    is_dma: bool
    count: int
    since: float
    where: Any = None  # JAX's record of the waiting line (a SourceInfo), when the interpreter gives one
    seen: Any = None  # the stuck picture of the cores at the last look (core_waits)


_waits: dict[int, _Wait] = {}  # thread ident -> the wait that thread is in


def _watch_wait(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def wait(self: Any, value: Any, global_core_id: Any, *args: Any, **kwargs: Any) -> Any:
        core = int(global_core_id)
        where = getattr(kwargs.get("logging_info"), "source_info", None)  # core_threads binds it to waits
        _waits[threading.get_ident()] = _Wait(self, int(value), core, bool(kwargs.get("has_tasks", False)),
                                              int(self.count_by_core[core]), time.monotonic(), where)
        try:
            return original(self, value, global_core_id, *args, **kwargs)
        finally:
            _waits.pop(threading.get_ident(), None)

    return wait


def _watch_check_failed(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def check_failed(self: Any) -> Any:
        original(self)
        waiting = _waits.get(threading.get_ident())
        if waiting is None or active.session is None or active.session.multi_device:
            return
        count = int(waiting.semaphore.count_by_core[waiting.core])
        now = time.monotonic()
        cores = core_threads.running() if active.session.cores > 1 else None
        if cores is not None:  # every core still running waits, and nothing can end a wait: twice in a row
            stuck = core_waits.stuck((_core_wait(w) for w in list(_waits.values())), cores[1])
            seen, waiting.seen = waiting.seen, core_waits.picture(stuck) if stuck else None
            if stuck and seen == waiting.seen:
                raise SemaphoreStall(waiting.value, count, waiting.is_dma, now - waiting.since, stuck, len(cores[0]))
            return
        # With one core nothing runs beside the wait: no copy pending on the semaphore means no signal can come.
        limit = STALL_SECONDS if active.session.cores > 1 else 0.0
        if count != waiting.count or waiting.semaphore.tasks[waiting.core] or count >= waiting.value:
            waiting.count, waiting.since = count, now  # progress, or a copy that can still signal
        elif now - waiting.since >= limit:
            raise SemaphoreStall(waiting.value, count, waiting.is_dma, now - waiting.since)

    return check_failed


def _core_wait(wait: _Wait) -> core_waits.CoreWait:
    semaphore, core = wait.semaphore, wait.core
    return core_waits.CoreWait(core, wait.value, int(semaphore.count_by_core[core]), bool(semaphore.tasks[core]),
                               wait.where)


def _raise_race(*parts: Any, **_: Any) -> None:
    """Stands in for `print` in jax 0.10's race detector: stop at the first race, as 0.12 does."""
    raise RuntimeError(" ".join(str(p) for p in parts))


def _access_parts(args: tuple[Any, ...]) -> tuple[Any, Any]:
    """(buffer key, window) of a check_read/check_write call: jax 0.10 passes (device, core, clock,
    key, window), jax 0.12 ((device, core), clock, key, window)."""
    return (args[2], args[3]) if isinstance(args[0], tuple) else (args[3], args[4])


def _entry_parts(entry: tuple[Any, ...]) -> tuple[int, Any]:
    """(writer id, window) of a recorded write: (device, core, clock, window, frame) on jax 0.10,
    ((device, core), clock, window, frame) on jax 0.12."""
    return (int(entry[0][0]), entry[2]) if isinstance(entry[0], tuple) else (int(entry[0]), entry[3])


def _count_copies(original: Callable[..., Any], overlap: Callable[[Any, Any], bool]) -> Callable[..., Any]:
    """A race report also says how many copies have written the racing window so far.

    One: the racing copy is the window's first, so the reader did not wait for it. More: the
    window held an earlier chunk that was still being read when the new copy was started into
    it (a slot still in use).
    """
    @functools.wraps(original)
    def check(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(self, *args, **kwargs)
        except RuntimeError as exc:
            if "RACE DETECTED" not in str(exc):
                raise
            key, window = _access_parts(args)
            copies = sum(1 for entry in self.writes[key]
                         if _entry_parts(entry)[0] >= DMA_ID_START and overlap(_entry_parts(entry)[1], window))
            raise RaceReport(str(exc), copies) from None

    return check


def _next_virtual_core(self: Any) -> int:
    """Each DMA gets a coordinate of its own in the race detector's vector clocks, in turn.

    The interpreter draws it at random, and by default from a range of one: two copies that share
    a coordinate look ordered, so a real race between them can go unseen, and a check could pass
    or fail by chance. Round robin over a wide clock (session.VECTOR_CLOCK_SIZE) is repeatable:
    numbered from 0 in each kernel's memory, the same copies get the same coordinates in every run,
    whatever the process ran before.
    """
    cores = int(self.num_cores)
    number = self.__dict__.get("_copies_numbered", 0)
    self.__dict__["_copies_numbered"] = number + 1
    return cores + number % (int(self.vector_clock_size) - cores)


def _checked_copy(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def copy(src_ref: Any, dst_ref: Any, *args: Any, **kwargs: Any) -> Any:
        session = active.session
        src, dst = tuple(getattr(src_ref, "shape", ())), tuple(getattr(dst_ref, "shape", ()))
        src_type, dst_type = str(getattr(src_ref, "dtype", "")), str(getattr(dst_ref, "dtype", ""))
        if session is not None and (src != dst or src_type != dst_type):
            line = learner_call_site(session.learner_file)
            where = (line,) if line is not None else ()
            if src != dst:
                raise StrictViolation(Finding(
                    FindingKind.DMA_SHAPE, f"This copy's source has shape {src} but its destination has shape {dst}.",
                    where=where))
            raise StrictViolation(Finding(
                FindingKind.DMA_DTYPE,
                f"This copy's source holds {src_type} but its destination holds {dst_type}: a DMA copies bytes "
                "and cannot convert between them.", where=where))
        if session is None:
            return original(src_ref, dst_ref, *args, **kwargs)
        # sync_copy and async_copy start their copy inside jax, where the recorded traceback can stop
        # short of the learner's frame; record the whole stack of this call instead (the copy ledger
        # names a copy by it).
        from jax.extend import source_info_util

        with source_info_util.user_context(jax_private.current_traceback()):
            return original(src_ref, dst_ref, *args, **kwargs)

    return copy


def _as_if_on_a_tpu(original: Callable[..., Any]) -> Callable[..., Any]:
    """emit_pipeline asks the chip for its memory tiling, and a CPU has none.

    On the CPU the inner pipeline is traced as if for the TPU that the lowering
    check targets; jax 0.12's own error message recommends this abstract mesh.
    """
    @functools.wraps(original)
    def emit_pipeline(*args: Any, **kwargs: Any) -> Any:
        pipeline = original(*args, **kwargs)
        session = active.session
        if session is None or not session.backend.interprets:
            return pipeline

        @functools.wraps(pipeline)
        def run(*refs: Any, **run_kwargs: Any) -> Any:
            line = learner_call_site(session.learner_file)
            if session.calls and line is not None:
                session.calls[-1].pipelines.append(line)
            with lowering.target_tpu():
                return pipeline(*refs, **run_kwargs)

        return run

    return emit_pipeline


_installed = False


def install() -> None:
    """Install the hooks once per process; they act only while a StrictSession is active."""
    global _installed
    if _installed:
        return
    from jax.experimental.pallas import tpu as pltpu

    interpret_pallas_call, race_detection_state, shared_memory = (
        jax_private.interpreter(), jax_private.race_detection_state(), jax_private.shared_memory())

    dma_ledger.hook(interpret_pallas_call, shared_memory)
    core_threads.install()
    semaphore_bounds.install()

    landing_order.install(shared_memory)
    semaphore_clocks.install()
    shared_memory.Semaphore.wait = _watch_wait(shared_memory.Semaphore.wait)
    shared_memory.SharedMemory.get_random_virtual_device_id = _next_virtual_core
    shared_memory.SharedMemory.check_failed = _watch_check_failed(shared_memory.SharedMemory.check_failed)
    race_detection_state.print = _raise_race  # jax 0.12 raises itself and never calls print
    detector, overlap = race_detection_state.RaceDetectionState, race_detection_state._ranges_overlap
    detector.check_read = _count_copies(detector.check_read, overlap)
    detector.check_write = _count_copies(detector.check_write, overlap)
    for name in ("make_async_copy", "async_copy", "sync_copy"):
        if hasattr(pltpu, name):
            setattr(pltpu, name, _checked_copy(getattr(pltpu, name)))
    descriptors.keep()
    pltpu.emit_pipeline = _as_if_on_a_tpu(pltpu.emit_pipeline)
    _installed = True
