"""Races the interpreter's detector finds, with both accesses in the learner's words.

jax 0.12's detector (detect_races=True, on_race="raise") raises a RuntimeError whose text names the
two accesses. Instead of reading that text, the hooks note each access (which callback made it, from
which learner line) as the detector checks it; when the detector raises, the earlier access is found
the way the detector finds it (a clock not ordered before this one, an overlapping range) and the
race is raised again as data.

Private API (mosaic_gpu/jax_private.py lists it, with the versions checked): the interpreter's
GPURaceDetectionState.check_read/check_write(thread, clock, buffer_key, access, source_info), the
`reads`/`writes` lists of (thread, clock, range, frame) it keeps per buffer, the clocks' `ordered`,
and the TPU race detector's _ranges_overlap, which it shares.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.targets.mosaic_gpu import jax_private
from pallas_puzzles.engine.targets.mosaic_gpu.interpreter import (
    OPS,
    block_and_warpgroup,
    current_op,
    line_of,
    made_by,
    memory_name,
)
from pallas_puzzles.engine.targets.mosaic_gpu.record import Access, Race, RaceFound, active

_notes: dict[int, tuple[Access, Any]] = {}  # id(clock) -> (the access, its clock: held so the id stays unique)
_lock = threading.Lock()


def forget() -> None:
    """Drop the notes of the previous case."""
    with _lock:
        _notes.clear()


def _describe(writes: bool, key: Any, source_info: Any) -> Access:
    name = current_op()[0]
    line = line_of(source_info)
    block, warpgroup = block_and_warpgroup()
    return Access(op=OPS.get(name, name.lstrip("_") or "access"), writes=writes, memory=memory_name(key), line=line,
                  made_by="" if line is not None else made_by(source_info), block=block, warpgroup=warpgroup)


def _earlier(state: Any, writes: bool, clock: Any, key: Any, window: Any, overlap: Callable[..., bool]) -> Any:
    """The recorded access this one races with: the detector's own test (see its check_read/check_write)."""
    candidates = [entry for entry in state.writes[key] if entry[1] is not clock]
    if writes:
        candidates += list(state.reads[key])
    return next((entry for entry in candidates if not entry[1].ordered(clock) and overlap(window, entry[2])), None)


def refilled(state: Any, key: Any, window: Any, reader_clock: Any, racing_copy: Any,
             notes: dict[int, tuple[Access, Any]], overlap: Callable[..., bool]) -> bool:
    """Whether a read (at `reader_clock`) came after the wait for an earlier TMA copy into the same window
    than `racing_copy`, the clock of the copy it races with. Then the copy refilled a buffer whose
    earlier chunk was still being read, in whichever order the threads happened to run the two."""
    def is_copy(clock: Any) -> bool:
        noted = notes.get(id(clock))
        return noted is not None and noted[0].op == "tma-load"

    return any(entry[1] is not racing_copy and is_copy(entry[1]) and overlap(window, entry[2])
               and entry[1].ordered(reader_clock) for entry in state.writes[key])


def _checked(original: Callable[..., Any], writes: bool, overlap: Callable[..., bool]) -> Callable[..., Any]:
    @functools.wraps(original)
    def check(self: Any, thread: Any, clock: Any, buffer_key: Any, access: Any, source_info: Any = None) -> Any:
        if active.record is None:
            return original(self, thread, clock, buffer_key, access, source_info)
        this = _describe(writes, buffer_key, source_info)
        with _lock:
            _notes[id(clock)] = (this, clock)
        try:
            return original(self, thread, clock, buffer_key, access, source_info)
        except RuntimeError as exc:  # the detector reports a race by raising
            entry = _earlier(self, writes, clock, buffer_key, access.range, overlap)
            if entry is None:
                raise
            with _lock:
                noted = _notes.get(id(entry[1]))
                notes = dict(_notes)
            other = noted[0] if noted is not None else Access(
                op="access", writes=any(e is entry for e in self.writes[buffer_key]), memory=this.memory, line=None)
            refill = False
            if writes != other.writes:  # a read and a write: was the write a refill of what was read?
                reader, copy = (entry[1], clock) if writes else (clock, entry[1])
                refill = refilled(self, buffer_key, access.range, reader, copy, notes, overlap)
            raise RaceFound(Race(this, other, refill)) from exc

    return check


def install() -> None:
    detector, overlap = jax_private.gpu_race_detection_state().GPURaceDetectionState, jax_private.ranges_overlap()
    detector.check_read = _checked(detector.check_read, False, overlap)
    detector.check_write = _checked(detector.check_write, True, overlap)
