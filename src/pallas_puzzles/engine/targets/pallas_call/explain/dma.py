"""Explaining faults of manual copies and semaphores (DMAs, waits, races) in the learner's terms.

The raw material: a SemaphoreStall from the dma_watch hooks, the interpreter's
"RACE DETECTED" report (two accesses, each with a learner line), a DMA that
reads or writes outside its HBM buffer, and a window (`.at[pl.ds(...)]`)
sliced past the end of a ref when the kernel is traced.
"""

from __future__ import annotations

import re
import traceback
from typing import Any

from pallas_puzzles.engine.learner_lines import (
    info_lines,
    learner_frames,
    make_line,
    recorded_lines,
    same_file,
    tracebacks,
)
from pallas_puzzles.engine.targets.pallas_call.explain import copies
from pallas_puzzles.engine.targets.pallas_call.explain import cores as core_races
from pallas_puzzles.engine.targets.pallas_call.explain.copies import at_line
from pallas_puzzles.engine.targets.pallas_call.intercept import core_waits
from pallas_puzzles.engine.targets.pallas_call.intercept.dma_watch import (
    DMA_ID_START,
    STALL_SECONDS,
    RaceReport,
    SemaphoreStall,
)
from pallas_puzzles.engine.targets.pallas_call.intercept.negative_indices import NegativeIndex
from pallas_puzzles.engine.targets.pallas_call.intercept.semaphore_bounds import SemaphoreIndex
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine

# One access in a race report, e.g. "read of ('vmem', 102, 0, 0)[()] from 0, 0, /w/p.py:9:12 (kernel)";
# jax 0.12 writes the thread as "(0, 0)".
_ACCESS = re.compile(r"^\s*(read|write) of \('?(\w+)'?.*?\[.*?\] from \(?(\d+), (\d+)\)?,? (.*)$")
_FRAME = re.compile(r"^(.*?):(\d+)(?::\d+)? \((.*)\)$")
# A copy past the end of its source or destination, in HBM or in VMEM/SMEM scratch.
_COPY_BOUNDS = re.compile(r"Out-of-bounds (read|write) of \(.*(?:hbm|vmem|smem|any).*\): (?:reading|writing)? ?"
                          r"\[(.*)\] but buffer has shape \(([^)]*)\)")


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not e for e in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


# The interpreter's functions that carry out a DMA (the same names on jax 0.10 and 0.12).
_COPY_FUNCTIONS = frozenset({"execute_read", "execute_write", "execute_read_and_write", "dma_start", "dma_wait"})


def _in_a_copy(exc: BaseException) -> bool:
    """Whether the exception was raised while the interpreter carried out a DMA."""
    return any(frame.f_code.co_name in _COPY_FUNCTIONS
               for tb in tracebacks(exc) for frame, _ in traceback.walk_tb(tb))


def _copy_lines(exc: BaseException, learner_file: str) -> tuple[SourceLine, ...]:
    """The learner lines of a failed DMA: the lines JAX recorded, else the line that started the copy."""
    lines = recorded_lines(exc, learner_file)
    if lines:
        return lines
    found: list[SourceLine] = []
    for tb in tracebacks(exc):
        for frame, _ in traceback.walk_tb(tb):
            # a copy's own record (self.source_info), or the one the interpreter passed its callback
            for info in (getattr(frame.f_locals.get("self"), "source_info", None), frame.f_locals.get("source_info")):
                for line in info_lines(info, learner_file):
                    if line not in found:
                        found.append(line)
    return tuple(reversed(found))


def _kernel_line(session: StrictSession) -> tuple[SourceLine, ...]:
    """The kernel's own line, for a copy made by Pallas itself (an inner pipeline's)."""
    line = session.calls[-1].kernel_line if session.calls else None
    return (line,) if line is not None else ()


def _access_line(frame_text: str, learner_file: str) -> SourceLine | None:
    match = _FRAME.match(frame_text.strip())
    if match is None or not same_file(match.group(1), learner_file):
        return None
    return make_line(match.group(1), int(match.group(2)), match.group(3))


def _from_ledger(accesses: list[tuple[str, ...]], lines: list[tuple[Any, ...]], session: StrictSession,
                 text: str) -> Finding | None:
    """A race whose cause the copy ledger knows: a copy overtaken by another on its semaphore, or
    an output copy that the pipeline reads back at kernel exit without anyone waiting for it."""
    ledger = session.calls[-1].ledger if session.calls else None
    involved = [ledger.copies.get(int(who)) for _, _, who, _, _ in accesses] if ledger is not None else []
    found = [c for c in involved if c is not None]
    core = next((entry for entry in lines if not entry[2]), None)
    late = next((c for c in found if c.overtaken_by is not None), None)
    if late is not None:
        return copies.overtaken(late, session.learner_file, core[3] if core else None,
                                core is None or core[0] == "read", text)
    if found and core is not None and core[3] is None and core[0] == "read" and core[1].lower() in ("hbm", "any"):
        return copies.output_not_waited(found[0], session.learner_file, _kernel_line(session), text)
    return None


def _race(text: str, copies: int | None, session: StrictSession) -> Finding:
    accesses = [m.groups() for m in map(_ACCESS.match, text.splitlines()) if m]
    lines = [(kind, space, int(who) >= DMA_ID_START, _access_line(frame, session.learner_file))
             for kind, space, who, _core, frame in accesses]
    known = _from_ledger(accesses, lines, session, text) or core_races.race(accesses, session, text)
    if known is not None:
        return known
    where = tuple(line for *_, line in lines if line is not None)
    by_copy = [entry for entry in lines if entry[2]]
    by_core = [entry for entry in lines if not entry[2]]
    reader = next((entry for entry in by_copy if entry[0] == "read"), None)
    writer = next((entry for entry in by_copy if entry[0] == "write"), None)
    if reader is not None and writer is not None:  # a copy out of a buffer while another copy fills it
        return Finding(FindingKind.DMA_SLOT_IN_USE,
                       f"The copy started{at_line(writer[3])} writes a {writer[1].upper()} window that the copy "
                       f"started{at_line(reader[3])} reads from: nothing orders the two, so what it copies out may "
                       "be the old data or the new. Wait for one copy before starting the other.",
                       where=where, detail=text)
    if len(by_copy) >= 2:  # two copies into one window, the first not yet waited on
        starts = [f"line {entry[3].line}" for entry in by_copy if entry[3] is not None]
        return Finding(FindingKind.DMA_SLOT_IN_USE,
                       f"Two copies write the same {by_copy[0][1].upper()} window "
                       f"({' and '.join(starts) or 'in the kernel'})"
                       f": the second starts before the first's chunk was waited on and used.",
                       where=where, detail=text)
    if by_copy and by_core:
        copy_line, core = by_copy[0][3], by_core[0]
        verb = "reads" if core[0] == "read" else "writes"
        here = f"line {core[3].line}" if core[3] else "the kernel"
        started = f" started at line {copy_line.line}" if copy_line else ""
        if copies is not None and copies > 1:
            return Finding(FindingKind.DMA_SLOT_IN_USE,
                           f"The copy{started} overwrites a {core[1].upper()} slot whose earlier chunk "
                           f"{here} still {verb}.", where=where, detail=text)
        if by_copy[0][0] == "read":  # the copy reads the buffer (a copy out of it) while the kernel writes it
            return Finding(FindingKind.DMA_READ_BEFORE_WAIT,
                           f"{here.capitalize()} {verb} a {core[1].upper()} buffer that the copy{started} may still "
                           "be reading: a copy reads its source at any moment until its wait, so finish writing "
                           "the buffer before starting the copy.", where=where, detail=text)
        return Finding(FindingKind.DMA_READ_BEFORE_WAIT,
                       f"{here.capitalize()} {verb} a {core[1].upper()} buffer before the copy{started} into it "
                       f"was waited on.", where=where, detail=text)
    space = lines[0][1].upper() if lines else "memory"
    cores = sorted({int(core) for *_, core, _frame in accesses})
    if not where and session.calls:  # the pipeline's own write-back: quote the output index_maps
        record = session.calls[-1]
        where = tuple(line for info in record.outputs for line in record.where(info))
    return Finding(FindingKind.RACE,
                   f"Cores {' and '.join(map(str, cores))} access the same {space} block with nothing ordering "
                   f"them, and at least one of them writes it.",
                   where=tuple(dict.fromkeys(where)), detail=text)


def _stall(stall: SemaphoreStall, session: StrictSession) -> Finding:
    late = copies.first_overtaken(session.calls[-1].ledger) if session.calls else None
    if late is not None:  # the wait that stalls lost its bytes to an earlier wait: name that
        return copies.overtaken(late, session.learner_file, None, True, str(stall))
    if stall.cores:  # every core of the kernel is stuck: say what each one does
        return Finding(FindingKind.SEMAPHORE_STALL, core_waits.sentence(stall.cores, stall.of, session.learner_file),
                       where=core_waits.lines(stall.cores, session.learner_file) or _kernel_line(session))
    where = recorded_lines(stall, session.learner_file) or learner_frames(stall, session.learner_file)
    where = where or _kernel_line(session)
    after = f", so the check stopped it after {STALL_SECONDS:g} s" if session.cores > 1 else ""
    what = (f"a copy of {stall.waited_for} bytes" if stall.is_dma
            else f"a count of {stall.waited_for}")
    return Finding(FindingKind.SEMAPHORE_STALL,
                   f"The kernel waited for {what} on a semaphore that nothing signals: no copy started on it was "
                   f"pending and its count stayed at {stall.count}{after}.",
                   where=tuple(where))


def _semaphore_index(fault: SemaphoreIndex, session: StrictSession) -> Finding:
    last = f"0 to {fault.size - 1}" if fault.size > 1 else "only 0"
    return Finding(FindingKind.SEMAPHORE_INDEX,
                   f"This semaphore is number {fault.index} of an array of {fault.size} ({last}): there is no such "
                   "semaphore (a negative index does not count from the end). The interpreter would quietly use "
                   "another one, which another copy or step already uses.",
                   where=_copy_lines(fault, session.learner_file) or _kernel_line(session), detail=str(fault))


def explain(exc: BaseException, session: StrictSession) -> Finding | None:
    """A finding for a DMA or semaphore fault among the exceptions of one failed case, else None."""
    causes = [cause for error in [*session.callback_errors, exc] for cause in _chain(error)]
    # The report may reach us as text inside XLA's error as well as the exception our hook raised.
    copies = next((c.copies for c in causes if isinstance(c, RaceReport)), None)
    for cause in causes:
        text = str(cause)
        if isinstance(cause, SemaphoreStall):
            return _stall(cause, session)
        if isinstance(cause, SemaphoreIndex):
            return _semaphore_index(cause, session)
        if isinstance(cause, NegativeIndex) and _in_a_copy(cause):
            return Finding(FindingKind.DMA_OVERRUN,
                           f"A copy's window starts before the array: it {text.removeprefix('the kernel ')}",
                           where=_copy_lines(cause, session.learner_file) or _kernel_line(session), detail=text)
        if "RACE DETECTED" in text:
            return _race(text[text.index("RACE DETECTED"):], copies, session)
        bounds = _COPY_BOUNDS.search(text)
        # A copy reading past its source raises IndexError, one writing past its destination ValueError.
        if isinstance(cause, (IndexError, ValueError)) and bounds and _in_a_copy(cause):
            direction, span, shape = bounds.groups()
            window = "[" + ", ".join(f"{a}:{b}" for a, b in re.findall(r"slice\((-?\d+), (-?\d+)", span)) + "]"
            return Finding(FindingKind.DMA_OVERRUN,
                           f"A copy {'reads' if direction == 'read' else 'writes'} {window} of an array of shape "
                           f"({shape}): the window runs past its end.",
                           where=_copy_lines(cause, session.learner_file) or _kernel_line(session),
                           detail=text)
        if isinstance(cause, ValueError) and "could not broadcast input array" in text and _in_a_copy(cause):
            return Finding(FindingKind.DMA_SHAPE, f"A copy's source and destination differ: {text}.",
                           where=_copy_lines(cause, session.learner_file), detail=text)
        if isinstance(cause, ValueError) and "Out of bound slice" in text:
            # The copy's own line first: the launcher frame above it is only where the kernel was traced.
            where = tuple(sorted(learner_frames(cause, session.learner_file), key=lambda line: ".at[" not in line.text))
            if any(".at[" in line.text for line in where):
                return Finding(FindingKind.DMA_OVERRUN,
                               f"A copy's window runs past the end of the array ({text.strip()}).",
                               where=where, detail=text)
    return None
