"""The Mosaic GPU target: plgpu.kernel kernels checked on a CPU (jax >= 0.12).

Each shape case runs in two passes:
0. The source is read for another GPU's instructions (lints.py: tcgen05 is Blackwell's).
1. The kernel is traced and lowered for CUDA on the CPU (mgpu/cuda_lowering.py): the rules only
   a GPU enforces (shared-memory capacity, wgmma tile shapes, register layouts) fail here. Lints
   (mgpu/api.py) fire while it is traced.
2. It runs in JAX's GPU interpreter with the race detector on (InterpretGPUParams), with hooks
   (mgpu/interpreter.py, barriers.py, races.py, async_ops.py) that stop a barrier wait nothing can
   complete, name both lines of a race (wgmma's reads included), refuse asynchronous work left
   running at the end, and record which elements of each buffer were written, so that an output
   never written and shared memory read before it was filled are told apart. Its threads take
   turns (schedule.py): a kernel with several warpgroups runs in three seeded orders per case,
   traced and compiled once.
On a real GPU the chapter runs compiled (its `gpu` partner); this target never touches a GPU.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pallas_puzzles.engine.targets.base import ProcessSetup, Target
from pallas_puzzles.engine.targets.mosaic_gpu import jax_private
from pallas_puzzles.engine.targets.timing import timed
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

if TYPE_CHECKING:
    from pallas_puzzles.engine.case import Case
    from pallas_puzzles.engine.targets.mosaic_gpu.lints import Rules
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
    setup: ClassVar[ProcessSetup] = ProcessSetup(  # it runs on the first CPU device
        more_devices_alike=True,
        preload=("jax.experimental.pallas.mosaic_gpu",))  # 160 ms to import
    partners: ClassVar[Mapping[str, str]] = {"gpu": "mosaic-gpu-device"}
    gpu_card: ClassVar[bool] = True
    shares_cases: ClassVar[bool] = True
    lowers_apart: ClassVar[bool] = True  # the CUDA lowering is half of a case's time (hopper_attention)
    card_gpu: ClassVar[str] = "h100"  # the GPU the card estimates for unless --chip names another
    not_lowered_because: ClassVar[str] = ("its kernels are Mosaic GPU kernels, not TPU kernels "
                                          "(verify lowers them for CUDA as part of every check)")

    def start(self) -> None:
        from pallas_puzzles.engine.targets.mosaic_gpu import api, cuda_lowering, hooks

        hooks.install()
        api.install()
        cuda_lowering.install()

    def source_rules(self) -> Rules:
        """The rules read from the learner's source before each case (lints.py): this chapter is Hopper's."""
        from pallas_puzzles.engine.targets.mosaic_gpu import lints

        return lints.HOPPER

    def _params(self) -> Any:
        from jax.experimental.pallas import mosaic_gpu as plgpu

        # Each TMA copy and wgmma takes the next of the pseudo-threads' places in the race detector's
        # clocks, in turn; two on the same place look ordered. JAX's 5 would hide a copy racing with
        # the one 5 before it; 64 hides none in a block of the puzzles' size.
        return plgpu.InterpretGPUParams(detect_races=True, on_race="raise", out_of_bounds_reads="raise",
                                        uninitialized_memory="nan", num_tma_threads_per_device=64)

    def run_case(self, case: Case, entry: Callable[..., Any]) -> CaseResult:
        import jax
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu

        from pallas_puzzles.engine.case import ONLY_LOWERED
        from pallas_puzzles.engine.targets.mosaic_gpu import copy_sites, cuda_lowering, faults, lints
        from pallas_puzzles.engine.targets.mosaic_gpu.record import CaseRecord, active

        refused = lints.check_case(case, self.source_rules())
        if refused is not None:
            return case.done(False, refused)
        record = CaseRecord(learner_file=str(case.learner_file))
        inputs, expected, _ = case.data()
        copy_sites.forget()  # the case's kernels are traced afresh
        active.record = record
        try:
            with _quiet_callbacks(), jax.default_device(jax.devices("cpu")[0]):
                args = [jnp.asarray(a) for a in inputs]
                try:
                    refused = cuda_lowering.check(entry, args, record, case)
                except Exception as exc:  # the learner's code failed while it was traced
                    return case.done(False, faults.failure_finding(exc, record))
                refused = _outside_kernel(case, entry, record) or refused
                if refused is not None:
                    return case.done(False, refused)
                if case.lowering == ONLY_LOWERED:  # the other checker runs it
                    return case.done(True)
                try:
                    with plgpu.force_gpu_interpret_mode(self._params()):  # traced once, run per schedule
                        interpreted = jax.jit(entry).lower(*args).compile()
                except Exception as exc:  # the learner's code failed while it was traced
                    return case.done(False, faults.failure_finding(exc, record))
                return self._run_in_turns(case, interpreted, inputs, args, expected, record)
        finally:
            active.record = None

    def _run_in_turns(self, case: Case, interpreted: Callable[..., Any], inputs: Any, args: list[Any],
                      expected: Any, record: CaseRecord) -> CaseResult:
        """Run the kernel once per schedule of the case (schedule.py), in the same orders for every check
        of it, until one fails. Blocks of one thread each have one order only: they run once."""
        import jax

        from pallas_puzzles.engine.targets.mosaic_gpu import faults, races
        from pallas_puzzles.engine.targets.mosaic_gpu.record import active
        from pallas_puzzles.engine.targets.mosaic_gpu.schedule import TURNS, schedules

        result = None
        for plan in schedules(case.schedule_seed):
            record.new_run()
            races.forget()
            TURNS.begin(plan)
            active.interpreting = True
            try:
                got = jax.block_until_ready(interpreted(*args))
            except Exception as exc:
                finding = faults.failure_finding(exc, record)
                self.reset()
                return case.done(False, finding)
            finally:
                TURNS.end()
                active.interpreting = False
            result = _verdict(case, got, expected, record)
            if not result.passed or TURNS.most_threads <= 1:
                break
        assert result is not None
        return _with_card(case, result, record, inputs, expected, self.card_gpu)

    def reset(self) -> None:
        """After a failed case: the interpreter's global state must be cleared before it runs again."""
        from pallas_puzzles.engine.targets.mosaic_gpu import interpreter

        interpreter.reset()

    def between_puzzles(self) -> None:
        from pallas_puzzles.engine.targets.mosaic_gpu import races

        races.forget()


class MosaicGpuDevice(Target):
    """`--backend gpu` for the Mosaic GPU chapter: compiled by Mosaic GPU and run on the GPU JAX sees.

    plgpu.kernel always compiles with Mosaic GPU (never Triton). The same source lints, CUDA lowering
    check and lints as on the CPU come first, so a refusal reads the same; then the kernel runs for real.
    """

    name: ClassVar[str] = "mosaic-gpu-device"
    summary: ClassVar[str] = "Mosaic GPU kernels compiled and run on the NVIDIA GPU JAX sees"
    # Every reference solution of the chapter lowers for CUDA on jax 0.11.2 (seen on a CPU); no
    # interpreter is involved, so the 0.12 of the interpreted target does not apply.
    min_jax: ClassVar[str] = "0.11"

    def start(self) -> None:
        from pallas_puzzles.engine.targets.mosaic_gpu import api, cuda_lowering

        api.install()
        cuda_lowering.install()

    def run_case(self, case: Case, entry: Callable[..., Any]) -> CaseResult:
        import jax
        import jax.numpy as jnp

        from pallas_puzzles.engine.targets.mosaic_gpu import cuda_lowering, faults, lints
        from pallas_puzzles.engine.targets.mosaic_gpu.record import CaseRecord, active

        refused = lints.check_case(case, lints.HOPPER)
        if refused is not None:
            return case.done(False, refused)
        record = CaseRecord(learner_file=str(case.learner_file))
        inputs, expected, _ = case.data()
        with jax.default_device(jax.devices(case.backend.platform)[0]):
            args = [jnp.asarray(a) for a in inputs]
            active.record = record
            try:
                refused = cuda_lowering.check(entry, args, record, case)
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


def _with_card(case: Case, result: CaseResult, record: CaseRecord, inputs: Any, expected: Any,
               chip: str) -> CaseResult:
    """A passing case gets its GPU card (perf/gpu_card.py), and is graded on the puzzle's budget if it has one."""
    from pallas_puzzles.engine.targets.mosaic_gpu import costs
    from pallas_puzzles.perf import gpu_budget, gpu_card, gpu_chips

    if not result.passed:
        return result
    minimum = sum(int(a.nbytes) for a in inputs) + int(expected.nbytes)
    card = gpu_card.estimate(costs.counts(record.costs, minimum), gpu_chips.gpu_chip(chip), case.label)
    budget = case.puzzle.budget
    over = (gpu_budget.check_gpu_budget(card, budget, costs.busiest_load(record.costs),
                                            record.costs.serial_wait or record.costs.first_mma)
            if budget is not None else None)
    return case.done(over is None, *([over] if over else []), gpu_card=card)


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
    tolerance = case.puzzle.tolerance_on(case.backend)
    mismatch = compare(expected, got, tolerance.rtol, tolerance.atol, None, covered)
    if mismatch is None:
        return case.done(True)
    causes = []
    if covered is not None and not covered.any():  # no store reached the output: say so, not where the grid fell short
        causes.append(faults.output_never_written(record.launches[-1] if record.launches else None))
    elif mismatch.n_nan and record.unfilled:
        causes.append(faults.unfilled_finding(record.unfilled[0]))
    return case.done(False, *causes, mismatch=mismatch)
