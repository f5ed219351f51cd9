"""A ledger of the manual copies (DMAs) a kernel starts: when each lands, which wait took its
bytes, and how many bytes it moves to or from HBM.

Three things read it:
- a copy nobody waited for: at kernel exit its semaphore still counts its bytes (copies that
  land when they start) or it is still pending (copies that land when waited on); the
  interpreter only prints a line for the first, so the ledger turns both into a finding
  (session.unbalanced) naming the line that started the copy;
- a wait that another copy satisfied: copies that land when waited on are taken newest first,
  so a wait on a semaphore shared by two copies in flight can end with the awaited one still
  pending; the ledger remembers that, and explain/dma.py names it when the read races;
- the cost model: bytes each copy moves between HBM and VMEM (CallRecord.ledger).

The hooks wrap private parts of the TPU interpreter (DMA.__init__ and execute_write,
TPU_MEMORY_SPACE_NAMES; Semaphore.wait, SharedMemory.allocate_buffer and
get_sempahores_with_nonzero_count: pallas_call/jax_private.py lists them, with the versions
checked); dma_watch.install installs them. They only record: a correct kernel computes the same.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.learner_lines import info_lines
from pallas_puzzles.engine.targets.pallas_call import jax_private
from pallas_puzzles.engine.targets.pallas_call.intercept.records import Copy, Ledger
from pallas_puzzles.engine.targets.pallas_call.intercept.session import active
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine

_HBM_NAMES = ("any", "hbm")
_starting = threading.Lock()  # the cores of one kernel run on threads of their own


def _ledger() -> Ledger | None:
    session = active.session
    return session.calls[-1].ledger if session is not None and session.calls else None


def _memory_name(index: Any) -> str:
    return str(jax_private.interpreter().TPU_MEMORY_SPACE_NAMES.get(int(index), "")).lower()


def _registering(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        ledger = _ledger()
        if ledger is None:
            return
        hbm_src = _memory_name(self.src_memory_space) in _HBM_NAMES
        hbm_dst = _memory_name(self.dst_memory_space) in _HBM_NAMES
        with _starting:  # two cores starting copies at once would take the same place in the order
            ledger.copies[int(self.id)] = Copy(
                id=int(self.id), order=len(ledger.copies), semaphore=int(self.dst_sem.id),
                core=int(self.dst_global_core_id), source_info=self.source_info,
                reads_hbm=int(self.src_buffer_id) if hbm_src else None,
                writes_hbm=int(self.dst_buffer_id) if hbm_dst else None)

    return init


def _landing(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def execute_write(self: Any, *args: Any, **kwargs: Any) -> Any:
        data = getattr(self, "data", None)
        size = int(data.itemsize * data.size) if data is not None else 0
        result = original(self, *args, **kwargs)
        ledger = _ledger()
        copy = ledger.copies.get(int(self.id)) if ledger is not None else None
        if copy is not None and not copy.landed:
            copy.landed, copy.bytes = True, size
        return result

    return execute_write


def _watching_waits(original: Callable[..., Any]) -> Callable[..., Any]:
    """After a DMA wait: copies still pending on its semaphore that are older than one that
    landed during the wait were overtaken (the wait took the newer copy's bytes)."""
    @functools.wraps(original)
    def wait(self: Any, value: Any, global_core_id: Any, *args: Any, **kwargs: Any) -> Any:
        ledger = _ledger() if kwargs.get("has_tasks") else None
        if ledger is None:
            return original(self, value, global_core_id, *args, **kwargs)
        before = ledger.pending_on(int(self.id), int(global_core_id))
        info = getattr(kwargs.get("logging_info"), "source_info", None)
        ledger.waits.append((int(self.id), int(global_core_id), int(value), info))
        result = original(self, value, global_core_id, *args, **kwargs)
        landed = [c for c in before if c.landed]
        if landed:
            newest = max(landed, key=lambda c: c.order)
            for copy in before:
                if not copy.landed and copy.order < newest.order and copy.overtaken_by is None:
                    copy.overtaken_by, copy.overtaking_wait = newest, info
        return result

    return wait


def _recording_hbm(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def allocate_buffer(self: Any, key: Any, *args: Any, **kwargs: Any) -> Any:
        ledger = _ledger()
        if ledger is not None and isinstance(key, tuple) and str(key[0]).lower() in _HBM_NAMES:
            if int(key[1]) not in ledger.hbm_buffers:
                ledger.hbm_buffers.append(int(key[1]))
        return original(self, key, *args, **kwargs)

    return allocate_buffer


def _line_list(lines: list[SourceLine]) -> str:
    numbers = sorted({line.line for line in lines})
    if not numbers:
        return "in the kernel"
    words = [str(n) for n in numbers]
    return ("at line " if len(words) == 1 else "at lines ") + (
        words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1])


def unwaited_finding(copies: list[Copy], counted: int, learner_file: str,
                     fallback: tuple[SourceLine, ...]) -> Finding:
    """The finding for copies that nobody waited for (`counted`: bytes their semaphores still hold)."""
    lines = [line for copy in copies for line in copy.lines(learner_file)[:1]]
    where = tuple(dict.fromkeys(lines)) or fallback
    started = _line_list(lines)
    if len(copies) == 1:
        subject = f"The copy started {started} was never waited on"
    else:
        subject = f"{len(copies)} copies started {started} were never waited on"
    one = len(copies) == 1
    if any(not c.landed for c in copies):
        state = f"{'it' if one else 'they'} had not landed when the kernel ended"
    else:
        state = f"at kernel exit {'its' if one else 'their'} semaphore still counted {counted} bytes"
    return Finding(FindingKind.DMA_NOT_WAITED, f"{subject}: {state}.", where=where)


def _unwaited(ledger: Ledger, counts: list[tuple[int, int, int]]) -> tuple[list[Copy], int]:
    """Copies whose bytes no wait took: those still pending, then for each semaphore that still
    counts bytes, its latest landed copies that make up the count."""
    left = [c for c in ledger.started() if not c.landed]
    counted = 0
    for semaphore, core, count in counts:
        counted += count
        landed = sorted((c for c in ledger.started()
                         if c.semaphore == semaphore and c.core == core and c.landed), key=lambda c: -c.order)
        total = 0
        for copy in landed:
            if total >= count:
                break
            left.append(copy)
            total += copy.bytes
    return sorted(left, key=lambda c: c.order), counted


def _short_wait(ledger: Ledger) -> tuple[Any, int, Copy] | None:
    """A wait for fewer bytes than the smallest copy that landed on its semaphore: (its record, its bytes, the copy)."""
    for semaphore, core, wanted, where in ledger.waits:
        landed = [c for c in ledger.started() if c.semaphore == semaphore and c.core == core and c.bytes]
        smallest = min(landed, key=lambda c: c.bytes, default=None)
        if smallest is not None and wanted < smallest.bytes:
            return where, wanted, smallest
    return None


def short_wait_finding(wait: Any, wanted: int, copy: Copy, learner_file: str,
                       fallback: tuple[SourceLine, ...]) -> Finding:
    """A copy that was waited for, but by a wait whose descriptor covers fewer bytes than the copy moves."""
    waited = info_lines(wait, learner_file)[:1]
    started = copy.lines(learner_file)[:1]
    at_wait = f" at line {waited[0].line}" if waited else ""
    at_start = f" at line {started[0].line}" if started else ""
    return Finding(FindingKind.DMA_NOT_WAITED,
                   f"The wait{at_wait} takes {wanted} bytes from its semaphore, but the copy started{at_start} "
                   f"brings {copy.bytes}: the wait's descriptor covers a smaller window than the copy, so the rest "
                   "stays counted (and ends a later wait on the semaphore before its own copy has landed).",
                   where=tuple(dict.fromkeys((*waited, *started))) or fallback)


def _checking_exit(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def nonzero(self: Any, device_id: Any, *args: Any, **kwargs: Any) -> Any:
        found = original(self, device_id, *args, **kwargs)
        session = active.session
        ledger = _ledger()
        if session is None or ledger is None:
            return found
        counts = [(int(sem.id), int(core), int(sem.count_by_core[core])) for sem, core in found]
        copies, counted = _unwaited(ledger, counts)
        record = session.calls[-1]
        fallback = tuple(line for line in (record.kernel_line,) if line is not None)
        short = _short_wait(ledger) if copies or counts else None
        if short is not None:
            session.unbalanced.append(short_wait_finding(*short, session.learner_file, fallback))
        elif copies:
            session.unbalanced.append(unwaited_finding(copies, counted, session.learner_file, fallback))
        elif counts:  # a semaphore_signal that no semaphore_wait took
            session.unbalanced.append(Finding(
                FindingKind.DMA_NOT_WAITED,
                f"A semaphore still counted {counts[0][2]} at kernel exit: something signalled it and nothing "
                "waited for that count.", where=fallback))
        return []  # the finding says it; the interpreter's own line would only repeat it on stdout

    return nonzero


def hook(ipc: Any, shared_memory: Any) -> None:
    """Wrap the interpreter's DMA and semaphore parts (dma_watch.install calls this once per process)."""
    ipc.DMA.__init__ = _registering(ipc.DMA.__init__)
    ipc.DMA.execute_write = _landing(ipc.DMA.execute_write)
    shared_memory.Semaphore.wait = _watching_waits(shared_memory.Semaphore.wait)
    memory = shared_memory.SharedMemory
    memory.allocate_buffer = _recording_hbm(memory.allocate_buffer)
    memory.get_sempahores_with_nonzero_count = _checking_exit(memory.get_sempahores_with_nonzero_count)
