"""Plain data describing a check's outcome.

Results cross a process boundary (the worker sends them to the UI), so they
hold only built-in types: no jax arrays, no exceptions, no tracebacks.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SourceLine:
    """A line of the learner's code that a finding points at."""

    file: str
    line: int
    text: str
    function: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Finding:
    """Something wrong that is not (only) a numeric mismatch.

    kind is one of: syntax, import, missing-entry, error, oob-block, oob-read,
    oob-write, revisit, race, unwritten, shape, timeout, crash, unsupported.
    """

    kind: str
    title: str
    explanation: str = ""
    where: tuple[SourceLine, ...] = ()
    grid_point: tuple[int, ...] | None = None
    array: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class BadElement:
    index: tuple[int, ...]
    expected: float
    got: float
    reason: str  # "wrong", "nan", "unwritten", "inf"


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


@dataclass(frozen=True)
class CaseResult:
    label: str
    passed: bool
    finding: Finding | None = None
    mismatch: Mismatch | None = None
    seconds: float = 0.0


@dataclass
class CheckResult:
    number: int
    name: str
    file: str
    backend: str
    passed: bool
    cases: list[CaseResult] = field(default_factory=list)
    finding: Finding | None = None  # a failure before any case ran (syntax, import, time-out)
    printed: str = ""  # what the learner's code printed (jax.debug.print and print)
    seconds: float = 0.0
    skipped_cases: int = 0  # cases not run because an earlier one failed
    note: str = ""

    @property
    def first_failure(self) -> CaseResult | None:
        return next((c for c in self.cases if not c.passed), None)
