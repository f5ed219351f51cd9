"""A core of its own for each checker, once a command's checkers are as many as the cores it may use.

A kernel of the GPU and multi-chip chapters runs on several interpreter threads (a block's warpgroups,
a mesh's devices) that hand each other the turn at every callback, thousands of times a check. Left to
move, two checkers' threads on two cores hand the turn across cores and queue for each other's core:
measured on 2 vCPUs (Python 3.12, jax 0.12.0.1), one blackwell_warp_specialized check took 1.45-1.57 s
with two checkers side by side, and 0.77-0.79 s with each held to a core of its own; the whole course
cold went from 7.7-8.1 s to 6.3-6.5 s. A checker alone on a core was slower on none of the puzzles
measured (TPU chapters the same, the GPU and multi-chip puzzles 2-20 % faster).

Only while a command's checkers fill the cores it may use: then they keep every core busy anyway.
With fewer, the operating system places them: it sees what else runs (another pallas-puzzles, the
learner's editor), and a checker held to a busy core would wait beside an idle one. A checker stays on
its core until it ends. Linux only (elsewhere nothing is pinned); off with PALLAS_PUZZLES_FAST=0. Only
speed changes: which thread goes when is the checker's own schedule, wherever its threads run.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable
from typing import Protocol

from pallas_puzzles import environment


class Process(Protocol):
    pid: int

    def poll(self) -> int | None: ...


def usable_cores() -> list[int]:
    """The cores this process may run on (its affinity, which a checker inherits); [] where unknown or
    where a process's threads cannot be pinned (not Linux)."""
    if not hasattr(os, "sched_setaffinity"):
        return []
    try:
        return sorted(os.sched_getaffinity(0))
    except OSError:
        return []


def pin(pid: int, core: int) -> bool:
    """Hold every thread of process `pid` to `core` (a thread started later inherits its starter's core);
    False when the process cannot be pinned (gone, or not ours to set)."""
    pinned, seen = False, set()
    for _ in range(3):  # again, for a thread started by one not yet pinned
        try:
            threads = {int(name) for name in os.listdir(f"/proc/{pid}/task")} - seen
        except OSError:
            return pinned
        if not threads:
            return pinned
        for thread in threads:
            try:
                os.sched_setaffinity(thread, {core})
                pinned = True
            except OSError:  # a thread that has just ended
                pass
        seen |= threads
    return pinned


class Placement:
    """The checkers this command has started, and the core each is held to (None: free to move)."""

    def __init__(self, cores: Callable[[], list[int]] = usable_cores,
                 pin: Callable[[int, int], bool] = pin) -> None:
        self._cores, self._pin = cores, pin
        self._lock = threading.Lock()
        self._checkers: dict[int, tuple[Process, int | None]] = {}  # pid -> (process, core), in start order

    def started(self, process: Process) -> None:
        """Count a checker just started; once the live ones fill the cores, pin each not pinned yet to the
        core fewest of them are on."""
        if environment.FAST.turned_off():
            return
        cores = self._cores()  # none where the system cannot say (then nothing is pinned)
        with self._lock:
            self._checkers = {pid: entry for pid, entry in self._checkers.items() if entry[0].poll() is None}
            self._checkers[process.pid] = (process, None)
            if len(cores) < 2 or len(self._checkers) < len(cores):
                return
            on = Counter(core for _, core in self._checkers.values() if core is not None)
            for pid, (checker, core) in self._checkers.items():
                if core is None:
                    core = min(cores, key=lambda c: (on[c], c))
                    if self._pin(pid, core):
                        on[core] += 1
                        self._checkers[pid] = (checker, core)

    def core_of(self, pid: int) -> int | None:
        with self._lock:
            entry = self._checkers.get(pid)
            return entry[1] if entry is not None else None


CHECKERS = Placement()
