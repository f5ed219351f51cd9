"""What one shape case of a Mosaic GPU kernel did, as the interpreter hooks saw it.

The hooks (interpreter.py, barriers.py, races.py, api.py) write into the record
of the case that is running (`active.record`); the target turns it into
findings once the kernel has finished or failed. Everything here is plain
data: source lines, counts, masks. Interpreter threads write concurrently, so
appends go through the record's lock.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine


@dataclass(frozen=True)
class Access:
    """One side of a race: what touched the buffer, from which line."""

    op: str  # "read"/"write" (a kernel line's load or store), "tma-load", "tma-store", or a callback name
    writes: bool  # the access writes the buffer (else reads it)
    memory: str  # "SMEM", "GMEM", ...
    line: SourceLine | None  # the learner's line; None for an access JAX's own code made
    made_by: str = ""  # for line None: the function that made it (e.g. emit_pipeline's loop)
    block: tuple[int, ...] = ()  # the block's coordinates in the kernel's grid
    warpgroup: int = 0  # the warpgroup within the block


@dataclass(frozen=True)
class Race:
    access: Access  # the access that found the race
    other: Access  # the earlier access it was not ordered with
    # A read racing with a TMA copy, where the reader had waited for an earlier copy into the same
    # window: the racing copy refilled a buffer still in use (else the read skipped the copy's wait).
    refill: bool = False


@dataclass(frozen=True)
class Waiter:
    """A warpgroup stopped in a barrier wait that nothing can complete."""

    block: tuple[int, ...]
    warpgroup: int
    line: SourceLine | None
    num_arrivals: int  # arrivals the barrier needs per phase
    arrivals: int  # arrivals so far in the phase it waits for
    phase: int  # the phase it waits to see complete
    seen_before: bool  # this warpgroup had already seen an earlier phase of the barrier complete


@dataclass(frozen=True)
class BarrierMisuse:
    """A barrier rule the interpreter enforces (phases must be observed, arrivals consumed)."""

    reason: str  # "unobserved-phase", "missed-phase", "late-first-wait", "pending-arrivals"
    num_arrivals: int
    arrivals: int
    phase: int
    line: SourceLine | None  # the copy/arrive/wait that broke the rule
    last_arrival: SourceLine | None = None  # for pending arrivals: the copy or arrive that was never consumed
    other_waits: tuple[SourceLine, ...] = ()  # where other warpgroups first waited on the same barrier


@dataclass(frozen=True)
class UnfilledRead:
    """A read of memory that nothing had written yet (SMEM scratch or an output; NaN in the interpreter)."""

    op: str
    line: SourceLine | None
    elements: int
    memory: str


@dataclass(frozen=True)
class Launch:
    """A plgpu.kernel the learner's launcher built: where, and the shared memory it asks for."""

    line: SourceLine | None
    scratch_line: SourceLine | None  # the line of `scratch_types=`, when the call has one
    smem_bytes: int
    smem_buffers: tuple[tuple[tuple[int, ...], str, int], ...]  # (shape, dtype, bytes) of each SMEM scratch
    body: SourceLine | None = None  # where the kernel's body is defined (the answer must come from the learner's)


class KernelFault(RuntimeError):
    """A fault the hooks recognised while the kernel ran, carrying its data (raised inside the interpreter)."""


class BarrierStall(KernelFault):
    def __init__(self, waiters: tuple[Waiter, ...]) -> None:
        super().__init__(f"{len(waiters)} warpgroup(s) wait on barriers that nothing can complete")
        self.waiters = waiters


class BarrierRuleBroken(KernelFault):
    def __init__(self, misuse: BarrierMisuse) -> None:
        super().__init__(f"barrier rule broken: {misuse.reason}")
        self.misuse = misuse


class RaceFound(KernelFault):
    def __init__(self, race: Race) -> None:
        super().__init__(f"race: {race.access.op} and {race.other.op}")
        self.race = race


class StoreNotWaited(KernelFault):
    def __init__(self, line: SourceLine | None, committed: bool = True) -> None:
        super().__init__("a TMA store was still reading shared memory when its warpgroup ended")
        self.line = line
        self.committed = committed  # False: issued with commit_group=False and never committed to a group


class WindowBeforeStart(KernelFault):
    """A TMA copy whose global-memory window starts before the array (a negative row or column)."""

    def __init__(self, line: SourceLine | None, into: bool, dim: int, start: int) -> None:
        super().__init__(f"a TMA window starts at {start} along dimension {dim}")
        self.line, self.into, self.dim, self.start = line, into, dim, start


class WindowPastEnd(KernelFault):
    """A TMA load that promised its window lies inside the array (PROMISE_IN_BOUNDS) and reached past its end."""

    def __init__(self, line: SourceLine | None, dim: int, stop: int, extent: int) -> None:
        super().__init__(f"a TMA window promised in bounds ends at {stop} of {extent} along dimension {dim}")
        self.line, self.dim, self.stop, self.extent = line, dim, stop, extent


class IndexBelowZero(KernelFault):
    """A TMA copy into or out of shared memory at a negative index (a ring slot computed below 0)."""

    def __init__(self, line: SourceLine | None, into: bool, dim: int, start: int) -> None:
        super().__init__(f"a TMA copy's shared-memory index is {start} along dimension {dim}")
        self.line, self.into, self.dim, self.start = line, into, dim, start


class LoadNotWaited(KernelFault):
    """A TMA copy into shared memory completed a barrier phase that no thread waited for."""

    def __init__(self, line: SourceLine | None) -> None:
        super().__init__("a TMA copy was never waited for")
        self.line = line


class WgmmaRunning(KernelFault):
    """A warpgroup ended while a wgmma it started may still run (nothing waited for it)."""

    def __init__(self, line: SourceLine | None) -> None:
        super().__init__("a wgmma was still running when its warpgroup ended")
        self.line = line


@dataclass
class CostTally:
    """What the GPU card counts while the kernel runs (costs.py adds to it under the record's lock)."""

    gmem_bytes_read: int = 0  # by TMA loads
    gmem_bytes_written: int = 0  # by TMA stores
    flops: int = 0  # by MMAs
    mma_dtype: str = ""
    smem_bytes: int = 0  # SMEM allocated, every block's together
    smem_keys: set[Any] = field(default_factory=set)
    blocks: set[tuple[int, ...]] = field(default_factory=set)
    in_flight: dict[tuple[int, ...], dict[Any, int]] = field(default_factory=dict)  # block -> barrier -> loads
    arrivals: dict[Any, int] = field(default_factory=dict)  # barrier -> the arrivals that complete one phase
    copy_waits: int = 0
    overlapped_waits: int = 0
    mma_since_wait: set[tuple[int, ...]] = field(default_factory=set)  # blocks that issued an MMA since a wait
    mma_left_running: bool = False  # the kernel waits with wgmma_wait(n >= 1): an MMA runs on past its step
    serial_wait: SourceLine | None = None  # the first copy wait with no other load in flight
    first_mma: SourceLine | None = None  # where the pipeline body computes (emit_pipeline's waits have no line)
    read_by_line: dict[SourceLine | None, int] = field(default_factory=dict)  # TMA load bytes per learner line


@dataclass
class CaseRecord:
    learner_file: str
    failure: BaseException | None = None  # the first exception the interpreter recorded
    unfilled: list[UnfilledRead] = field(default_factory=list)
    outputs_written: list[Any] = field(default_factory=list)  # numpy masks, one per kernel output read back
    launches: list[Launch] = field(default_factory=list)
    lint: Finding | None = None  # a rule neither the interpreter nor the lowering sees
    launcher: Any = None  # the launcher's jaxpr, traced for the CUDA lowering (engine/integrity judges it)
    costs: CostTally = field(default_factory=CostTally)  # what the GPU card counts (costs.py)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def new_run(self) -> None:
        """Forget what the last run of the kernel did (its launches and lint stay: they come from tracing)."""
        with self.lock:
            self.failure = None
            self.unfilled.clear()
            self.outputs_written.clear()
            # The card counts one run (every schedule runs the same copies and MMAs); what tracing saw stays.
            self.costs = CostTally(mma_left_running=self.costs.mma_left_running)

    def note_failure(self, exc: BaseException) -> None:
        with self.lock:
            if self.failure is None:
                self.failure = exc

    def note_unfilled(self, read: UnfilledRead) -> None:
        with self.lock:
            if len(self.unfilled) < 4:
                self.unfilled.append(read)


@dataclass
class _Slot:
    """The record of the case that is running; None between cases (the hooks then do nothing).

    A plain attribute, not a thread-local: the interpreter runs warpgroups on threads of its own."""

    record: CaseRecord | None = None
    interpreting: bool = False  # the interpreted run (not the CUDA lowering pass) is in progress


active = _Slot()
