"""`tpu-interpret`: Pallas's TPU interpreter on the CPU, in strict mode.

The learner's `pl.pallas_call` is replaced by the strict stand-in
(engine/intercept/patch.py): every index_map is evaluated over the whole grid,
out-of-bounds reads raise instead of clamping, padding and unwritten memory read
as NaN or garbage, output blocks start from a sentinel, parallel axes run
shuffled, and DMAs and semaphores are watched (engine/intercept/dma_watch.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from pallas_puzzles.engine.targets.base import ProcessSetup, Target

if TYPE_CHECKING:
    from pallas_puzzles.engine.case import Case
    from pallas_puzzles.results import CaseResult

# Checked on jax 0.10.2 and 0.12.0.1: lowering any interpreted pallas_call imports
# Pallas's Mosaic GPU interpreter just to test whether the call asked for it
# (jax/_src/pallas/pallas_call.py); that costs about 0.35 s (a failing import on
# a CPU-only 0.10) to 1.9 s (0.12) in a fresh process. JAX treats an ImportError
# there as "not asked for", so a process that only interprets TPU kernels makes
# that import fail fast.
GPU_INTERPRETER = "jax._src.pallas.mosaic_gpu.interpret.interpret_pallas_call"


class TpuInterpreter(Target):
    name: ClassVar[str] = "tpu-interpret"
    summary: ClassVar[str] = ("Pallas's TPU interpreter on the CPU, strict: out-of-bounds blocks and reads, "
                              "unwritten output, padding, parallel-axis order, DMAs and semaphores")
    setup: ClassVar[ProcessSetup] = ProcessSetup(block_imports=(GPU_INTERPRETER,))
    cost_card: ClassVar[bool] = True
    partners: ClassVar[dict[str, str]] = {"lower": "tpu-lowering", "gpu": "device", "tpu": "device"}

    def start(self) -> None:
        from pallas_puzzles.engine.intercept import dma_watch, patch

        patch.install()
        dma_watch.install()

    def run_case(self, case: Case, entry: Callable[..., Any]) -> CaseResult:
        from pallas_puzzles.engine.targets import pallas_case

        return pallas_case.run(case, entry, self.reset, self.cost_card)

    def reset(self) -> None:
        from pallas_puzzles.engine.intercept import patch

        patch.reset_interpreter()

    def between_puzzles(self) -> None:
        forget_compiled()


def forget_compiled() -> None:
    """Drop JAX's in-memory caches when the process moves on to another puzzle.

    Programs compiled for one puzzle are never reused by the next (each check
    traces a fresh module), yet they pile up: over the whole course a checker
    grows from about 220 MiB to 450 MiB without this, and stays near 270 MiB
    with it. Checks of the same puzzle (watch mode's saves) keep the caches.
    """
    import gc

    import jax

    jax.clear_caches()
    gc.collect()
