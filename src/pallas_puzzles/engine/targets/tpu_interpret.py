"""`tpu-interpret`: Pallas's TPU interpreter on the CPU, in strict mode.

The learner's `pl.pallas_call` is replaced by the strict stand-in
(engine/targets/pallas_call/intercept/patch.py): every index_map is evaluated over the whole grid,
out-of-bounds reads raise instead of clamping, padding and unwritten memory read
as NaN or garbage, output blocks start from a sentinel, parallel axes run
shuffled, and DMAs and semaphores are watched (engine/targets/pallas_call/intercept/dma_watch.py).
Small grids are interpreted eagerly and the checker stays warm between puzzles
(engine/targets/fast_path.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from pallas_puzzles.engine.targets.base import ProcessSetup, Target
from pallas_puzzles.engine.targets.pallas_call.fast_path import FastPath
from pallas_puzzles.engine.targets.pallas_call.jax_private import GPU_INTERPRETER

if TYPE_CHECKING:
    from pathlib import Path

    from pallas_puzzles.backends import Backend
    from pallas_puzzles.course.model import Puzzle
    from pallas_puzzles.engine.case import Case
    from pallas_puzzles.results import CaseResult

# Checked on jax 0.10.2 and 0.12.0.1: lowering any interpreted pallas_call imports
# Pallas's Mosaic GPU interpreter (GPU_INTERPRETER) just to test whether the call asked
# for it; that costs about 0.35 s (a failing import on a CPU-only 0.10) to 1.9 s (0.12)
# in a fresh process. JAX treats an ImportError there as "not asked for", so a process
# that only interprets TPU kernels makes that import fail fast.


# Pallas's TPU API, which every check of the TPU chapters imports (50 ms).
TPU_PRELOAD = ("jax.experimental.pallas.tpu",)


class TpuInterpreter(Target):
    name: ClassVar[str] = "tpu-interpret"
    summary: ClassVar[str] = ("Pallas's TPU interpreter on the CPU, strict: out-of-bounds blocks and reads, "
                              "unwritten output, padding, parallel-axis order, DMAs and semaphores")
    setup: ClassVar[ProcessSetup] = ProcessSetup(block_imports=(GPU_INTERPRETER,), more_devices_alike=True,
                                                 preload=TPU_PRELOAD)
    cost_card: ClassVar[bool] = True
    partners: ClassVar[dict[str, str]] = {"lower": "tpu-lowering", "gpu": "device", "tpu": "device"}

    def __init__(self, fast: FastPath | None = None) -> None:
        self.fast = fast if fast is not None else FastPath.from_environment()

    def start(self) -> None:
        from pallas_puzzles.engine.targets.pallas_call.intercept import dma_watch, eager, eager_cores, patch

        patch.install()
        dma_watch.install()
        eager.install()
        eager_cores.install()
        eager.reuse_contexts(self.fast.context_reuse)

    def run_case(self, case: Case, entry: Callable[..., Any]) -> CaseResult:
        from pallas_puzzles.engine.targets.pallas_call import case_runner as pallas_case
        from pallas_puzzles.engine.targets.pallas_call.intercept import eager

        with eager.eagerly(self.fast.eager_grid_limit, self.fast.numpy_ops):
            return pallas_case.run(case, entry, self.reset, self.cost_card)

    def after_cases(self, puzzle: Puzzle, entry: Callable[..., Any], learner_file: Path,
                    backend: Backend) -> CaseResult | None:
        """The index maps at sizes that are exact multiples of the blocks (engine/multiples.py)."""
        from pallas_puzzles.engine.targets.pallas_call import multiples

        return multiples.check(puzzle, entry, learner_file, backend)

    def reset(self) -> None:
        from pallas_puzzles.engine.targets.pallas_call.intercept import patch

        patch.reset_interpreter()
