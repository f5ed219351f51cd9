"""Barrier waits that can never complete stop at once, and barrier-rule errors carry their data.

The interpreter waits on a barrier with threading.Condition.wait() and no timeout, so a wait that
nothing will complete hangs for ever. TMA copies run eagerly in the warpgroup that issues them, so
only the kernel's own warpgroups can arrive on a barrier: when every warpgroup of the running block
(or cluster) has either finished or is blocked in a wait whose barrier phase has not moved, nothing
can ever arrive, and the wait is stopped within POLL_SECONDS. A wait this rule cannot judge (a
warp-level thread of a WarpMesh) is stopped after FALLBACK_SECONDS without any barrier activity.
While a run is scheduled (schedule.py), a blocked wait hands its thread's turn on instead, and the
scheduler knows at once when no thread can go.

A TMA copy completes a phase of its barrier; a phase nobody waited for when the barrier goes away
(its scope ends) is a copy that may still be writing shared memory as the kernel ends: refused.

Private API (mosaic_gpu/jax_private.py lists it, with the versions checked; hooks.py passes the
module): the interpreter's Barrier (__init__, arrive, _wait, deallocate; its fields cv, phase,
arrivals_count, num_arrivals, aborted, last_observed_phase_by_thread, ref_count, shared_memory) and
GPUSharedMemory (kernel_thread_finished, reset_per_cluster_state, all_concurrent_threads), and
its Warpgroup thread class.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from pallas_puzzles.engine.targets.mosaic_gpu.interpreter import block_and_warpgroup, current_op, line_of, wrap
from pallas_puzzles.engine.targets.mosaic_gpu.record import (
    BarrierMisuse,
    BarrierRuleBroken,
    BarrierStall,
    LoadNotWaited,
    Waiter,
    active,
)
from pallas_puzzles.engine.targets.mosaic_gpu.schedule import TURNS
from pallas_puzzles.source_line import SourceLine

POLL_SECONDS = 0.05
FALLBACK_SECONDS = 20.0


@dataclass
class _Blocked:
    barrier: Any
    phase: int  # the barrier's phase when the wait began: it is blocked while this has not moved
    thread: Any  # the interpreter's Warpgroup (or Warp)
    line: SourceLine | None
    block: tuple[int, ...]  # grid coordinates of the waiting block


_tls = threading.local()  # .thread: the interpreter thread this Python thread is waiting for
_blocked: dict[int, _Blocked] = {}  # Python thread id -> the wait it is blocked in
_lock = threading.Lock()
_last_activity = [time.monotonic()]
_warpgroup_class: list[type] = []


def _waiter(entry: _Blocked) -> Waiter:
    barrier = entry.barrier
    seen = barrier.last_observed_phase_by_thread.get(entry.thread, 0)
    return Waiter(block=entry.block, warpgroup=int(getattr(entry.thread, "warpgroup_id", 0)), line=entry.line,
                  num_arrivals=int(barrier.num_arrivals), arrivals=int(barrier.arrivals_count), phase=entry.phase,
                  seen_before=seen > 0)


def _stuck(memory: Any) -> tuple[Waiter, ...] | None:
    """The blocked waits when nothing can ever complete them, else None."""
    with _lock:
        entries = [e for e in _blocked.values() if e.barrier.shared_memory is memory]
    still = [e for e in entries if e.barrier.phase == e.phase and not e.barrier.aborted]
    if not still:
        return None
    order = sorted(still, key=lambda e: str(e.thread))
    if time.monotonic() - _last_activity[0] > FALLBACK_SECONDS:
        return tuple(_waiter(e) for e in order)
    warpgroup = _warpgroup_class[0]
    if any(not isinstance(e.thread, warpgroup) for e in still):
        return None  # a warp-level wait: left to the fallback
    finished = memory.__dict__.get("_pp_finished", set())
    waiting = {e.thread for e in still}
    everyone = [t for t in memory.all_concurrent_threads if isinstance(t, warpgroup)]
    if all(t in finished or t in waiting for t in everyone):
        return tuple(_waiter(e) for e in order)
    return None


class _WatchedCondition(threading.Condition):
    """The barrier's condition variable, whose endless wait checks for a deadlock while it waits."""

    def __init__(self, barrier: Any) -> None:
        super().__init__()
        self._pp_barrier = barrier

    def wait(self, timeout: float | None = None) -> bool:
        if timeout is not None or active.record is None:
            return super().wait(timeout)
        barrier = self._pp_barrier
        me = threading.get_ident()
        entry = _Blocked(barrier, int(barrier.phase), getattr(_tls, "thread", None), line_of(current_op()[1]),
                         block_and_warpgroup()[0])
        with _lock:
            _blocked[me] = entry
            _last_activity[0] = time.monotonic()
        try:
            if TURNS.holds(entry.thread):
                return self._in_turn(entry)
            while not super().wait(POLL_SECONDS):
                if barrier.phase != entry.phase or barrier.aborted:
                    return True  # the interpreter's loop looks at the barrier again
                stuck = _stuck(barrier.shared_memory)
                if stuck is not None:
                    raise BarrierStall(stuck)
            return True
        finally:
            with _lock:
                _blocked.pop(me, None)

    def _in_turn(self, entry: _Blocked) -> bool:
        """Hand the turn on until the barrier moves; the interpreter's loop then looks at it again."""
        barrier = entry.barrier
        self.release()  # the interpreter holds it once (`with self.cv:`); arrivals need it meanwhile
        try:
            moved = TURNS.block(entry.thread, lambda: barrier.phase != entry.phase or barrier.aborted)
        finally:
            self.acquire()
        if not moved:  # every blocked thread raises the same stall, whichever the interpreter records first
            memory = barrier.shared_memory
            with _lock:
                if "_pp_stall" not in memory.__dict__:
                    everyone = sorted((e for e in _blocked.values() if e.barrier.shared_memory is memory),
                                      key=lambda e: str(e.thread))
                    memory.__dict__["_pp_stall"] = tuple(_waiter(e) for e in everyone)
            raise BarrierStall(memory.__dict__["_pp_stall"])
        return False


def _watched_init(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.cv = _WatchedCondition(self)
        self._pp_last_arrival = None
        self._pp_copy = None  # the line of a TMA copy among this phase's arrivals
        self._pp_copied_phases = {}  # phase completed by arrivals that include a TMA copy -> its line
        self._pp_waits = {}  # each warpgroup (or warp) that waited on it -> the line of its first wait

    return __init__


def _misuse(barrier: Any, reason: str, line: SourceLine | None, thread: Any = None) -> BarrierMisuse:
    others = tuple(dict.fromkeys(where for who, where in getattr(barrier, "_pp_waits", {}).items()
                                 if who != thread and where is not None and where != line))
    return BarrierMisuse(reason=reason, num_arrivals=int(barrier.num_arrivals), arrivals=int(barrier.arrivals_count),
                         phase=int(barrier.phase), line=line, last_arrival=getattr(barrier, "_pp_last_arrival", None),
                         other_waits=others)


def _arrive(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def arrive(self: Any, *args: Any, **kwargs: Any) -> Any:
        _last_activity[0] = time.monotonic()
        line = line_of(current_op()[1])
        self._pp_last_arrival = line
        if current_op()[0] == "copy_gmem_to_smem":
            self._pp_copy = line
        phase = self.phase
        try:
            return original(self, *args, **kwargs)
        except ValueError as exc:  # a phase completed that some warpgroup had to see first
            if active.record is None:
                raise
            reason = "unobserved-phase" if not self.last_observed_phase_by_thread else "missed-phase"
            raise BarrierRuleBroken(_misuse(self, reason, line)) from exc
        finally:
            if self.phase != phase:  # this arrival completed the phase
                if self._pp_copy is not None:
                    self._pp_copied_phases[self.phase] = self._pp_copy
                self._pp_copy = None

    return arrive


def _wait(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def _wait(self: Any, thread: Any, *args: Any, **kwargs: Any) -> Any:
        seen = self.last_observed_phase_by_thread.get(thread)
        _tls.thread = thread
        if active.record is not None and thread not in self.__dict__.setdefault("_pp_waits", {}):
            self._pp_waits[thread] = line_of(current_op()[1])
        try:
            return original(self, thread, *args, **kwargs)
        except ValueError as exc:  # this warpgroup skipped a phase, or joined the barrier late
            if active.record is None:
                raise
            reason = "late-first-wait" if seen is None else "missed-phase"
            raise BarrierRuleBroken(_misuse(self, reason, line_of(current_op()[1]), thread)) from exc
        finally:
            _tls.thread = None
            _last_activity[0] = time.monotonic()

    return _wait


def _deallocate(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def deallocate(self: Any) -> Any:
        try:
            out = original(self)
        except ValueError as exc:  # arrivals that no wait consumed
            if active.record is None:
                raise
            raise BarrierRuleBroken(_misuse(self, "pending-arrivals", line_of(current_op()[1]))) from exc
        if active.record is not None and self.ref_count == 0:
            _copies_waited_for(self)
        return out

    return deallocate


def _copies_waited_for(barrier: Any) -> None:
    """When a barrier goes away, every phase a TMA copy completed must have been waited for by some
    thread: else that copy may still be writing shared memory (the kernel's or the next block's)."""
    seen = max(barrier.last_observed_phase_by_thread.values(), default=0)
    unseen = [line for phase, line in sorted(barrier._pp_copied_phases.items()) if phase > seen]
    if unseen:
        raise LoadNotWaited(unseen[0])


def _finished(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def kernel_thread_finished(self: Any, thread: Any) -> Any:
        self.__dict__.setdefault("_pp_finished", set()).add(thread)
        return original(self, thread)

    return kernel_thread_finished


def _new_cluster(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def reset_per_cluster_state(self: Any) -> Any:
        self.__dict__["_pp_finished"] = set()  # the next block (or cluster) starts its warpgroups afresh
        out = original(self)
        warpgroup = _warpgroup_class[0]
        TURNS.new_block(t for t in self.all_concurrent_threads if isinstance(t, warpgroup))
        return out

    return reset_per_cluster_state


def install(shared_memory: ModuleType) -> None:
    """Called once by hooks.install, with jax's shared_memory module."""
    _warpgroup_class.append(shared_memory.Warpgroup)
    wrap(shared_memory.Barrier, __init__=_watched_init, arrive=_arrive, _wait=_wait, deallocate=_deallocate)
    wrap(shared_memory.GPUSharedMemory, kernel_thread_finished=_finished, reset_per_cluster_state=_new_cluster)
