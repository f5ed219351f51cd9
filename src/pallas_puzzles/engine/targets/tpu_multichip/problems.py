"""The problems a multi-device run can have, as records: plain numbers and the interpreter's opaque
record of a line (`where`, resolved by explain.py). monitor.py and watch.py make them; explain.py
turns them into findings. No jax here.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    # A wait on it for fewer bytes than its copies bring: (its record, its bytes, a copy's record, that copy's bytes)
    short: tuple[Any, int, Any, int] | None = None


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
    # The incoming copy's sender waited on a REGULAR semaphore that several devices signal: its wait, their signals
    mixed: tuple[Any, ...] = ()
    # The incoming copy's semaphore is signalled by another copy too: (the receiver's wait on it, that copy)
    shared: tuple[Any, CopyInfo] | None = None


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
class SelfCopies:
    """Every remote copy of the run went to the device that started it (a wrong answer's likely cause)."""

    device: int
    where: Any = None


@dataclass(frozen=True)
class NoOverlap:
    device: int
    start: Any
    wait: Any
    step: int | None = None


@dataclass(frozen=True)
class OneWay:
    """A device of a ring of three or more that sent every copy to the same neighbour (both_ways puzzles)."""

    device: int
    target: int
    where: Any = None


@dataclass(frozen=True)
class TakingTurns:
    """No device had two copies in flight at once: each waited for one before starting the next."""

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



# What stops a run, in the order a learner should hear of it; then what breaks the rules of a finished run.
STOPS = (Deadlock, Race, BadDevice, BadDeviceId, NoCollectiveId)
RULES = (EarlyAccess, AutoBarrier, LostCopy, Leftover)
