"""A Mosaic GPU kernel's failure as a finding: which line, what happened, what to do.

The interpreter hooks raise their faults as data (record.py); this module words them. Races name
both accesses; barrier faults name the waits, copies and arrives involved.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pallas_puzzles.engine.file_faults import first_line
from pallas_puzzles.engine.learner_lines import learner_frames, recorded_lines
from pallas_puzzles.engine.meanings import plain_meaning
from pallas_puzzles.engine.targets.mosaic_gpu.record import (
    Access,
    BarrierMisuse,
    BarrierRuleBroken,
    BarrierStall,
    CaseRecord,
    IndexBelowZero,
    Launch,
    LoadNotWaited,
    Race,
    RaceFound,
    StoreNotWaited,
    UnfilledRead,
    Waiter,
    WgmmaRunning,
    WindowBeforeStart,
    WindowPastEnd,
)
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictViolation
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine

GENERIC = ("read", "write")
GPU_RACE = (
    "Blocks of a plgpu.kernel grid, and the warpgroups of one block, run at the same time: two of them "
    "touched the same elements with nothing ordering them. Give each block its own rows (index them "
    "with lax.axis_index), and order warpgroups with barriers.")


def _lines(*lines: SourceLine | None) -> tuple[SourceLine, ...]:
    out: list[SourceLine] = []
    for line in lines:
        if line is not None and line not in out:
            out.append(line)
    return tuple(out)


def _at(line: SourceLine | None, made_by: str = "") -> str:
    if line is not None:
        return f"at line {line.line}"
    return f"made by {made_by or 'JAX'} (not a line of yours)"


def _who(block: tuple[int, ...], warpgroup: int, other: tuple[tuple[int, ...], int] | None = None) -> str:
    """" in block (1, 0)", " in warpgroup 1": only what tells two accesses apart (or, alone, the block)."""
    parts = []
    if block and (other is None or other[0] != block):
        parts.append(f"block {block}")
    if other is not None and other[1] != warpgroup:
        parts.append(f"warpgroup {warpgroup}")
    return f" in {', '.join(parts)}" if parts else ""


def describe(access: Access, other: Access | None = None) -> str:
    """"the read of SMEM at line 31", "the TMA copy into SMEM started at line 27 in block (1,)", ..."""
    where = _at(access.line, access.made_by)
    if other is not None:
        where += _who(access.block, access.warpgroup, (other.block, other.warpgroup))
    if access.op == "read":
        return f"the read of {access.memory} {where}"
    if access.op == "write":
        return f"the store into {access.memory} {where}"
    started = f"started {where}" if access.line is not None else where
    if access.op == "tma-load":
        return f"the TMA copy {'into' if access.writes else 'from'} {access.memory} {started}"
    if access.op == "tma-store":
        return f"the TMA store {'into' if access.writes else 'from'} {access.memory} {started}"
    if access.op == "wgmma":
        return f"the wgmma reading {access.memory} {where}"
    return f"the {access.op} {where}"


def race_finding(race: Race) -> Finding:
    a, b = race.access, race.other
    first, second = describe(a, b), describe(b, a)
    if first == second:  # one line, run twice (a loop, or two blocks the grid does not tell apart)
        second = "the same line, run earlier"
    both = f"{first[0].upper()}{first[1:]} raced with {second}"
    where = _lines(a.line, b.line)
    if b.op == "wgmma" and a.writes and a.op in ("write", "tma-load"):  # an operand overwritten after a wgmma
        return Finding(FindingKind.WGMMA_IN_FLIGHT,
                       f"{both}: the wgmma may still be reading its operand when it is overwritten; no "
                       "plgpu.wgmma_wait (or read of its accumulator) came between them.", where=where)
    # A read and a copy into the same buffer: which one the detector met first is up to the threads, so
    # the kind comes from what the reader had waited for, not from the order.
    read_and_copy = {a.op, b.op} in ({"read", "tma-load"}, {"wgmma", "tma-load"}) and (a.writes or b.writes)
    if read_and_copy and race.refill:
        return Finding(FindingKind.SMEM_SLOT_IN_USE,
                       f"{both}: the reader had waited for an earlier copy into this buffer, and this copy "
                       "refilled it while that chunk was still being read (no wait on an 'empty' barrier, or "
                       "no plgpu.commit_smem(), came between them).", where=where)
    if read_and_copy or (a.op in (*GENERIC, "wgmma") and b.op == "tma-load" and b.writes):
        return Finding(FindingKind.SMEM_READ_BEFORE_WAIT,
                       f"{both}: the copy may still be filling the buffer; no barrier_wait on the copy's "
                       "barrier came between them.", where=where)
    if a.op == "tma-load" and a.writes and b.op == "tma-load":
        return Finding(FindingKind.SMEM_SLOT_IN_USE,
                       f"{both}: two copies into one buffer were in flight at once, so the second overwrites "
                       "the first one's chunk before it was waited for and used.", where=where)
    if a.op == "tma-load" and a.writes and b.op in (*GENERIC, "wgmma"):
        return Finding(FindingKind.SMEM_SLOT_IN_USE,
                       f"{both}: the copy may overwrite the buffer while that earlier access still uses it "
                       "(no plgpu.commit_smem(), or no wait on an 'empty' barrier, came between them).",
                       where=where)
    if a.op in ("tma-store", "wgmma") and not a.writes and b.op == "write":
        reader = "the TMA store" if a.op == "tma-store" else "the wgmma"
        return Finding(FindingKind.SMEM_UNCOMMITTED,
                       f"{both}: the store into shared memory was not committed (plgpu.commit_smem()) "
                       f"before {reader} read it.", where=where)
    if a.writes and b.op == "tma-store" and not b.writes:
        return Finding(FindingKind.TMA_STORE_UNWAITED,
                       f"{both}: the TMA store may still be reading the buffer (no plgpu.wait_smem_to_gmem "
                       "came between them).", where=where)
    return Finding(FindingKind.RACE, f"{both}; nothing ordered the two.", explanation=GPU_RACE, where=where)


def _waiter_text(w: Waiter) -> str:
    block = f" of block {w.block}" if w.block else ""
    return (f"warpgroup {w.warpgroup}{block} waits {_at(w.line)} for a phase that needs {w.num_arrivals} "
            f"arrival(s) and has had {w.arrivals}")


def stall_finding(waiters: tuple[Waiter, ...]) -> Finding:
    first = waiters[0]
    if len(waiters) == 1:
        message = (f"This barrier_wait can never return: the barrier needs {first.num_arrivals} arrival(s) to "
                   f"complete the phase it waits for and has had {first.arrivals}, and no other warpgroup is "
                   "running that could arrive.")
    else:
        message = ("Every warpgroup is waiting on a barrier that nothing can complete: "
                   + "; ".join(_waiter_text(w) for w in waiters) + ".")
    if 0 < first.arrivals < first.num_arrivals:
        message += (f" Fewer copies arrived than num_arrivals={first.num_arrivals}: the barrier expects more "
                    "copies than were started on it.")
    elif first.seen_before:
        message += (" This warpgroup already waited for an earlier phase of this barrier: a second wait for "
                    "one copy waits for a phase that nothing completes.")
    else:
        message += (" Nothing arrived in this phase: no copy was started with this barrier, or the "
                    "warpgroup that should call barrier_arrive never does.")
    return Finding(FindingKind.BARRIER_STALL, message, where=_lines(*(w.line for w in waiters)))


def misuse_finding(m: BarrierMisuse) -> Finding:
    if m.reason == "pending-arrivals":
        message = (f"The kernel ended with {m.arrivals} of the {m.num_arrivals} arrivals a phase of this barrier "
                   f"needs: the arrival {_at(m.last_arrival)} was never completed into a phase, and nothing "
                   "waited for it. num_arrivals must equal the copies (and arrives) of each phase.")
        return Finding(FindingKind.BARRIER_PHASE, message, where=_lines(m.last_arrival, m.line))
    if m.reason == "late-first-wait":
        message = (f"This warpgroup waits on the barrier for the first time after {m.phase} of its phases "
                   "completed: a warpgroup that waits on a barrier must wait for every phase of it.")
        if m.other_waits:  # the phases went by while another warpgroup's wait on this barrier let it run on
            message = (f"The warpgroup that waits {_at(m.line)} waits on its barrier for the first time after "
                       f"{m.phase} of its phases completed, and another warpgroup waits on the same barrier "
                       f"{_at(m.other_waits[0])}: if that wait was meant for another barrier (a slot coming "
                       "free, say), it is the one to change. A warpgroup that waits on a barrier must wait for "
                       "every phase of it.")
            return Finding(FindingKind.BARRIER_PHASE, message, where=_lines(m.other_waits[0], m.line, m.last_arrival))
    elif m.reason == "unobserved-phase":
        message = (f"The arrival {_at(m.line)} completed a second phase of a barrier (num_arrivals="
                   f"{m.num_arrivals}) before any warpgroup had waited for its first: each phase must be "
                   "waited for before the next one completes. Two copies on one barrier need "
                   "num_arrivals=2; two buffers in flight need a barrier each, and a wait on each.")
    else:
        message = (f"A phase of this barrier (num_arrivals={m.num_arrivals}) completed again before a "
                   f"warpgroup that waits on it had seen the previous one; the arrival or wait {_at(m.line)} "
                   "came one phase too late or too early.")
    return Finding(FindingKind.BARRIER_PHASE, message, where=_lines(m.line, m.last_arrival))


def unfilled_finding(read: UnfilledRead) -> Finding:
    what = {"read": "reads", "tma-store": "copies out", "wgmma": "multiplies"}.get(read.op, "reads")
    return Finding(FindingKind.SMEM_UNFILLED,
                   f"The {read.op} {_at(read.line)} {what} {read.elements} element(s) of {read.memory} that "
                   "nothing had written: they hold NaN here, and garbage on a GPU.",
                   where=_lines(read.line))


def output_never_written(launch: Launch | None) -> Finding:
    """No element of the kernel's output in global memory was written, by a TMA store or any other."""
    body = launch.body if launch is not None else None
    return Finding(FindingKind.MISMATCH_UNWRITTEN,
                   f"Nothing wrote the kernel's output{f' (the kernel at line {body.line})' if body else ''}: it "
                   "lives in global memory, which a block reaches only by copying out of shared memory or storing "
                   "into the output ref, and this kernel did neither.",
                   explanation="Results computed in shared memory stay there until copied out: commit_smem(), "
                               "then copy_smem_to_gmem(smem, out_ref), then wait_smem_to_gmem(0) before the "
                               "kernel ends.",
                   where=_lines(body))


def _store_words(fault: StoreNotWaited, at: str) -> str:
    why = ("nothing waited for it with plgpu.wait_smem_to_gmem" if fault.committed else
           "it was issued with commit_group=False and never committed to a group with "
           "plgpu.commit_smem_to_gmem_group(), so no wait_smem_to_gmem waits for it")
    return f"The warpgroup ended while the TMA store {at} was still reading shared memory: {why}."


def _window_words(fault: WindowBeforeStart, at: str) -> str:
    start = f"row {fault.start}" if fault.dim == 0 else f"index {fault.start} along dimension {fault.dim}"
    return (f"The TMA copy {at} {'writes' if fault.into else 'reads'} a window of global memory that starts "
            f"before the array, at {start}. A GPU reads what lies before the start as zeros and drops it on "
            "the way out, so every row lands shifted (the interpreter cannot run it at all). Start each "
            "window at its block's first row.")


# The faults about one line of the kernel: their kind, and their message given the fault and "at line N".
AT_ONE_LINE: dict[type, tuple[FindingKind, Callable[[Any, str], str]]] = {
    StoreNotWaited: (FindingKind.TMA_STORE_UNWAITED, _store_words),
    WindowBeforeStart: (FindingKind.TMA_WINDOW, _window_words),
    WindowPastEnd: (FindingKind.TMA_WINDOW, lambda fault, at: (
        f"The TMA copy {at} promises that its window lies inside the array (oob_mode=PROMISE_IN_BOUNDS), but "
        f"along dimension {fault.dim} it reaches element {fault.stop} of {fault.extent}: a GPU then neither clamps "
        "nor fills it and reads past the end of the array (the interpreter fills zeros whatever the mode). Leave "
        "oob_mode out (the default fills what lies past the end with zeros), or keep every window inside.")),
    IndexBelowZero: (FindingKind.SMEM_INDEX_NEGATIVE, lambda fault, at: (
        f"The TMA copy {at} {'writes into' if fault.into else 'reads from'} shared memory at index {fault.start} "
        f"along dimension {fault.dim}, below its first slot (0): jax.lax.rem keeps the sign of its first operand, "
        "so a ring index like jax.lax.rem(i - 1, S) is -1 when i is 0.")),
    LoadNotWaited: (FindingKind.TMA_LOAD_UNWAITED, lambda fault, at: (
        f"The TMA copy {at} was never waited for: no barrier_wait saw the phase of its barrier that it "
        "completed, so it may still be writing shared memory when the kernel ends. Wait for every copy you "
        "start, or do not start it (a pl.when around the copy).")),
    WgmmaRunning: (FindingKind.WGMMA_IN_FLIGHT, lambda fault, at: (
        f"The warpgroup ended while the wgmma {at} may still be running: nothing waited for it "
        "(plgpu.wgmma_wait(0), or a read of its accumulator).")),
}


def _fault_in(*exceptions: BaseException | None) -> BaseException | None:
    """The first of our recognised faults in the exceptions and their causes."""
    for exc in exceptions:
        current, seen = exc, set()
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            if isinstance(current, (BarrierStall, BarrierRuleBroken, RaceFound, *AT_ONE_LINE, StrictViolation)):
                return current
            current = current.__cause__ or current.__context__
    return None


def failure_finding(exc: BaseException, record: CaseRecord) -> Finding:
    """Explain an exception raised while a kernel was traced or interpreted."""
    fault = _fault_in(exc, record.failure)
    if isinstance(fault, StrictViolation):
        return fault.finding
    if isinstance(fault, BarrierStall):
        return stall_finding(fault.waiters)
    if isinstance(fault, BarrierRuleBroken):
        return misuse_finding(fault.misuse)
    if isinstance(fault, RaceFound):
        return race_finding(fault.race)
    for fault_type, (kind, words) in AT_ONE_LINE.items():
        if isinstance(fault, fault_type):
            return Finding(kind, words(fault, _at(fault.line)), where=_lines(fault.line))  # type: ignore[attr-defined]
    cause = record.failure if record.failure is not None else exc
    where = (recorded_lines(cause, record.learner_file) or learner_frames(cause, record.learner_file)
             or learner_frames(exc, record.learner_file))
    text = str(cause)
    message = first_line(text) if text.strip() else type(cause).__name__
    return Finding(FindingKind.ERROR, f"{type(cause).__name__}: {message[:400]}",
                   explanation=plain_meaning(f"{type(cause).__name__} {text}"), where=where, detail=text)
