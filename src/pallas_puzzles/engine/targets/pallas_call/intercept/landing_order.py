"""When a copy lands, and which of the copies pending on a semaphore a wait lands first.

A TPU lands a copy at any moment between its start and the wait that needs it, and lands the copies
pending on one semaphore in any order. The interpreter does one thing each time (its
dma_execution_mode; a wait pops the newest pending copy), so the checker's cases and runs vary both,
fixed per case so that every check of a file sees the same orders: mode_for_case and
oldest_first_for_case for one device's cases, turns.schedules for the runs of a ring. The hook makes
a wait take the oldest pending copy while the session asks (StrictSession.dma_oldest_first).
Private names (pallas_call/jax_private.py, with the versions checked): Semaphore.wait and its tasks.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.targets.pallas_call.intercept.session import active


def mode_for_case(index: int) -> str:
    """When copies land in a shape case, as hardware may do either: only when a wait needs their
    bytes in even cases (so a wait that another copy satisfies leaves the awaited data unlanded);
    at their start in odd ones (so a copy that lands early overwrites what is still being read).
    The race detector sees a read that does not wait in both."""
    return "on_wait" if index % 2 == 0 else "eager"


def oldest_first_for_case(index: int) -> bool:
    """Which of the copies pending on a semaphore a wait lands first, in the cases whose copies land
    when waited for: the newest in cases 0, 4, ... (so a wait meant for an older copy ends with the
    newer one's bytes), the oldest in cases 2, 6, ... (so one meant for the newer ends with the older's).
    Fixed per case: every check of a file sees the same orders."""
    return index % 4 == 2


class _OldestFirst(list):  # type: ignore[type-arg]
    """A semaphore's pending copies, handed out oldest first (the interpreter pops the newest)."""

    def pop(self, index: Any = -1) -> Any:
        return super().pop(0 if index == -1 else index)


def _landing_oldest_first(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def wait(self: Any, value: Any, global_core_id: Any, *args: Any, **kwargs: Any) -> Any:
        session, core = active.session, int(global_core_id)
        if session is not None and session.dma_oldest_first and type(self.tasks[core]) is list:
            self.tasks[core] = _OldestFirst(self.tasks[core])
        return original(self, value, global_core_id, *args, **kwargs)

    return wait


_installed = False


def install(shared_memory: Any) -> None:
    """Semaphore waits land the oldest pending copy first while the session asks (dma_oldest_first);
    installed once per process, by dma_watch and by the multi-chip target's hooks."""
    global _installed
    if not _installed:
        shared_memory.Semaphore.wait = _landing_oldest_first(shared_memory.Semaphore.wait)
        _installed = True
