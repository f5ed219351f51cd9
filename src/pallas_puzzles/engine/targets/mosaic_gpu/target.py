"""The Mosaic GPU target: plgpu.kernel kernels checked on a CPU (jax >= 0.12).

Each shape case runs in two passes:
1. The kernel is traced and lowered for CUDA on the CPU (mgpu/cuda_lowering.py): the rules only
   a GPU enforces (shared-memory capacity, wgmma tile shapes, register layouts) fail here. Lints
   (mgpu/api.py) fire while it is traced.
2. It runs in JAX's GPU interpreter with the race detector on (InterpretGPUParams), with hooks
   (mgpu/interpreter.py, barriers.py, races.py) that stop a barrier wait nothing can complete,
   name both lines of a race, and record which elements of each buffer were written, so that an
   output never written and shared memory read before it was filled are told apart.
On a real GPU the chapter runs compiled (its `gpu` partner); this target never touches a GPU.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pallas_puzzles.engine.targets.base import Target
from pallas_puzzles.engine.targets.mosaic_gpu import jax_private
from pallas_puzzles.engine.targets.timing import timed
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

if TYPE_CHECKING:
    from pallas_puzzles.engine.case import Case
    from pallas_puzzles.engine.targets.mosaic_gpu.record import CaseRecord
    from pallas_puzzles.results import CaseResult


@contextlib.contextmanager
def _quiet_callbacks() -> Iterator[None]:
    """JAX logs every failed interpreter callback with its traceback, and numpy warns about the NaN a
    wrong kernel makes (inf * 0 in a wgmma); the finding says it better."""
    logger = jax_private.callback_logger()
    saved = logger.propagate, logger.level
    logger.propagate, logger.level = False, logging.CRITICAL
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=RuntimeWarning, module=jax_private.WARNING_MODULES)
            yield
    finally:
        logger.propagate, logger.level = saved


class MosaicGpuTarget(Target):
    name: ClassVar[str] = "mosaic-gpu"
    summary: ClassVar[str] = ("Mosaic GPU kernels (plgpu.kernel) in JAX's GPU interpreter with race detection, "
                              "and lowered for CUDA on the CPU for the rules only a GPU enforces")
    min_jax: ClassVar[str] = "0.12"  # the GPU interpreter's public API (InterpretGPUParams) is new in 0.12
    partners: ClassVar[Mapping[str, str]] = {"gpu": "mosaic-gpu-device"}
    not_lowered_because: ClassVar[str] = ("its kernels are Mosaic GPU kernels, not TPU kernels "
                                          "(verify lowers them for CUDA as part of every check)")

    def start(self) -> None:
        from pallas_puzzles.engine.targets.mosaic_gpu import api, hooks

        hooks.install()
        api.install()

    def _params(self) -> Any:
        from jax.experimental.pallas import mosaic_gpu as plgpu

        return plgpu.InterpretGPUParams(detect_races=True, on_race="raise", out_of_bounds_reads="raise",
                                        uninitialized_memory="nan")

    def run_case(self, case: Case, entry: Callable[..., Any]) -> CaseResult:
        import jax
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu

        from pallas_puzzles.engine.targets.mosaic_gpu import cuda_lowering, faults, races
        from pallas_puzzles.engine.targets.mosaic_gpu.record import CaseRecord, active

        record = CaseRecord(learner_file=str(case.learner_file))
        inputs, expected, _ = case.data()
        races.forget()
        active.record = record
        try:
            with _quiet_callbacks(), jax.default_device(jax.devices("cpu")[0]):
                args = [jnp.asarray(a) for a in inputs]
                try:
                    refused = cuda_lowering.check(entry, args, record)
                except Exception as exc:  # the learner's code failed while it was traced
                    return case.done(False, faults.failure_finding(exc, record))
                refused = _outside_kernel(case, entry, record) or refused
                if refused is not None:
                    return case.done(False, refused)
                active.interpreting = True
                record.outputs_written.clear()
                try:
                    with plgpu.force_gpu_interpret_mode(self._params()):
                        got = jax.block_until_ready(entry(*args))
                except Exception as exc:
                    finding = faults.failure_finding(exc, record)
                    self.reset()
                    return case.done(False, finding)
        finally:
            active.record = None
            active.interpreting = False
        return _verdict(case, got, expected, record)

    def reset(self) -> None:
        """After a failed case: the interpreter's global state must be cleared before it runs again."""
        from pallas_puzzles.engine.targets.mosaic_gpu import interpreter

        interpreter.reset()

    def between_puzzles(self) -> None:
        from pallas_puzzles.engine.targets.mosaic_gpu import races

        races.forget()


class MosaicGpuDevice(Target):
    """`--backend gpu` for the Mosaic GPU chapter: compiled by Mosaic GPU and run on the GPU JAX sees.

    plgpu.kernel always compiles with Mosaic GPU (never Triton). The same CUDA lowering check and
    lints as on the CPU come first, so a refusal reads the same; then the kernel runs for real.
    """

    name: ClassVar[str] = "mosaic-gpu-device"
    summary: ClassVar[str] = "Mosaic GPU kernels compiled and run on the NVIDIA GPU JAX sees"
    # Every reference solution of the chapter lowers for CUDA on jax 0.11.2 (seen on a CPU); no
    # interpreter is involved, so the 0.12 of the interpreted target does not apply.
    min_jax: ClassVar[str] = "0.11"

    def start(self) -> None:
        from pallas_puzzles.engine.targets.mosaic_gpu import api

        api.install()

    def run_case(self, case: Case, entry: Callable[..., Any]) -> CaseResult:
        import jax
        import jax.numpy as jnp

        from pallas_puzzles.engine.targets.mosaic_gpu import cuda_lowering, faults
        from pallas_puzzles.engine.targets.mosaic_gpu.record import CaseRecord, active

        record = CaseRecord(learner_file=str(case.learner_file))
        inputs, expected, _ = case.data()
        with jax.default_device(jax.devices(case.backend.platform)[0]):
            args = [jnp.asarray(a) for a in inputs]
            active.record = record
            try:
                refused = cuda_lowering.check(entry, args, record)
            except Exception as exc:  # the learner's code failed while it was traced
                return case.done(False, faults.failure_finding(exc, record))
            finally:
                active.record = None
            refused = _outside_kernel(case, entry, record) or refused
            if refused is not None:
                return case.done(False, refused)
            try:
                got = jax.block_until_ready(entry(*args))
            except Exception as exc:
                return case.done(False, faults.failure_finding(exc, record))
        return timed(case, entry, _verdict(case, got, expected, record))


def _outside_kernel(case: Case, entry: Callable[..., Any], record: CaseRecord) -> Finding | None:
    """The answer comes from the kernel: the launcher traced for the lowering, judged (engine/integrity)."""
    from pallas_puzzles.engine.integrity import answers
    from pallas_puzzles.engine.integrity.verdict import Kernel, judge_jaxpr
    from pallas_puzzles.engine.learner_lines import source_of

    if record.launcher is None:
        return None
    inputs, expected, _ = case.data()
    kernels = [Kernel(launch.body.function if launch.body else "kernel", launch.body, launch.line)
               for launch in record.launches]
    return judge_jaxpr(record.launcher, answers.rules(case.puzzle, inputs, expected), record.learner_file, kernels,
                       source_of(entry))


def _verdict(case: Case, got: Any, expected: Any, record: CaseRecord) -> CaseResult:
    """Compare with the spec; NaN that came from shared memory read before it was filled says so first."""
    import numpy as np

    from pallas_puzzles.engine.compare import compare
    from pallas_puzzles.engine.targets.mosaic_gpu import faults

    if isinstance(got, (tuple, list)) and len(got) == 1:
        got = got[0]
    shape = tuple(getattr(got, "shape", ()))
    if shape != tuple(expected.shape):
        return case.done(False, Finding(
            FindingKind.SHAPE,
            f"Your function returned shape {shape}; the spec's output has shape {tuple(expected.shape)}.",
            where=tuple(x.line for x in record.launches[-1:] if x.line is not None)))
    written = record.outputs_written[-1] if record.outputs_written else None
    covered = written if written is not None and written.shape == expected.shape else None
    got = np.asarray(got)
    mismatch = compare(expected, got, case.puzzle.rtol, case.puzzle.atol, None, covered)
    if mismatch is None:
        return case.done(True)
    causes = []
    if mismatch.n_nan and record.unfilled:
        causes.append(faults.unfilled_finding(record.unfilled[0]))
    return case.done(False, *causes, mismatch=mismatch)
