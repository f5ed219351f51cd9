"""One device at a time, in a seeded order: the interleaving of a multi-device kernel made repeatable.

The TPU interpreter runs every device of a `shard_map` on a thread of its own, and each device
reaches shared memory only through the interpreter's callbacks (loads, stores, copies, signals,
waits). Left alone, the operating system decides which device goes first at every callback, so
a hazard that shows only when one device runs ahead of another (a slot reused too early, a wait
met by the wrong copy) is caught in some runs and not in others.

While a run is scheduled here, a device may enter a callback only when given the turn, and the
turn is given only when every device has stopped at a callback (ready for its next one, blocked in
a wait, or done): then `Schedule.pick` chooses among the devices that can go, from a seed. The
computation between two callbacks touches nothing shared, so the same seed gives the same run,
and a wait that nothing can end is a deadlock the moment no device can go.

No jax here: hooks.py gates the interpreter's callbacks and semaphores with `TURNS`.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pallas_puzzles.engine.targets.numpy_callbacks import marked

RUNNING, READY, HOLDING, BLOCKED, BARRIER, DONE = "running", "ready", "holding", "blocked", "barrier", "done"


@dataclass(frozen=True)
class Schedule:
    """A seeded order of play: each device gets a priority, and of the devices that can go the one
    with the highest runs, so a device runs ahead until it must wait, then the next one does.
    `reverse` turns the priorities round: each pair of devices then runs in the other order.
    `oldest_first`: of the copies pending on a semaphore, a wait lands the oldest first (else the
    newest), so a wait meant for a device's own copy can end on a neighbour's that came earlier."""

    seed: int
    reverse: bool = False
    oldest_first: bool = False

    def order(self, devices: int) -> tuple[int, ...]:
        """The devices from the highest priority to the lowest."""
        order = random.Random(self.seed).sample(range(devices), devices)
        return tuple(reversed(order)) if self.reverse else tuple(order)


def schedules(seed: int) -> tuple[Schedule, ...]:
    """The two runs of a case: its devices take turns by priorities drawn from `seed`, then by the same
    priorities reversed with waits landing the oldest copy pending on their semaphore instead of the
    newest, so every pair of neighbours runs ahead of the other once, and copies land in both orders."""
    return Schedule(seed), Schedule(seed, reverse=True, oldest_first=True)


class Turns:
    """The scheduler of one run at a time (the interpreter's shared memory is process-wide too)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # a deadlock found while choosing fails the run, which opens the gates
        self.active = False
        self._mine = threading.local()  # the device whose turn this thread holds, if any
        self._begin(0, Schedule(0), lambda blocked: None)

    def _begin(self, devices: int, schedule: Schedule, on_deadlock: Callable[[list[int]], None]) -> None:
        self.devices = devices
        self.state = dict.fromkeys(range(devices), RUNNING)
        self.waits: dict[int, _Changed] = {}  # blocked device -> whether its semaphore changed since
        self.wake = {d: threading.Condition(self.lock) for d in range(devices)}
        self.granted: int | None = None
        self.opened = False
        self.steps = 0
        self._order = schedule.order(devices)
        self._on_deadlock = on_deadlock

    def begin(self, devices: int, schedule: Schedule, on_deadlock: Callable[[list[int]], None]) -> None:
        """Schedule the next run over `devices`; `on_deadlock(done devices)` when no device can go."""
        with self.lock:
            self._begin(devices, schedule, on_deadlock)
            self.active = True

    def end(self) -> None:
        self.open()
        with self.lock:
            self.active = False

    def open(self) -> None:
        """Let every device go as it likes: after a failure each must reach the interpreter's own check."""
        with self.lock:
            self.opened = True
            for condition in self.wake.values():
                condition.notify_all()

    def holder(self) -> int | None:
        """The device whose turn this thread holds, when a run is scheduled."""
        return getattr(self._mine, "device", None) if self.active and not self.opened else None

    # --- the gates -------------------------------------------------------------------------

    def take(self, device: int) -> None:
        """Wait for this device's turn to run one callback."""
        with self.lock:
            if not self._known(device):
                return
            self.state[device] = READY
            self._await(device)
        self._mine.device = device

    def give(self, device: int) -> None:
        """The callback is done: the device computes on, to its next callback."""
        self._mine.device = None
        with self.lock:
            if self._known(device):
                self.state[device] = RUNNING
                self.granted = None if self.granted == device else self.granted
                self._decide()

    def block(self, device: int, snapshot: Callable[[], Any]) -> None:
        """The device holding the turn waits on a semaphore that cannot end the wait yet: hand the
        turn on until `snapshot()` (what the semaphore holds) changes."""
        then = snapshot()
        with self.lock:
            if not self._known(device):
                return
            self.state[device], self.waits[device] = BLOCKED, _Changed(snapshot, then)
            self.granted = None
            self._await(device)
            self.waits.pop(device, None)

    def barrier(self, device: int) -> None:
        """Every device stops at Pallas's automatic barrier; all go on together into it."""
        with self.lock:
            if not self._known(device):
                return
            self.state[device] = BARRIER
            if all(s == BARRIER for s in self.state.values()):
                for d in self.state:
                    self.state[d] = RUNNING
                    self.wake[d].notify_all()
            else:
                self._decide()
                while self.state[device] == BARRIER and not self.opened:
                    self.wake[device].wait()

    def finish(self, device: int) -> None:
        """The device has left the kernel. Once all have, a next kernel starts from a clean slate."""
        with self.lock:
            if not self._known(device):
                return
            self.state[device] = DONE
            if all(s == DONE for s in self.state.values()):
                self.state = dict.fromkeys(self.state, RUNNING)
            else:
                self._decide()

    # --- choosing ------------------------------------------------------------------------

    def _known(self, device: int) -> bool:
        return self.active and not self.opened and device in self.state

    def _await(self, device: int) -> None:
        self._decide()
        while self.granted != device and not self.opened:
            self.wake[device].wait()
        if not self.opened:
            self.state[device] = HOLDING

    def _decide(self) -> None:
        """Give the turn, once no device is between two callbacks (called with the lock held): to the first
        device in priority order that can go. A blocked device is asked whether its semaphore changed only
        when no device before it can go (asking every blocked device at every turn was a third of choosing)."""
        if self.granted is not None or self.opened or RUNNING in self.state.values():
            return
        for device in self._order:
            state = self.state[device]
            if state == READY or (state == BLOCKED and self.waits[device]()):
                self.granted = device
                self.steps += 1
                self.wake[device].notify_all()
                return
        if BLOCKED in self.state.values() and BARRIER not in self.state.values():
            self.opened = True
            self._on_deadlock([d for d, s in self.state.items() if s == DONE])
            for condition in self.wake.values():
                condition.notify_all()


class _Changed:
    """True once a semaphore holds something other than it did when a device blocked on it."""

    def __init__(self, snapshot: Callable[[], Any], then: Any) -> None:
        self.snapshot, self.then = snapshot, then

    def __call__(self) -> bool:
        return bool(self.snapshot() != self.then)


class GatedCondition(threading.Condition):
    """A semaphore's condition variable: a scheduled device that must wait hands its turn on instead
    of sleeping with it; the interpreter's wait loop then looks at the semaphore again."""

    def __init__(self, snapshot: Callable[[], Any]) -> None:
        super().__init__()
        self._snapshot = snapshot

    def wait(self, timeout: float | None = None) -> bool:
        device = TURNS.holder()
        if device is None:
            return super().wait(timeout)
        self.release()  # the interpreter holds it once (`with self.cv:`); the others need it meanwhile
        try:
            TURNS.block(device, self._snapshot)
        finally:
            self.acquire()
        return False


TURNS = Turns()


# The interpreter's callbacks that take the device's id second, after the token, and return soon:
# each runs in its device's turn. Pallas's automatic barrier and the kernel's exit wait for every
# device, so they only tell the scheduler; the ordering barriers and the grid-point recorder touch
# nothing the devices share and run as they come. All of them take numpy arguments.
_TURN_TAKING = frozenset({"get", "swap", "store", "dma_start", "dma_wait", "semaphore_signal", "semaphore_wait",
                          "get_barrier_semaphore", "_allocate_buffer", "_deallocate_buffer", "_allocate_semaphores",
                          "_initialize_shared_memory", "_update_clocks_for_device_barrier", "_check_for_revisiting",
                          "_validate"})


def gate(callback: Callable[..., Any]) -> Callable[..., Any]:
    """`callback` (one of the interpreter's, maybe in a functools.partial) run by the scheduler's rules."""
    name = getattr(getattr(callback, "func", callback), "__name__", "")
    if name == "_barrier":
        return marked(_before(callback, TURNS.barrier))
    if name == "_clean_up_shared_memory":
        return marked(_before(callback, TURNS.finish))
    if name not in _TURN_TAKING:
        return marked(lambda *args, **kwargs: callback(*args, **kwargs))

    def in_turn(*args: Any, **kwargs: Any) -> Any:
        if not TURNS.active:
            return callback(*args, **kwargs)
        device = int(args[1])
        TURNS.take(device)
        try:
            return callback(*args, **kwargs)
        except BaseException:
            TURNS.open()  # a failure: every device must be free to reach the interpreter's own check
            raise
        finally:
            TURNS.give(device)

    return marked(in_turn)


def _before(callback: Callable[..., Any], tell: Callable[[int], None]) -> Callable[..., Any]:
    def told(*args: Any, **kwargs: Any) -> Any:
        if TURNS.active:
            tell(int(args[1]))
        return callback(*args, **kwargs)

    return told
