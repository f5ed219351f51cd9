"""`device`: a pallas_call chapter compiled and run on a real GPU or TPU.

The strict stand-in still records every call and checks its index_maps before
anything runs, but the kernel is compiled for the device: out-of-bounds reads
and unwritten memory behave as the hardware makes them. On a GPU Pallas's
Triton lowering compiles these kernels (see `start`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from pallas_puzzles.engine.targets.base import Target
from pallas_puzzles.engine.targets.memory import forget_compiled
from pallas_puzzles.engine.targets.timing import timed

if TYPE_CHECKING:
    from pallas_puzzles.engine.case import Case
    from pallas_puzzles.results import CaseResult


class Device(Target):
    name: ClassVar[str] = "device"
    summary: ClassVar[str] = "compiled and run on the GPU or TPU JAX sees (index_maps still checked first)"
    cost_card: ClassVar[bool] = True

    def start(self) -> None:
        import warnings

        from pallas_puzzles.engine.targets.pallas_call.intercept import patch

        patch.install()
        # Pallas's Triton lowering compiles the course's portable subset (pallas_call with
        # BlockSpecs over small blocks); Mosaic GPU wants 128-thread warpgroup-shaped arrays and
        # steers pallas_call users to plgpu.kernel. jax 0.12 picks Triton for pallas_call by
        # default, jax 0.10 needs the flag. JAX's deprecation notice for the Triton lowering,
        # repeated on every kernel, is noise for a learner.
        warnings.filterwarnings("ignore", message=".*Pallas Triton backend is deprecated.*")
        import jax

        try:
            jax.config.update("jax_pallas_use_mosaic_gpu", False)
        except (AttributeError, KeyError, ValueError):
            pass

    def run_case(self, case: Case, entry: Callable[..., Any]) -> CaseResult:
        from pallas_puzzles.engine.targets.pallas_call import case_runner as pallas_case

        return timed(case, entry, pallas_case.run(case, entry, self.reset, self.cost_card))

    def between_puzzles(self) -> None:
        forget_compiled()
