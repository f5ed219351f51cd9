"""One shape case of one check, as every target sees it: its sizes, data, label and stopwatch."""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pallas_puzzles.backends import Backend
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.engine import spec_outputs, specs
from pallas_puzzles.results import CallLayout, CaseResult, Finding

CaseData = tuple[tuple[np.ndarray, ...], np.ndarray, float]
_data: dict[tuple[Path, str, int, tuple[tuple[str, int], ...]], CaseData] = {}


def case_data(puzzle: Puzzle, index: int, sizes: dict[str, int]) -> CaseData:
    """Inputs, the spec's output and its FLOPs for a case; deterministic, so a process computes them once
    (and a machine, while nothing they depend on changes: engine/spec_outputs.py)."""
    key = (puzzle.folder, puzzle.name, index, tuple(sorted(sizes.items())))
    if key not in _data:
        inputs = specs.make_inputs(puzzle, sizes, index)
        _data[key] = (inputs, *spec_outputs.expected_and_flops(puzzle, inputs))
    return _data[key]


def forget_data() -> None:
    """Drop every case's data: a checker moving on to another puzzle keeps none of the last one's (the whole
    course's would be 13 MiB of the TPU chapters alone, held for good)."""
    _data.clear()


# Where a target lowers each case for a GPU (Target.lowers_apart), which part of the case runs in this
# process: all of it; all but the lowering (the other checker of a shared check does it); or the case up to
# and with its lowering, and no further (for the other checker).
LOWERED_HERE, LOWERED_APART, ONLY_LOWERED = "here", "apart", "only"


@dataclass
class Case:
    """A shape case being checked: what it is, and the clock that started with it."""

    puzzle: Puzzle
    index: int
    sizes: dict[str, int]
    learner_file: Path
    backend: Backend
    timed_runs: int = 0  # on an accelerator, time a passing case over this many compiled calls (perf)
    lowering: str = LOWERED_HERE  # or LOWERED_APART or ONLY_LOWERED (above)
    started: float = field(default_factory=time.perf_counter)
    lowering_seconds: float = 0.0  # set by the target once it has lowered the case

    @property
    def label(self) -> str:
        return specs.case_label(self.sizes, self.puzzle, self.index)

    @property
    def schedule_seed(self) -> int:
        """The seed of the orders of events a case runs in (threads, devices, copies landing): the same for
        every check of a file, so a verdict never depends on luck, and other for every case."""
        return zlib.crc32(f"{self.puzzle.name}/{self.index}".encode())

    def data(self) -> CaseData:
        return case_data(self.puzzle, self.index, self.sizes)

    def inputs(self) -> tuple[np.ndarray, ...]:
        """Only the inputs (the lowering check needs no expected output)."""
        return specs.make_inputs(self.puzzle, self.sizes, self.index)

    def done(self, passed: bool, *findings: Finding, mismatch: Any = None, performance: Any = None,
             calls: tuple[CallLayout, ...] = (),
             grid_points_run: tuple[tuple[int, ...], ...] | None = None, traffic: Any = None,
             devices: int = 0, gpu_card: Any = None) -> CaseResult:
        return CaseResult(label=self.label, passed=passed, findings=tuple(findings), mismatch=mismatch,
                          seconds=time.perf_counter() - self.started, sizes=dict(self.sizes), calls=calls,
                          grid_points_run=grid_points_run, performance=performance, traffic=traffic,
                          devices=devices, gpu_card=gpu_card, lowering_seconds=self.lowering_seconds)
