"""`tpu-kernel`: the TPU interpreter for the chapter in the style of JAX's current TPU guides.

Everything tpu-interpret does (the strict stand-ins for `pallas_call` and, for every TPU target,
`pl.kernel`: engine/targets/pallas_call/intercept/), with the puzzle's simulated TensorCores per
device and the race detector on, plus the rules a puzzle's `target_options` ask for
(engine/targets/tpu_kernel/options.py): an input updated in place, a grid sized at run time,
random numbers with the properties that hold on any hardware.

No jax or numpy at module level: the CLI imports this to learn the process set-up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pallas_puzzles.engine.targets.tpu_interpret import TpuInterpreter
from pallas_puzzles.engine.targets.tpu_kernel import options as kernel_options

if TYPE_CHECKING:
    from pallas_puzzles.engine.case import Case
    from pallas_puzzles.results import CaseResult


class TpuKernel(TpuInterpreter):
    name: ClassVar[str] = "tpu-kernel"
    summary: ClassVar[str] = ("Pallas's TPU interpreter for pl.kernel over a TensorCore mesh (and pallas_call): "
                              "core counts, core barriers and races, in-place updates, run-time grids, "
                              "in-kernel random numbers")
    partners: ClassVar[dict[str, str]] = {"lower": "tpu-lowering", "tpu": "device"}

    @classmethod
    def option_problems(cls, options: Mapping[str, Any]) -> list[str]:
        return kernel_options.problems(options)

    def start(self) -> None:
        from pallas_puzzles.engine.targets.tpu_kernel import randomness

        super().start()
        randomness.install()

    def run_case(self, case: Case, entry: Callable[..., Any]) -> CaseResult:
        from pallas_puzzles.engine.targets.tpu_kernel import rules

        return rules.judged(case, entry, super().run_case)
