"""Blackwell faults in the learner's words: races on tensor memory, hangs named by their barrier (or by
the multicast copy some blocks skipped), an accumulator never initialised, TMEM over capacity.

The Mosaic GPU target words what it knows (mosaic_gpu/faults.py); this module rewords the findings
whose cause is a tcgen05 MMA or a TMEM readback, from the fault the interpreter raised (hooks.py
keeps it). Which call an access is comes from its line's text: a tcgen05 MMA runs as an asynchronous
task of the interpreter, so the callback running when its access is checked need not be its own.
"""

from __future__ import annotations

import ast
import dataclasses
import linecache
import re

from pallas_puzzles.engine.targets.blackwell import multicast
from pallas_puzzles.engine.targets.blackwell.multicast_windows import DifferingWindows
from pallas_puzzles.engine.targets.mosaic_gpu.record import Access, BarrierStall, RaceFound
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine

MMA, LOAD = "tcgen05_mma", "async_load_tmem"
# Calls that make a barrier passed to them arrive.
ARRIVERS = {"copy_gmem_to_smem", "tcgen05_mma", "tcgen05_commit_arrive", "barrier_arrive",
            "async_copy_smem_to_tmem"}
TMEM_LIMIT = re.compile(r"got (\d+) columns, exceeding the limit of (\d+)")
WAIT_ARGUMENT = re.compile(r"barrier_wait\(\s*([^()]*(?:\([^()]*\))?[^()]*)\)")


def _call(access: Access) -> str:
    text = access.line.text if access.line is not None else ""
    return next((name for name in (MMA, LOAD) if name in text), access.op)


def _at(line: SourceLine | None) -> str:
    return f"line {line.line}" if line is not None else "a line of JAX's own"


def _cause(exc: BaseException | None, kind: type[BaseException]) -> BaseException | None:
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kind):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _where(*lines: SourceLine | None) -> tuple[SourceLine, ...]:
    return tuple(dict.fromkeys(x for x in lines if x is not None))


def race_finding(failure: BaseException | None) -> Finding | None:
    """A race with a tcgen05 MMA on one side, worded for tensor memory; None for any other race."""
    found = _cause(failure, RaceFound)
    if not isinstance(found, RaceFound):
        return None
    now, then = found.race.access, found.race.other
    calls = {_call(now), _call(then)}
    if MMA not in calls:
        return None
    mma, other = (now, then) if _call(now) == MMA else (then, now)
    # Which came first: in one warpgroup, the order the detector met them (program order); across
    # warpgroups (an epilogue beside the MMA warp) that order is luck, and the load had not waited.
    load_after_mma = other is now or other.warpgroup != mma.warpgroup
    if other.memory == "TMEM" and _call(other) == LOAD and load_after_mma:
        return Finding(FindingKind.TMEM_READ_EARLY, (
            f"The TMEM load at {_at(other.line)} reads the accumulator while the tcgen05_mma at "
            f"{_at(mma.line)} may still be writing it: wait on the MMA's barrier (plgpu.barrier_wait) before "
            "plgpu.async_load_tmem."), where=_where(other.line, mma.line))
    if other.memory == "TMEM" and _call(other) == LOAD:
        return Finding(FindingKind.TMEM_OVERWRITTEN, (
            f"The tcgen05_mma at {_at(mma.line)} overwrites the accumulator while the TMEM load at "
            f"{_at(other.line)} may still be reading it: call plgpu.wait_load_tmem() after the load, before the "
            "next MMA into the same TMEM."), where=_where(mma.line, other.line))
    if other.memory == "SMEM" and other.op == "tma-load" and found.race.refill:
        return Finding(FindingKind.SMEM_SLOT_IN_USE, (
            f"The TMA copy at {_at(other.line)} refills shared memory that the tcgen05_mma at {_at(mma.line)} may "
            "still be reading: wait on the barrier that MMA arrives on (it releases the slot) before the copy."),
            where=_where(other.line, mma.line))
    if other.memory == "SMEM" and other.op == "tma-load":
        return Finding(FindingKind.SMEM_READ_BEFORE_WAIT, (
            f"The tcgen05_mma at {_at(mma.line)} reads shared memory that the TMA copy at {_at(other.line)} may "
            "still be filling: wait on the copy's barrier before the MMA."), where=_where(mma.line, other.line))
    if other.memory == "SMEM" and other.writes and other.op in ("write", "_swap", "swap"):
        return Finding(FindingKind.SMEM_UNCOMMITTED, (
            f"The tcgen05_mma at {_at(mma.line)} reads shared memory stored at {_at(other.line)} that was not "
            "committed: call plgpu.commit_smem() after the stores, before the MMA."),
            where=_where(other.line, mma.line))
    return None


def stall_finding(failure: BaseException | None, finding: Finding) -> Finding:
    """The Mosaic GPU target's hang finding, led by the name of the barrier it waits on."""
    stall = _cause(failure, BarrierStall)
    if not isinstance(stall, BarrierStall):
        return finding
    line = stall.waiters[0].line
    match = WAIT_ARGUMENT.search(line.text) if line is not None else None
    if match is None:
        return finding
    name = match.group(1).strip()
    lead = f"The wait on {name} at {_at(line)} never returns (stopped). "
    base = re.split(r"[.\[]", name, maxsplit=1)[0]
    copy = multicast.conditional_copy(line.file, base) if line is not None else None
    if copy is not None:
        return Finding(FindingKind.MULTICAST_MASK, (
            f"The multicast copy at {_at(copy)} is issued by only some blocks of the cluster (it is under a "
            f"condition), so a block goes without its share of the operand and the wait on {name} at {_at(line)} "
            "never returns (stopped): a multicast tile lands in each block's SMEM only once every block of the "
            "cluster has issued the copy, so issue it in every block."), where=_where(copy, line))
    if line is not None and not _arrived_on(line.file, base):
        return dataclasses.replace(finding, message=lead + (
            f"Nothing in the kernel arrives on {base}: a barrier ordered to the tensor core completes when "
            f"the MMAs issued before plgpu.tcgen05_commit_arrive({base}) have finished (or the tcgen05_mma "
            "it is given), a TMA barrier when its copies land, any barrier on plgpu.barrier_arrive."))
    return dataclasses.replace(finding, message=lead + finding.message)


def _arrived_on(file: str, barrier: str) -> bool:
    """Whether any call that makes a barrier arrive names `barrier` in the learner's file (True if unknown)."""
    try:
        tree = ast.parse("".join(linecache.getlines(file)), file)
    except SyntaxError:
        return True
    for node in ast.walk(tree):
        func = node.func if isinstance(node, ast.Call) else None
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in ARRIVERS and any(isinstance(n, ast.Name) and n.id == barrier
                                    for arg in (*node.args, *(k.value for k in node.keywords))
                                    for n in ast.walk(arg)):
            return True
    return False


def uninitialised_finding(line: SourceLine | None) -> Finding:
    return Finding(FindingKind.TMEM_UNINITIALISED, (
        f"The tcgen05_mma at {_at(line)} adds onto a TMEM accumulator that nothing wrote yet (accumulate=True on "
        "fresh TMEM holds garbage, NaN here): the first MMA into it must use accumulate=False."),
        where=_where(line))


def read_unwritten_finding(line: SourceLine | None) -> Finding:
    return Finding(FindingKind.TMEM_READ_EARLY, (
        f"The TMEM load at {_at(line)} read the accumulator before any tcgen05_mma had written it: wait on the "
        "barrier the MMAs arrive on (after tcgen05_commit_arrive) before plgpu.async_load_tmem."), where=_where(line))


def unordered_barrier_finding(finding: Finding) -> Finding | None:
    """JAX's refusal of an MMA barrier that the tensor core cannot arrive on, said at the MMA's line."""
    if finding.kind is not FindingKind.ERROR or "orders_tensor_core" not in finding.message:
        return None
    return Finding(FindingKind.BARRIER_NOT_FOR_MMA, (
        "The barrier given to this tcgen05 call is an ordinary one: declare it "
        "plgpu.Barrier(orders_tensor_core=True) in scratch_types, so that the tensor core can arrive on it."),
        where=tuple(sorted(finding.where, key=lambda line: "tcgen05" not in line.text)))


def capacity_finding(finding: Finding) -> Finding | None:
    """The CUDA lowering's refusal of TMEM past its 512 columns, said as the capacity it is."""
    match = TMEM_LIMIT.search(finding.detail or finding.message)
    if finding.kind is not FindingKind.GPU_LOWERING or match is None:
        return None
    return Finding(FindingKind.TMEM_CAPACITY, (
        f"The kernel's TMEM allocations need {match.group(1)} columns; a Blackwell SM has {match.group(2)} "
        "(128 lanes x 512 columns of 32 bits): use narrower accumulator tiles or fewer TMEM buffers."),
        where=finding.where)


def multicast_window_finding(differing: DifferingWindows) -> Finding:
    """A multicast copy whose source window is not the same in every block of the cluster."""
    first, second = differing.blocks
    return Finding(FindingKind.MULTICAST_WINDOW, (
        f"The multicast copy at {_at(differing.line)} reads a different source window in block {first} of the "
        f"cluster than in block {second}. A multicast sends one tile to every block of the cluster, each block "
        "loading a share of it from its own window, so on a GPU each block's SMEM would hold a patchwork of "
        "both windows (the interpreter copies each block's whole window, so the numbers come out right here). "
        "Multicast only the tile every block needs whole; copy what differs per block without collective_axes."),
        where=_where(differing.line))
