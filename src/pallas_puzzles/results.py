"""A check's outcome as plain data; renderers (terminal, JSON) are views of it.

Results cross a process boundary (the worker sends them to the UI), so they
hold only built-in types and catalogue kinds: no jax arrays, no exceptions.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from pallas_puzzles.findings import FindingKind
from pallas_puzzles.source_line import SourceLine

if TYPE_CHECKING:
    from pallas_puzzles.engine.targets.tpu_multichip.traffic import RingTraffic
    from pallas_puzzles.perf.figures import Performance
    from pallas_puzzles.perf.gpu_card import GpuCard


@dataclass(frozen=True)
class Finding:
    """Something wrong that is not (only) a numeric mismatch.

    `message` says what happened in this kernel; `explanation` defaults to the
    catalogue's text for the kind, or a more specific plain-language meaning.
    """

    kind: FindingKind
    message: str
    explanation: str = ""
    where: tuple[SourceLine, ...] = ()
    grid_point: tuple[int, ...] | None = None
    array: str | None = None
    detail: str = ""
    # Kernels over several devices: the device the finding is about (its index on the mesh, row-major),
    # and how many devices ran the kernel; None and 0 for a kernel on one device.
    device: int | None = None
    devices: int = 0

    def __post_init__(self) -> None:
        if not self.explanation:
            object.__setattr__(self, "explanation", self.kind.explanation)

    # Short reprs, for a notebook that shows `report.cases` or `report.findings`: the fields are there to read.
    def __repr__(self) -> str:
        where = f" at line {self.where[0].line}" if self.where else ""
        return f"<finding {self.kind.id}{where}: {self.message}>"


class ElementFault(Enum):
    """Why one output element is wrong."""

    WRONG = "wrong"
    NAN = "nan"  # NaN or inf where the spec has a finite number
    UNWRITTEN = "unwritten"


GARBAGE_MAGNITUDE = 1e30  # larger than any puzzle's output: uninitialised memory


def value_text(value: float, fault: ElementFault = ElementFault.WRONG) -> str:
    """One output value as every view writes it: NaN, inf, garbage and never-written named."""
    if fault is ElementFault.UNWRITTEN:
        return "never written"
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if abs(value) >= GARBAGE_MAGNITUDE:
        return f"{value:.2e} (garbage)"
    return f"{value:.6g}"


@dataclass(frozen=True)
class BadElement:
    index: tuple[int, ...]
    expected: float
    got: float
    fault: ElementFault


@dataclass(frozen=True)
class Mismatch:
    """A focused summary of where the output differs from the spec."""

    shape: tuple[int, ...]
    total: int
    n_bad: int
    n_nan: int
    n_unwritten: int
    max_abs_error: float
    examples: tuple[BadElement, ...]
    block_shape: tuple[int, ...]
    block_map: tuple[str, ...]  # rows of cells: "." good, "x" wrong, "N" NaN/garbage, "?" unwritten
    block_map_title: str = ""
    rtol: float = 0.0
    atol: float = 0.0
    # Where the wrong blocks came from: the grid points whose output block holds a wrong
    # element (in grid order, at most a few) and the kernel lines that store into that output.
    grid_points: tuple[tuple[int, ...], ...] = ()
    more_grid_points: int = 0  # wrong grid points beyond those listed
    stored_at: tuple[SourceLine, ...] = ()

    def origin(self) -> str:
        """"The wrong blocks are the ones written at grid points (0, 3), (1, 3); they were stored at line 41"."""
        if not self.grid_points:
            return ""
        points = ", ".join(str(p) for p in self.grid_points)
        points += f" and {self.more_grid_points} more" if self.more_grid_points else ""
        noun = "grid point" if len(self.grid_points) + self.more_grid_points == 1 else "grid points"
        if self.n_unwritten == self.n_bad:  # nothing was stored: "written at" would mislead
            return f"The unwritten blocks are the ones {noun} {points} should have stored."
        text = f"The wrong blocks are the ones written at {noun} {points}"
        if not self.stored_at:
            return text + "."
        plural = "s" if len(self.stored_at) > 1 else ""
        return text + f"; they were stored at line{plural} {', '.join(str(s.line) for s in self.stored_at)}:"

    def __repr__(self) -> str:
        return f"<mismatch {self.kind.id}: {self.n_bad} of {self.total} output elements wrong>"

    @property
    def kind(self) -> FindingKind:
        """The one reason this mismatch is reported under (worst first)."""
        if self.n_unwritten:
            return FindingKind.MISMATCH_UNWRITTEN
        if self.n_nan:
            return FindingKind.MISMATCH_NAN
        if any(abs(e.got) >= GARBAGE_MAGNITUDE for e in self.examples if not math.isnan(e.got)):
            return FindingKind.MISMATCH_GARBAGE
        return FindingKind.MISMATCH_WRONG


class Status(Enum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # no verdict: the checker itself failed


@dataclass(frozen=True)
class OperandLayout:
    """One operand of a pallas_call as the kernel's pipeline sees it.

    `block` is the elements per block along each dimension (1 where squeezed);
    None when the operand is not split into blocks (left in HBM, in SMEM, or
    indexed by element offsets). `block_indices` is the block each grid step
    uses, in the order the grid runs (row-major, last axis fastest); None when
    it could not be worked out before the kernel ran.
    """

    name: str
    role: str  # "prefetch", "input", "output" or "scratch"
    shape: tuple[int, ...]
    dtype: str
    block: tuple[int, ...] | None
    memory_space: str = ""  # "" for pipelined blocks; else "any", "vmem", "smem", "semaphore", ...
    block_indices: tuple[tuple[int, ...], ...] | None = None
    index_map_line: SourceLine | None = None
    # Left in HBM: what the kernel's own copies (DMAs) moved to or from it, when the interpreter ran them.
    copied_bytes: int | None = None
    copy_count: int = 0
    copy_line: SourceLine | None = None  # where the first of those copies was started

    def moves(self) -> tuple[bool, ...]:
        """Per grid step: does the TPU pipeline move a block for this operand? It copies an input block
        in, or writes a finished output block back, only when the block index differs from the previous
        step's; a step with the same index reuses the block already in VMEM."""
        indices = self.block_indices or ()
        return tuple(step == 0 or indices[step] != indices[step - 1] for step in range(len(indices)))


@dataclass(frozen=True)
class CallLayout:
    """What one pallas_call moves: its grid and operands, for views and the cost model."""

    kernel: str
    grid: tuple[int, ...]
    semantics: tuple[str, ...]  # per grid axis, as declared ("parallel", "arbitrary"); () when not given
    operands: tuple[OperandLayout, ...]
    call_line: SourceLine | None = None
    kernel_line: SourceLine | None = None

    def role(self, role: str) -> tuple[OperandLayout, ...]:
        return tuple(op for op in self.operands if op.role == role)

    def grid_points(self) -> list[tuple[int, ...]]:
        """Every grid point in the order the grid runs."""
        return [tuple(int(v) for v in point) for point in itertools.product(*(range(g) for g in self.grid))]


@dataclass(frozen=True)
class CaseResult:
    label: str
    passed: bool
    findings: tuple[Finding, ...] = ()
    mismatch: Mismatch | None = None
    seconds: float = 0.0
    sizes: dict[str, int] = field(default_factory=dict)
    calls: tuple[CallLayout, ...] = ()  # the pallas_calls this case made, in order
    # The grid points the interpreter ran, every call's in turn; None when the backend compiles.
    grid_points_run: tuple[tuple[int, ...], ...] | None = None
    performance: Performance | None = None  # the cost model's figures, when the case ran to a verdict
    traffic: RingTraffic | None = None  # kernels over several devices: the bytes each sent and received
    gpu_card: GpuCard | None = None  # GPU kernels: what the case would cost on an NVIDIA GPU (perf/gpu_card.py)
    devices: int = 0  # how many devices ran the case's kernel together (0: one, the usual)
    measured_seconds: float | None = None  # on an accelerator, asked by perf: median seconds of one call
    lowering_seconds: float = 0.0  # of `seconds`, the lowering for a GPU (where the target does one)

    def __repr__(self) -> str:
        why = f" ({self.kind.id})" if self.kind is not None and not self.passed else ""
        return f"<case {self.label}: {'passed' if self.passed else 'failed'}{why}>"

    @property
    def finding(self) -> Finding | None:
        return self.findings[0] if self.findings else None

    @property
    def lost_device(self) -> bool:
        """The case ended in a fault that leaves its process's GPU unusable (engine/device_faults.py)."""
        return any(f.kind is FindingKind.DEVICE_FAULT for f in self.findings)

    @property
    def ran_to_the_end(self) -> bool:
        """Passed, or failed only on its numbers: the kernel ran through, so rules about what it did apply."""
        return self.passed or (self.mismatch is not None and all(f.kind.is_mismatch for f in self.findings))

    @property
    def kind(self) -> FindingKind | None:
        """The kind this case failed with, if it failed."""
        if self.findings:
            return self.findings[0].kind
        return self.mismatch.kind if self.mismatch is not None else None


@dataclass(frozen=True)
class CaseSpan:
    """The shape cases from `start` up to `stop` (by index): the part of a check one process runs when
    two share it (worker/split.py). A case cut in two (Target.lowers_apart): the last case runs only up to
    and with its lowering for a GPU, or the first all but its lowering (the other part lowers it)."""

    start: int
    stop: int
    ends_at_lowering: bool = False
    starts_after_lowering: bool = False


@dataclass
class CheckResult:
    number: int
    name: str
    file: str
    backend: str
    passed: bool
    mode: str = "run"  # "run", or "lower" for the TPU lowering check
    cases: list[CaseResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # about the file as a whole
    printed: str = ""  # what the learner's code printed (jax.debug.print and print)
    seconds: float = 0.0
    skipped_cases: int = 0  # cases not run because an earlier one failed

    @property
    def finding(self) -> Finding | None:
        """The finding that stopped the check before any case could run (not started, syntax, time-out, ...)."""
        return self.findings[0] if self.findings else None

    @property
    def not_started(self) -> bool:
        return any(f.kind is FindingKind.NOT_STARTED for f in self.findings)

    @property
    def numbers_right(self) -> bool:
        """Every case run computed the right numbers: a pass, or a fail on an efficiency budget alone."""
        if self.passed:
            return True
        return bool(self.cases) and not self.findings and all(
            c.mismatch is None and all(f.kind.is_budget for f in c.findings) for c in self.cases)

    @property
    def first_failure(self) -> CaseResult | None:
        return next((c for c in self.cases if not c.passed), None)

    @property
    def kind(self) -> FindingKind | None:
        """The kind of the first thing wrong, for tests and summaries."""
        if self.finding is not None:
            return self.finding.kind
        case = self.first_failure
        return case.kind if case is not None else None

    @property
    def status(self) -> Status:
        if self.passed:
            return Status.PASS
        if self.finding is not None and self.finding.kind.is_our_fault:
            return Status.ERROR
        return Status.FAIL
