"""What the devices of a multi-device kernel did, and the rules their run must keep.

The interpreter's hooks (hooks.py) report each remote copy, signal, wait and
kernel exit here as plain numbers plus an opaque `where` (the interpreter's
record of the learner's line, resolved later). This module keeps the records of
one run and turns broken rules into problem records (problems.py):

- a copy to, or a signal of, another device before a barrier handshake with it
  (a kernel with a collective_id has no automatic barrier: the receiver may
  not have entered the kernel yet);
- a copy started with no product before its wait (overlap puzzles; overlap.py
  reads which starts those are from the kernel, the monitor which of them ran);
- two rings that do not run at once, one each way (both_ways puzzles): a device of a
  ring of three or more that sends only one way, or no device that ever starts a
  second copy before waiting for the first.

Deadlocks, races, leftovers and bad device ids are recorded by the hooks and watch.py. No jax here.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pallas_puzzles.engine.targets.tpu_multichip.problems import (
    CopyInfo,
    EarlyAccess,
    NoOverlap,
    OneWay,
    SelfCopies,
    TakingTurns,
)


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
        self.signallers: dict[tuple[int, int], dict[int, Any]] = defaultdict(dict)  # ... -> source -> a where
        self.regular_waits: dict[tuple[int, int], Any] = {}  # (device, REGULAR semaphore) -> where it waited
        self.dma_waits: dict[tuple[int, int], list[tuple[int, Any]]] = defaultdict(list)  # -> (bytes, where)
        self.copy_bytes: dict[int, int] = {}  # copy id -> bytes it moved
        # The first error the interpreter was told of: the other devices' errors only repeat it, in any order
        self.first_failure: BaseException | None = None
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

    def copies_made(self) -> list[tuple[int, CopyInfo]]:
        """(copy id, what it is) of every copy made so far. Read them through here: the devices' threads
        add copies as they run, and a dict that grows under a Python loop over it fails that loop."""
        with self.lock:
            return list(self.copies.items())

    def copy_read(self, dma_id: int, nbytes: int) -> None:
        """A copy has read its source: count its bytes once, against both devices."""
        with self.lock:
            self.copy_bytes[dma_id] = nbytes
            info = self.copies.get(dma_id)
            if info is None or info.source == info.target or dma_id in self._read:
                return
            self._read.add(dma_id)
            self.traffic[info.source].sent += nbytes
            self.traffic[info.target].received += nbytes

    def role(self, sem_id: int) -> str:
        """How the copies seen so far use a semaphore: "receive", "send", or "" when none does."""
        copies = [info for _, info in self.copies_made()]
        if any(c.recv_sem == sem_id for c in copies):
            return "receive"
        return "send" if any(c.send_sem == sem_id for c in copies) else ""

    def signalled(self, source: int, target: int, sem_id: int, where: Any) -> None:
        with self.lock:
            self.signals[(target, sem_id)].append(where)
            self.signallers[(target, sem_id)][source] = where

    def waited(self, device: int, sem_id: int, where: Any) -> None:
        """A wait on a REGULAR semaphore returned."""
        with self.lock:
            self.regular_waits[(device, sem_id)] = where

    def failed(self, exception: BaseException) -> None:
        """The interpreter records a failure: keep the first, the one the others follow from."""
        with self.lock:
            if self.active and self.first_failure is None:
                self.first_failure = exception

    def dma_waited(self, device: int, sem_id: int, size: int, where: Any) -> None:
        with self.lock:
            self.dma_waits[(device, sem_id)].append((size, where))

    def shared_landing(self, copy: CopyInfo) -> tuple[Any, CopyInfo] | None:
        """(the receiver's first wait on `copy`'s semaphore, another copy that signals it there), when one
        does: that wait counts bytes and may end on the other copy's; None when the semaphore is the copy's own."""
        with self.lock:
            waits = self.dma_waits.get((copy.target, copy.recv_sem), [])
            others = [info for info in self.copies.values()
                      if info is not copy and info.target == copy.target and info.recv_sem == copy.recv_sem]
            # another line's copy first: it says more than this line's copy of another step
            other = next((info for info in others if info.where != copy.where), others[0] if others else None)
        return (waits[0][1], other) if waits and other is not None else None

    def mixed_signals(self, device: int) -> tuple[Any, ...]:
        """(the wait's record, the signals' records) of a REGULAR semaphore `device` waited on and two or more
        devices signalled: a wait that may have taken one device's signal for another's; () when none."""
        with self.lock:
            for (waiter, sem_id), where in self.regular_waits.items():
                senders = self.signallers.get((waiter, sem_id), {})
                if waiter == device and len(senders) > 1:
                    return (where, *senders.values())
        return ()

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

    def both_ways(self, devices: int) -> list[OneWay | TakingTurns]:
        """The first way the run's two rings fail to run at once in opposite directions (empty if they do)."""
        remote = [info for _, info in self.copies_made() if info.send_sem is not None and info.source != info.target]
        if devices >= 3:  # with two devices left and right are the same neighbour
            for device in range(devices):
                sent = [info for info in remote if info.source == device]
                if sent and not {(device - 1) % devices, (device + 1) % devices} <= {info.target for info in sent}:
                    return [OneWay(device, sent[0].target, sent[0].where)]
        turns = None
        for log in self.kernels:
            for device, events in sorted(log.events.items()):
                kinds = [kind for kind, _, _ in events if kind in ("send", "wait")]
                if any(a == b == "send" for a, b in zip(kinds, kinds[1:])):
                    return []  # a second copy started before any wait: the rings run at once
                if turns is None:
                    turns = next(((device, events[i], events[i + 1]) for i in range(len(events) - 1)
                                  if events[i][0] == "send" and events[i + 1][0] == "wait"), None)
        if turns is None:
            return []
        device, (_, start, step), (_, wait, _) = turns
        return [TakingTurns(device, start, wait, step)]

    def self_copies(self) -> list[SelfCopies]:
        """The first remote copy, when every one went back to its own sender (device_id named this device)."""
        remote = [info for _, info in self.copies_made() if info.send_sem is not None]  # local copies have none
        if remote and all(info.source == info.target for info in remote):
            return [SelfCopies(remote[0].source, remote[0].where)]
        return []


MONITOR = Monitor()  # one per process: the interpreter's state it watches is process-wide too
