"""One interpreter thread at a time, in a seeded order: a Mosaic GPU kernel's interleaving made repeatable.

JAX's GPU interpreter runs each warpgroup of a block (and each block of a cluster, and the warps of
a WarpMesh) on a thread of its own, and the threads meet only in the interpreter's callbacks (loads,
stores, TMA copies, wgmma, barrier arrivals and waits). Left alone, the operating system decides
which thread goes first at every callback, so a barrier phase completed before a warpgroup saw the
last one, or a slot refilled before its reader ran, shows in some runs and not in others.

While a run is scheduled here, a thread enters a callback only when given the turn, and the turn is
given only once every thread has stopped at a callback (ready for its next one, blocked in a
barrier wait, or finished): then the `Schedule` chooses among those that can go. The computation
between two callbacks touches nothing shared, so the same schedule gives the same run; and a barrier
wait that nothing can end is a deadlock the moment no thread can go (no timeout to wait out).

Threads are the interpreter's own objects (Warpgroup, Warp), identified duck-typed: a warp has a
`warp_id`, a warpgroup's warps come from `warps()`. A warpgroup that enters a WarpMesh is away while
its warps run; its next callback means they have all finished. No JAX here (unit-testable): the
hooks (interpreter.py, barriers.py) call `TURNS`.
"""

from __future__ import annotations

import functools
import random
import threading
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

RUNNING, READY, HOLDING, BLOCKED, AWAY, DONE = "running", "ready", "holding", "blocked", "away", "done"
# A thread that never reaches its next callback (it failed outside one, through JAX's fault or ours)
# would keep the others waiting for ever: after this long without a turn given, the run goes on
# unscheduled instead. The puzzles' kernels give a turn every few milliseconds, once each thread has
# compiled its part of the interpreter (under a second, on the first run of a kernel).
UNSCHEDULED_AFTER_SECONDS = 20.0


def _rank(thread: Hashable) -> tuple[int, int, int]:
    """Block, warpgroup, warp: the order threads are numbered in (a warpgroup before its warps)."""
    return (int(getattr(thread, "block_id", 0)), int(getattr(thread, "warpgroup_id", 0)),
            int(getattr(thread, "warp_id", -1)))


@dataclass(frozen=True)
class Schedule:
    """Which thread goes when several can. Without `shuffle`, the first thread in rank order (the last,
    `reverse`) runs ahead until it must wait; with it, each turn goes with that probability to a
    thread drawn from `seed` instead."""

    name: str
    reverse: bool = False
    seed: int = 0
    shuffle: float = 0.0

    def player(self) -> Callable[[list[Hashable]], Hashable]:
        rng = random.Random(self.seed)

        def pick(candidates: list[Hashable]) -> Hashable:
            ranked = sorted(candidates, key=_rank, reverse=self.reverse)
            if self.shuffle and rng.random() < self.shuffle:
                return rng.choice(ranked)
            return ranked[0]

        return pick


def schedules(seed: int) -> tuple[Schedule, ...]:
    """The orders a case's threads are run in, in this order: the same for every check of a case."""
    return (Schedule("lowest thread first"), Schedule("highest thread first", reverse=True),
            Schedule("shuffled", seed=seed, shuffle=0.5))


class Turns:
    """The scheduler of one run at a time (the interpreter's shared memory is process-wide too)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.active = False
        self.most_threads = 0  # the most threads one block (or cluster) ran at once in this run
        self._reset(Schedule("idle"))

    def _reset(self, schedule: Schedule) -> None:
        self.state: dict[Hashable, str] = {}
        self.waits: dict[Hashable, Callable[[], bool]] = {}  # a blocked thread -> whether it can go on
        self.granted: Hashable | None = None
        self.opened = False
        self.stalled = False
        self._pick = schedule.player()

    def begin(self, schedule: Schedule) -> None:
        with self.lock:
            self._reset(schedule)
            self.active, self.most_threads = True, 0

    def end(self) -> None:
        with self.lock:
            self.opened, self.active = True, False
            self.changed.notify_all()

    def open(self) -> None:
        """Let every thread go as it likes: after a failure each must reach the interpreter's own check."""
        with self.lock:
            self.opened = True
            self.changed.notify_all()

    def new_block(self, threads: Iterable[Hashable]) -> None:
        """A block (or cluster) starts: these threads run, each until its first callback."""
        with self.lock:
            if not self.active:
                return
            self.state = dict.fromkeys(threads, RUNNING)
            self.waits.clear()
            self.granted = None
            self.most_threads = max(self.most_threads, len(self.state))

    def _known(self, thread: Hashable) -> bool:
        return self.active and not self.opened and thread in self.state

    # --- the gates -------------------------------------------------------------------------

    def take(self, thread: Hashable) -> bool:
        """Wait for this thread's turn to run one callback; False when the run is not scheduled."""
        with self.lock:
            if self.state.get(thread) == AWAY:  # its warps have all finished: it is back
                for other in list(self.state):
                    if getattr(other, "warp_id", None) is not None and _parent(other) == thread:
                        self.state[other] = DONE
            if not self._known(thread) or self.state[thread] == DONE:
                return False
            self.state[thread] = READY
            self._await(thread)
            return True

    def give(self, thread: Hashable, then: str = RUNNING) -> None:
        """The callback is done: the thread computes on to its next callback (`then` RUNNING), has
        finished (DONE), or waits for its warps (AWAY, which start RUNNING)."""
        with self.lock:
            if not self._known(thread):
                return
            self.state[thread] = then
            if then == AWAY:
                for warp in thread.warps():  # type: ignore[attr-defined]
                    self.state[warp] = RUNNING
                self.most_threads = max(self.most_threads, sum(s != DONE for s in self.state.values()) - 1)
            if self.granted == thread:
                self.granted = None
            self._decide()

    def block(self, thread: Hashable, can_go: Callable[[], bool]) -> bool:
        """The thread holding the turn must wait (a barrier phase not complete yet): hand the turn on
        until `can_go()`. False when no thread can ever go: a deadlock, and every blocked thread is told."""
        with self.lock:
            if not self._known(thread):
                return True
            self.state[thread], self.waits[thread] = BLOCKED, can_go
            self.granted = None
            self._await(thread)
            self.waits.pop(thread, None)
            return not self.stalled

    def holds(self, thread: Hashable) -> bool:
        with self.lock:
            return self._known(thread) and self.granted == thread

    # --- choosing ------------------------------------------------------------------------

    def _await(self, thread: Hashable) -> None:
        self._decide()
        while self.granted != thread and not self.opened:
            if not self.changed.wait(UNSCHEDULED_AFTER_SECONDS):
                self.opened = True
                self.changed.notify_all()
        if not self.opened:
            self.state[thread] = HOLDING

    def _decide(self) -> None:
        """Give the turn once no thread is between two callbacks (called with the lock held)."""
        if self.granted is not None or self.opened or RUNNING in self.state.values():
            return
        candidates = [t for t, s in self.state.items() if s == READY or (s == BLOCKED and self.waits[t]())]
        if candidates:
            self.granted = self._pick(candidates)
            self.changed.notify_all()
        elif BLOCKED in self.state.values():
            self.stalled = self.opened = True
            self.changed.notify_all()


def _parent(warp: Hashable) -> Hashable:
    return warp.warpgroup()  # type: ignore[attr-defined]


TURNS = Turns()


def _thread_of(args: tuple, kwargs: dict) -> Hashable | None:  # type: ignore[type-arg]
    """The interpreter thread a callback runs for: its `thread` (or `warpgroup`) argument, passed by
    name or as one of the first positional ones (token, mesh_location, thread, ...)."""
    for value in (kwargs.get("thread"), kwargs.get("warpgroup"), *args[:4]):
        if hasattr(value, "warpgroup_id"):
            return value  # type: ignore[no-any-return]
    return None


def gated(callback: Callable[..., object], then: str = RUNNING) -> Callable[..., object]:
    """`callback`, one of the interpreter's, run in its thread's turn while a run is scheduled; after
    it the thread is `then` (RUNNING; DONE after its last callback; AWAY when it starts its warps)."""
    @functools.wraps(callback)
    def in_turn(*args: object, **kwargs: object) -> object:
        thread = _thread_of(args, kwargs) if TURNS.active else None
        if thread is None or not TURNS.take(thread):
            return callback(*args, **kwargs)
        try:
            out = callback(*args, **kwargs)
        except BaseException:
            TURNS.open()  # a failure: every thread must be free to reach the interpreter's own check
            raise
        TURNS.give(thread, then)
        return out

    return in_turn
