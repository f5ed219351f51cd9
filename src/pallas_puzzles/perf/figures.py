"""The cost model's figures for one shape case, as plain data: per operand, per pallas_call, per case.

perf/model.py computes them, perf/waste.py and perf/budget.py read them, and a CaseResult
carries them across the process boundary to the card and the JSON view.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from pallas_puzzles.perf.launcher import LauncherTraffic


@dataclass(frozen=True)
class Waste:
    """The biggest waste of one case: a sentence, and the array it is about (None: no one array)."""

    sentence: str = ""
    array: str | None = None


@dataclass(frozen=True)
class OperandCost:
    name: str
    role: str  # "prefetch", "input", "output" or "scratch"
    shape: tuple[int, ...]
    dtype: str
    hbm_bytes: int | None  # bytes moved between HBM and VMEM; None when not counted
    min_bytes: int  # the whole array once
    copies: int = 0  # block copies the pipeline makes
    distinct_blocks: int = 0
    vmem_bytes: int = 0
    note: str = ""  # a few words on why it moves more than its minimum, or why it is not counted
    why: str = ""  # the same as one full clause, for the card's "biggest waste" and the budget finding

    @property
    def ratio(self) -> float | None:
        if self.hbm_bytes is None or not self.min_bytes:
            return None
        return self.hbm_bytes / self.min_bytes

    @property
    def verb(self) -> str:
        return "written" if self.role == "output" else "read"


@dataclass(frozen=True)
class CallCost:
    kernel: str
    grid: tuple[int, ...]
    operands: tuple[OperandCost, ...]

    @property
    def grid_steps(self) -> int:
        return math.prod(self.grid)

    def _sum(self, roles: tuple[str, ...]) -> int:
        return sum(op.hbm_bytes or 0 for op in self.operands if op.role in roles)

    @property
    def hbm_bytes_read(self) -> int:
        return self._sum(("input",))

    @property
    def hbm_bytes_written(self) -> int:
        return self._sum(("output",))

    @property
    def hbm_bytes_min(self) -> int:
        return sum(op.min_bytes for op in self.operands if op.role in ("input", "output") and op.hbm_bytes is not None)

    @property
    def vmem_bytes(self) -> int:
        return sum(op.vmem_bytes for op in self.operands)


@dataclass(frozen=True)
class Performance:
    """One shape case on one chip: traffic, VMEM, FLOPs and the estimated time."""

    chip: str
    case: str
    calls: tuple[CallCost, ...]
    flops: float
    hbm_bytes_min: int  # the launcher's minimum: the spec's inputs read once, its output written once
    vmem_limit_bytes: int
    memory_seconds: float
    compute_seconds: float
    overhead_seconds: float
    ideal_seconds: float  # minimum traffic at full bandwidth, peak compute, one grid step
    waste: str = ""  # one sentence on the biggest waste; "" when there is none
    waste_array: str | None = None  # the array that sentence is about, if it is about one
    operands: tuple[OperandCost, ...] = field(default=())
    launcher: LauncherTraffic | None = None  # XLA operations outside the pallas_calls; None: not measured
    generation: str = ""  # what the figures model, as the card says it ("a TPU v5e", "one TensorCore of a TPU7x ...")

    @property
    def hbm_bytes_read(self) -> int:
        return sum(c.hbm_bytes_read for c in self.calls) + (self.launcher.read_bytes if self.launcher else 0)

    @property
    def hbm_bytes_written(self) -> int:
        return sum(c.hbm_bytes_written for c in self.calls) + (self.launcher.written_bytes if self.launcher else 0)

    @property
    def hbm_bytes(self) -> int:
        return self.hbm_bytes_read + self.hbm_bytes_written

    @property
    def traffic_ratio(self) -> float:
        return self.hbm_bytes / self.hbm_bytes_min if self.hbm_bytes_min else 1.0

    @property
    def vmem_bytes(self) -> int:
        return max((c.vmem_bytes for c in self.calls), default=0)  # one call runs at a time

    @property
    def grid_steps(self) -> int:
        return sum(c.grid_steps for c in self.calls)

    @property
    def est_seconds(self) -> float:
        return max(self.memory_seconds, self.compute_seconds, self.overhead_seconds)

    @property
    def bound(self) -> str:
        times = {"memory": self.memory_seconds, "compute": self.compute_seconds, "overhead": self.overhead_seconds}
        return max(times, key=lambda k: times[k])

    @property
    def arithmetic_intensity(self) -> float:
        return self.flops / self.hbm_bytes if self.hbm_bytes else 0.0
