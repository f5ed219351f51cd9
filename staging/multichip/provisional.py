"""Stand-ins for the lead's engine/targets/base.py and engine/case.py until they land on main (phase A only).

Shaped after DESIGN-17 section 2; drive.py installs them under the real module names.
"""

from __future__ import annotations

import sys
import time
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from pallas_puzzles.results import CaseResult, Finding


@dataclass(frozen=True)
class ProcessSetup:
    host_devices: int = 1
    block_imports: tuple[str, ...] = ()
    xla_flags: tuple[str, ...] = ()


class Target:
    name: ClassVar[str]
    summary: ClassVar[str]
    setup: ClassVar[ProcessSetup] = ProcessSetup()
    cost_card: ClassVar[bool] = False
    min_jax: ClassVar[str] = ""
    partners: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def option_problems(cls, options: Mapping[str, Any]) -> list[str]:
        return []

    def start(self) -> None: ...
    def reset(self) -> None: ...
    def between_puzzles(self) -> None: ...


@dataclass
class Case:
    puzzle: Any
    index: int
    sizes: dict[str, int]
    label: str
    learner_file: Any
    backend: Any
    inputs: tuple[np.ndarray, ...]
    expected: np.ndarray
    flops: float = 0.0
    started: float = field(default_factory=time.perf_counter)

    def done(self, passed: bool, *findings: Finding, mismatch: Any = None, performance: Any = None,
             **extra: Any) -> CaseResult:
        self.extra = extra  # what the lead's CaseResult does not carry yet (the traffic card)
        return CaseResult(label=self.label, passed=passed, findings=tuple(findings), mismatch=mismatch,
                          seconds=time.perf_counter() - self.started, sizes=dict(self.sizes),
                          performance=performance)


def install() -> None:
    """Make `pallas_puzzles.engine.targets.base` and `pallas_puzzles.engine.case` importable."""
    base = types.ModuleType("pallas_puzzles.engine.targets.base")
    base.ProcessSetup, base.Target = ProcessSetup, Target
    case = types.ModuleType("pallas_puzzles.engine.case")
    case.Case = Case
    sys.modules.setdefault(base.__name__, base)
    sys.modules.setdefault(case.__name__, case)
