"""Reading the TPU interpreter's state for the multi-device rules: deadlocks, races, the kernel's exit.

Private names read here, from the TPU interpreter's objects and modules (hooks.py hands them
over; tpu_multichip/jax_private.py lists them, with the versions checked): SharedMemory's sem,
fixed_id_sem, num_devices, clean_up_barrier, _failure and set_failed; Semaphore's cv,
count_by_core and tasks (bound methods of the queued DMA); DMA's id, state, src_device_id,
dst_device_id and source_info; the race detector's RaceDetectionState (check_read/check_write,
reads, writes, races_found), _ranges_overlap, its clocks' ordering and module-level print
(jax 0.10 prints a race instead of raising).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.targets.tpu_multichip.monitor import MONITOR
from pallas_puzzles.engine.targets.tpu_multichip.problems import (
    Access,
    CopyInfo,
    Deadlock,
    Leftover,
    LostCopy,
    Race,
    RunStopped,
    Wait,
)

WATCH_PERIOD = 0.25  # seconds between two looks at the waiting devices; a deadlock needs two equal looks
DMA_ID_START = 100  # the interpreter numbers its copies from 100 (dma_id_counter); devices are small numbers


def exit_rule(ipc: Any, memory: Any) -> None:
    """Every device has left the kernel: no semaphore may hold a count, no copy may be left unwaited."""
    lost: dict[int, Any] = {}
    for sid, sem in list(memory.fixed_id_sem.items()) + list(memory.sem.items()):
        with sem.cv:
            counts = [int(c) for c in sem.count_by_core]
            queued = [[getattr(task, "__self__", None) for task in tasks] for tasks in sem.tasks]
        for device, count in enumerate(counts):
            for dma in queued[device]:
                if dma is not None and dma.state != ipc.DmaState.COMPLETED:
                    lost.setdefault(int(dma.id), dma)
            if count:
                MONITOR.add(_leftover(memory, int(sid), device, count))
    for dma in lost.values():
        MONITOR.add(LostCopy(int(dma.src_device_id), int(dma.dst_device_id), dma.source_info))


def _leftover(memory: Any, sid: int, device: int, count: int) -> Leftover:
    """A count left on semaphore `sid` of `device`, with the lines that raised it."""
    if sid in memory.fixed_id_sem:
        return Leftover(device, "barrier", count, tuple(MONITOR.signals.get((device, sid), ())))
    raising = [(dma_id, info) for dma_id, info in MONITOR.copies_made()
               if (info.target == device and info.recv_sem == sid) or (info.source == device and info.send_sem == sid)]
    if raising:
        return Leftover(device, "dma", count, tuple(info.where for _, info in raising),
                        _short_wait(device, sid, raising))
    return Leftover(device, "regular", count, tuple(MONITOR.signals.get((device, sid), ())))


def _short_wait(device: int, sid: int, raising: list[tuple[int, CopyInfo]]) -> tuple[Any, int, Any, int] | None:
    """A wait on the semaphore for fewer bytes than the smallest copy it counts: its descriptor is too small."""
    sizes = [(MONITOR.copy_bytes[dma_id], info.where) for dma_id, info in raising if dma_id in MONITOR.copy_bytes]
    if not sizes:
        return None
    smallest, copy = min(sizes, key=lambda size: size[0])
    wait = next(((size, where) for size, where in MONITOR.dma_waits.get((device, sid), ()) if size < smallest), None)
    return None if wait is None else (wait[1], wait[0], copy, smallest)


def hook_races(rds: Any) -> None:
    """Record the first race with both of its accesses, and stop the run there (on both versions)."""
    detector = rds.RaceDetectionState
    previous_print = getattr(rds, "print", print)

    def quiet_print(*args: Any, **kwargs: Any) -> None:  # jax 0.10 prints a race; the monitor records it instead
        if not MONITOR.active:
            previous_print(*args, **kwargs)

    def watch(original: Callable[..., Any], kind: str) -> Callable[..., Any]:
        @functools.wraps(original)
        def check(self: Any, *args: Any, **kwargs: Any) -> Any:
            if not MONITOR.active:
                return original(self, *args, **kwargs)
            before, raced = self.races_found, False
            try:
                original(self, *args, **kwargs)
            except RuntimeError as exc:
                if "RACE DETECTED" not in str(exc):
                    raise
                raced = True
            if raced or (self.races_found and not before):
                MONITOR.add(_race(self, kind, args, kwargs.get("source_info"), rds._ranges_overlap,
                                  functools.partial(_ordered, rds.vc)))
                raise RunStopped("race")

        return check

    rds.print = quiet_print
    detector.check_read = watch(detector.check_read, "read")
    detector.check_write = watch(detector.check_write, "write")


def _ordered(vc: Any, a: Any, b: Any) -> bool:
    """Whether one access happened before the other: clocks are objects on jax 0.12, arrays on 0.10."""
    return bool(a.ordered(b)) if hasattr(a, "ordered") else bool(vc.ordered(a, b))


def _race(state: Any, kind: str, args: tuple[Any, ...], source_info: Any, overlap: Callable[..., bool],
          ordered: Callable[[Any, Any], bool]) -> Race:
    """The race just found, with the earlier access it is not ordered with. An access is
    (device, core, clock, key, window) on jax 0.10 and ((device, core), clock, key, window) on 0.12,
    and so are the recorded ones, without the key and with the learner's frame as a string."""
    if isinstance(args[0], tuple):
        who, clock, key, window = args[0][0], args[1], args[2], args[3]
    else:
        who, clock, key, window = args[0], args[2], args[3], args[4]
    entries = [("write", e) for e in state.writes[key]]
    if kind == "write":
        entries += [("read", e) for e in state.reads[key]]
    other = Access("write", None, None)
    for other_kind, entry in entries:
        thread, entry_clock, entry_window, frame = _entry(entry)
        if entry_clock is not clock and not ordered(entry_clock, clock) and overlap(window, entry_window):
            other = _access(other_kind, int(thread), frame)
            break
    first = _access(kind, int(who), source_info)
    device = first.device if first.device is not None else other.device if other.device is not None else int(key[2])
    step = len(MONITOR.kernels[-1].steps[device]) if MONITOR.kernels else None
    # Writes into this window besides the racing ones: none means the reader wanted the racing copy's data.
    writes = sum(1 for entry in state.writes[key] if overlap(window, _entry(entry)[2]))
    earlier = writes - [first.kind, other.kind].count("write")
    incoming = next((a.copy for a in (first, other) if a.kind == "write" and a.copy is not None), None)
    mixed = MONITOR.mixed_signals(incoming.source) if incoming is not None else ()
    shared = MONITOR.shared_landing(incoming) if incoming is not None else None
    return Race(owner=int(key[2]), memory=str(key[0]), first=first, second=other, step=step, earlier_writes=earlier,
                mixed=mixed, shared=shared)


def _entry(entry: tuple[Any, ...]) -> tuple[Any, Any, Any, Any]:
    """(who, clock, window, frame) of a recorded access, on either version."""
    return (entry[0][0], *entry[1:4]) if isinstance(entry[0], tuple) else (entry[0], *entry[2:5])


def _access(kind: str, who: int, where: Any) -> Access:
    if who >= DMA_ID_START:
        copy = MONITOR.copies.get(who)
        return Access(kind, None, copy, copy.where if copy is not None and copy.where is not None else where)
    return Access(kind, who, None, where)


def _blocked_waits(memory: Any) -> list[Wait] | None:
    """The devices' waits, none of which anything queued can end; None while one of them can move."""
    with MONITOR.lock:
        waits = list(MONITOR.waits.values())
    found = []
    for device, sem_id, wanted, where, kind in waits:
        sem = memory.fixed_id_sem.get(sem_id) or memory.sem.get(sem_id)
        if sem is None:
            return None
        with sem.cv:
            has, queued = int(sem.count_by_core[device]), bool(sem.tasks[device])
        if has >= wanted or queued:
            return None
        role = MONITOR.role(sem_id) if kind == "dma" else ""
        found.append(Wait(device, kind, wanted, has, where, len(MONITOR.kernels[-1].steps[device]), role))
    return found


def _stuck(memory: Any) -> tuple[list[Wait], int] | None:
    """The waits nothing queued can end and how many devices have finished; None while any device can move."""
    found = _blocked_waits(memory)
    finished = int(memory.clean_up_barrier.n_waiting)
    if not found or len(found) + finished < int(memory.num_devices):
        return None
    return found, finished


def deadlock(ipc: Any, finished: list[int]) -> None:
    """The scheduler (turns.py) found that no device can go: record the waits and fail the run."""
    memory = ipc._shared_memory
    if memory is None or not MONITOR.kernels:
        return
    waits = _blocked_waits(memory) or []
    MONITOR.add(Deadlock(tuple(sorted(waits, key=lambda w: w.device)), tuple(finished), int(memory.num_devices)))
    memory.set_failed(RunStopped("deadlock"), top_level=False)


def watchdog(ipc: Any) -> None:
    """Fails the run when every device is stuck in a wait nothing can end, seen twice in a row; the
    interpreter's own set_failed makes every waiting device raise instead of waiting for ever."""
    last: Any = None
    while True:
        MONITOR.wake.wait()
        time.sleep(WATCH_PERIOD)
        try:
            last = _look(ipc, last)
        except Exception as exc:  # the watchdog must outlive any surprise, or the next deadlock hangs
            MONITOR.add(exc)
            last = None


def _look(ipc: Any, last: Any) -> Any:
    """One look at the devices: the picture of the stuck waits, or None; fails the run on a repeat."""
    memory = ipc._shared_memory
    if not MONITOR.active or memory is None or memory._failure is not None or not MONITOR.kernels:
        return None
    stuck = _stuck(memory)
    picture = None if stuck is None else (id(memory), tuple(sorted((w.device, w.wanted, w.has) for w in stuck[0])))
    if picture is None or picture != last:
        return picture
    waits, _ = stuck
    waiting = {w.device for w in waits}
    finished = tuple(d for d in range(int(memory.num_devices)) if d not in waiting)
    MONITOR.add(Deadlock(tuple(sorted(waits, key=lambda w: w.device)), finished, int(memory.num_devices)))
    memory.set_failed(RunStopped("deadlock"), top_level=False)
    return None
