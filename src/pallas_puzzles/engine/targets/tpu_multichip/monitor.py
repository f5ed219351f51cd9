"""What the devices of a multi-device kernel did, and the rules their run must keep.

The interpreter's hooks (multichip_jax.py) report each remote copy, signal,
wait, store and kernel exit here as plain numbers plus an opaque `where` (the
interpreter's record of the learner's line, resolved later). This module keeps
the records of one shape case and turns broken rules into problem records:

- a copy to, or a signal of, another device before a barrier handshake with it
  (a kernel with a collective_id has no automatic barrier: the receiver may
  not have entered the kernel yet);
- a semaphore with a count left when the kernel ends, or a copy nobody waited for;
- a kernel that waits for its send before it computes anything (overlap puzzles).

Deadlocks, races and bad device ids are recorded by the hooks themselves. No jax here.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any


class RunStopped(RuntimeError):
    """Stops every device of a run: the problem that stopped it is recorded in the monitor."""


@dataclass(frozen=True)
class Wait:
    """A device blocked in a semaphore wait."""

    device: int
    kind: str  # "dma" (counts bytes), "barrier" or "regular"
    wanted: int
    has: int
    where: Any = None
    step: int | None = None  # the grid step the device is in (steps it has finished)
    role: str = ""  # "receive" or "send" when copies use this semaphore that way


@dataclass(frozen=True)
class Deadlock:
    waits: tuple[Wait, ...]
    finished: tuple[int, ...]  # devices that had already left the kernel
    devices: int


@dataclass(frozen=True)
class EarlyAccess:
    """A copy to, or a signal of, a device before the handshake with it."""

    device: int
    target: int
    what: str  # "copy" or "signal"
    where: Any = None
    step: int | None = None


@dataclass(frozen=True)
class Leftover:
    """A semaphore whose count is not zero when the kernel ends."""

    device: int
    kind: str  # "dma", "barrier" or "regular"
    count: int
    where: tuple[Any, ...] = ()  # the signals or copies that raised it


@dataclass(frozen=True)
class LostCopy:
    """A copy that was started but never waited for, so it never landed."""

    device: int
    target: int
    where: Any = None


@dataclass(frozen=True)
class Access:
    """One side of a race: a device's own read or write, or a copy's."""

    kind: str  # "read" or "write"
    device: int | None  # the device whose kernel made the access; None for a copy
    copy: CopyInfo | None  # the copy that made it
    where: Any = None  # the interpreter's record, or its one-line summary (a string)


@dataclass(frozen=True)
class Race:
    owner: int  # the device whose memory it is
    memory: str  # "hbm", "vmem", ...
    first: Access  # the access that found the race
    second: Access  # the earlier one it is not ordered with
    step: int | None = None  # the grid step of the device whose kernel made an access
    earlier_writes: int = 0  # other writes into the same window before: 0 means nothing was there to overwrite


@dataclass(frozen=True)
class BadDevice:
    """A copy or signal aimed at a device the ring does not have."""

    device: int
    target: int
    devices: int
    what: str
    where: Any = None
    step: int | None = None


@dataclass(frozen=True)
class BadDeviceId:
    """A device_id that does not fit the mesh (found when the kernel is traced)."""

    given: str
    axes: tuple[str, ...]
    error: str
    where: Any = None


@dataclass(frozen=True)
class NoCollectiveId:
    """get_barrier_semaphore in a kernel without a collective_id."""

    where: Any = None


@dataclass(frozen=True)
class AutoBarrier:
    """The kernel had no collective_id, so Pallas synchronised every device before it."""


@dataclass(frozen=True)
class NoOverlap:
    device: int
    start: Any
    wait: Any
    step: int | None = None


@dataclass(frozen=True)
class CopyInfo:
    source: int
    target: int
    where: Any = None
    send_sem: int | None = None
    recv_sem: int | None = None


@dataclass
class KernelLog:
    """One pallas_call's run over every device."""

    devices: int
    heard: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))  # barrier signals not yet waited
    known: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))  # devices a handshake confirmed
    auto_barrier: bool = False
    events: dict[int, list[tuple[str, Any, int]]] = field(default_factory=lambda: defaultdict(list))
    steps: dict[int, list[tuple[int, ...]]] = field(default_factory=lambda: defaultdict(list))


@dataclass
class Traffic:
    sent: int = 0
    received: int = 0


class Monitor:
    """The records of one shape case; the hooks act only while `active`."""

    def __init__(self) -> None:
        self.active = False
        self.lock = threading.Lock()
        self.wake = threading.Event()  # set while a run is active: the watchdog polls
        # Copy starts with no product before their wait, by id() of their record (overlap.py): found as the
        # kernel is traced, so they outlast the runs of a case (a case's later runs reuse the compiled kernel).
        self.idle: dict[int, Any] = {}
        self._begin()

    def _begin(self) -> None:
        self.problems: list[Any] = []
        self.kernels: list[KernelLog] = []
        self.copies: dict[int, CopyInfo] = {}
        self.traffic: dict[int, Traffic] = defaultdict(Traffic)
        # thread -> (device, semaphore id, count wanted, where, "dma" / "barrier" / "regular")
        self.waits: dict[int, tuple[int, int, int, Any, str]] = {}
        self._read: set[int] = set()
        self.signals: dict[tuple[int, int], list[Any]] = defaultdict(list)  # (target, semaphore) -> where
        self._memory: Any = None

    def start(self) -> None:
        with self.lock:
            self._begin()
            self.active = True
        self.wake.set()

    def stop(self) -> None:
        with self.lock:
            self.active = False
            self.waits.clear()
        self.wake.clear()

    def add(self, problem: Any) -> None:
        with self.lock:
            if problem not in self.problems:
                self.problems.append(problem)

    def kernel(self, memory: Any, devices: int) -> KernelLog:
        """The log of the kernel that owns the interpreter's shared memory `memory`."""
        with self.lock:
            if memory is not self._memory or not self.kernels:
                self._memory = memory
                self.kernels.append(KernelLog(devices))
            return self.kernels[-1]

    # --- the handshake rule -------------------------------------------------------------

    def barrier_signal(self, log: KernelLog, device: int, target: int) -> None:
        with self.lock:
            log.heard[target].add(device)

    def barrier_waited(self, log: KernelLog, device: int) -> None:
        """A wait on the barrier semaphore returned: every device that signalled it has entered."""
        with self.lock:
            log.known[device] |= log.heard[device]
            log.heard[device].clear()

    def everyone_entered(self, log: KernelLog) -> None:
        with self.lock:
            log.auto_barrier = True

    def remote(self, log: KernelLog, device: int, target: int, what: str, where: Any) -> None:
        with self.lock:
            allowed = log.auto_barrier or target == device or target in log.known[device]
        if not allowed:
            self.add(EarlyAccess(device, target, what, where, len(log.steps[device])))

    # --- what each device did, in order ----------------------------------------------------

    def event(self, log: KernelLog, device: int, kind: str, where: Any) -> None:
        # One list per device, appended by that device's thread only.
        log.events[device].append((kind, where, len(log.steps[device])))

    def copy_made(self, dma_id: int, info: CopyInfo) -> None:
        with self.lock:
            self.copies[dma_id] = info

    def copy_read(self, dma_id: int, nbytes: int) -> None:
        """A copy has read its source: count its bytes once, against both devices."""
        with self.lock:
            info = self.copies.get(dma_id)
            if info is None or info.source == info.target or dma_id in self._read:
                return
            self._read.add(dma_id)
            self.traffic[info.source].sent += nbytes
            self.traffic[info.target].received += nbytes

    def role(self, sem_id: int) -> str:
        """How the copies seen so far use a semaphore: "receive", "send", or "" when none does."""
        with self.lock:
            copies = list(self.copies.values())
        if any(c.recv_sem == sem_id for c in copies):
            return "receive"
        return "send" if any(c.send_sem == sem_id for c in copies) else ""

    def signalled(self, target: int, sem_id: int, where: Any) -> None:
        with self.lock:
            self.signals[(target, sem_id)].append(where)

    def no_overlap(self) -> list[NoOverlap]:
        """Remote copies started with nothing computed before their wait (overlap.py read the kernels)."""
        found = []
        for log in self.kernels:
            for device, events in sorted(log.events.items()):
                idle = next(((where, step) for kind, where, step in events
                             if kind == "send" and id(where) in self.idle), None)
                if idle is not None:
                    found.append(NoOverlap(device, idle[0], self.idle[id(idle[0])], idle[1]))
        return found


# What stops a run, in the order a learner should hear of it; then what breaks the rules of a finished run.
STOPS = (Deadlock, Race, BadDevice, BadDeviceId, NoCollectiveId)
RULES = (EarlyAccess, AutoBarrier, LostCopy, Leftover)

MONITOR = Monitor()  # one per process: the interpreter's state it watches is process-wide too
