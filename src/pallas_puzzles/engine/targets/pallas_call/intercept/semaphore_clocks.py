"""A semaphore wait is ordered after the signals it took, not after every signal so far.

The race detector orders a wait after its semaphore's signals: JAX's TPU interpreter merges the clock
of every signal into one clock per core, and a wait takes it whole. A wait for 1 on a semaphore that
has been signalled twice is then ordered after both signals, though on a chip it may return as soon
as the first arrives (JAX's own TODO: "model happens-before more precisely for the case where
semaphores are over-signaled"). A core that signals "I am running" and later "my partial is there"
to one semaphore, read after one wait, races; here it was caught only when the reading core happened
to get there before the second signal, so the same file passed some checks and failed others.

Here each core's signals are kept in arrival order with their clocks and counts, and a wait for n
takes the first n units: it is ordered after the signals those units came from, whatever came later.
Copies (DMA semaphores) signal the same way, by bytes. Only with race detection on; nothing changes
what a kernel computes. Private names (pallas_call/jax_private.py, with the versions checked): the
interpreter's Semaphore.signal, wait, clocks, cv and detect_races.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.targets.pallas_call import jax_private

_installed = False


class _Arrivals:
    """One semaphore's signals not yet taken, per core: [count left, the signaller's clock]."""

    def __init__(self) -> None:
        self.units: dict[int, deque[list[Any]]] = {}
        self.waiting: dict[int, int] = {}  # core -> the count its wait in progress asks for

    def first(self, core: int, count: int) -> Any:
        """The clocks of the first `count` units merged; None when there are none."""
        merged, needed = None, count
        for left, clock in self.units.get(core, ()):
            merged = _copy(clock) if merged is None else _merged(merged, clock)
            needed -= left
            if needed <= 0:
                break
        return merged

    def take(self, core: int, count: int) -> None:
        units = self.units.get(core, deque())
        while count > 0 and units:
            if units[0][0] <= count:
                count -= units.popleft()[0]
            else:
                units[0][0] -= count
                count = 0


def _copy(clock: Any) -> Any:
    return clock.copy()


def _merged(into: Any, clock: Any) -> Any:
    if hasattr(into, "update"):  # jax 0.12: a clock object
        into.update(clock)
    else:  # jax 0.10: a numpy array
        import numpy as np

        np.maximum(into, clock, out=into)
    return into


def _arrivals(semaphore: Any) -> _Arrivals:
    found = semaphore.__dict__.get("_pallas_puzzles_arrivals")
    if found is None:
        found = semaphore.__dict__["_pallas_puzzles_arrivals"] = _Arrivals()
    return found  # type: ignore[no-any-return]


def _offer(semaphore: Any, core: int, arrivals: _Arrivals) -> None:
    """What the core's wait in progress reads when it ends: the clocks of the units it will take."""
    if core in arrivals.waiting:
        clock = arrivals.first(core, arrivals.waiting[core])
        if clock is not None:
            semaphore.clocks[core] = clock


def _keeping_arrivals(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def signal(self: Any, inc: Any, global_core_id: Any, clock: Any, *args: Any, **kwargs: Any) -> Any:
        if not self.detect_races or clock is None:
            return original(self, inc, global_core_id, clock, *args, **kwargs)
        core = int(global_core_id)
        with self.cv:  # reentrant: the original takes it again, and the wait reads under it
            result = original(self, inc, global_core_id, clock, *args, **kwargs)
            arrivals = _arrivals(self)
            arrivals.units.setdefault(core, deque()).append([int(inc), _copy(clock)])
            _offer(self, core, arrivals)
        return result

    return signal


def _taking_first_arrivals(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def wait(self: Any, value: Any, global_core_id: Any, *args: Any, **kwargs: Any) -> Any:
        if not self.detect_races:
            return original(self, value, global_core_id, *args, **kwargs)
        core, count = int(global_core_id), int(value)
        arrivals = _arrivals(self)
        with self.cv:
            arrivals.waiting[core] = count
            _offer(self, core, arrivals)
        try:
            return original(self, value, global_core_id, *args, **kwargs)
        finally:
            with self.cv:
                arrivals.waiting.pop(core, None)
                arrivals.take(core, count)

    return wait


def install() -> None:
    """Order each wait after the signals it takes (idempotent; by every TPU target that detects races)."""
    global _installed
    if not _installed:
        semaphore = jax_private.shared_memory().Semaphore
        semaphore.signal = _keeping_arrivals(semaphore.signal)
        semaphore.wait = _taking_first_arrivals(semaphore.wait)
        _installed = True
