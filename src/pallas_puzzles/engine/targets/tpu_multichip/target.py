"""`tpu-multichip`: kernels that talk across TPU chips, run on simulated CPU devices.

The learner's entry is the per-device launcher (the pallas_call). This target
runs it under `jax.shard_map` over the mesh the puzzle declares, with the
inputs placed on the devices as the puzzle's partition specs say, in
Pallas's TPU interpreter with race detection on and copies landing when they
are waited for (a copy nobody waits for never lands). Hooks in
multichip/hooks.py add what the interpreter lacks: a deadlock stops within
about half a second, a copy or signal before the barrier handshake, a count
left on a semaphore, a copy nobody waited for and a send that does not overlap
compute become findings with the learner's line and the devices involved,
and the process recovers after every failure.

No jax or numpy at module level: the CLI imports this to learn the process set-up.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pallas_puzzles.engine.targets.base import ProcessSetup, Target
from pallas_puzzles.engine.targets.tpu_interpret import TPU_PRELOAD
from pallas_puzzles.engine.targets.tpu_multichip import options as mesh_options

if TYPE_CHECKING:
    from pallas_puzzles.engine.case import Case
    from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession
    from pallas_puzzles.engine.targets.tpu_multichip.traffic import RingTraffic
    from pallas_puzzles.engine.targets.tpu_multichip.turns import Schedule
    from pallas_puzzles.results import CaseResult, Finding


class TpuMultichip(Target):
    name: ClassVar[str] = "tpu-multichip"
    summary: ClassVar[str] = ("Pallas's TPU interpreter over simulated devices: remote copies, semaphores, "
                              "barrier handshakes and ring collectives")
    setup: ClassVar[ProcessSetup] = ProcessSetup(
        host_devices=mesh_options.MAX_DEVICES, more_devices_alike=True,
        preload=TPU_PRELOAD)
    cost_card: ClassVar[bool] = False  # the TPU-pipeline card does not apply; the traffic card does
    shares_cases: ClassVar[bool] = True
    partners: ClassVar[Mapping[str, str]] = {}  # compiling needs a slice of several TPU chips
    not_lowered_because: ClassVar[str] = ("its kernels talk across chips, "
                                          "and lowering them needs a slice of several TPU chips")

    @classmethod
    def option_problems(cls, options: Mapping[str, Any]) -> list[str]:
        return mesh_options.problems(options)

    def start(self) -> None:
        from pallas_puzzles.engine.targets.pallas_call.intercept import patch
        from pallas_puzzles.engine.targets.tpu_multichip import hooks

        patch.install()
        hooks.install()

    def reset(self) -> None:
        from pallas_puzzles.engine.targets.tpu_multichip import hooks

        hooks.recover()

    def run_case(self, case: Case, entry: Callable[..., Any]) -> CaseResult:
        import jax

        from pallas_puzzles.engine.targets.pallas_call.case_runner import finish
        from pallas_puzzles.findings import FindingKind
        from pallas_puzzles.results import Finding

        opts = mesh_options.parse(case.puzzle.target_options)
        shape = opts.shape(case.sizes)
        session = _session(case)
        devices = math.prod(shape)
        if devices > len(jax.devices()):
            return finish(case, session, False, Finding(
                FindingKind.INTERNAL, f"This case needs {devices} devices; the checker has {len(jax.devices())}."))
        inputs = case.data()[0]
        spec = jax.sharding.PartitionSpec
        mesh = _mesh(shape, opts.axis_names)
        in_specs = tuple(spec(*s) for s in opts.in_specs)
        placed = [jax.device_put(a, jax.sharding.NamedSharding(mesh, s)) for a, s in zip(inputs, in_specs)]
        run = jax.jit(jax.shard_map(entry, mesh=mesh, in_specs=in_specs, out_specs=spec(*opts.out_specs),
                                    check_vma=False))
        from pallas_puzzles.engine.targets.tpu_multichip.monitor import MONITOR
        from pallas_puzzles.engine.targets.tpu_multichip.turns import schedules

        MONITOR.idle.clear()  # refilled as the case's kernels are traced, in its first run
        result: CaseResult | None = None
        for i, schedule in enumerate(schedules(case.schedule_seed)):
            result = self._run_once(case, session, opts, devices, run, placed, schedule, entry if i == 0 else None)
            if not result.passed:
                break
        assert result is not None
        if result.mismatch is not None and result.mismatch.n_nan and not result.findings:
            return self._unwritten(case, entry, opts, devices, mesh, placed, result, schedule)
        return result

    def _unwritten(self, case: Case, entry: Callable[..., Any], opts: mesh_options.MeshOptions, devices: int,
                   mesh: Any, placed: list[Any], result: CaseResult, schedule: Schedule) -> CaseResult:
        """NaN or garbage in the output: the case again, memory starting as the value that marks elements never
        written (it holds the case's poison, NaN or garbage, until something writes it), so they are called so."""
        import dataclasses

        import jax

        from pallas_puzzles.engine.compare import compare
        from pallas_puzzles.engine.targets.pallas_call.explain import copies
        from pallas_puzzles.engine.unwritten import sentinel_for

        _, expected, _ = case.data()
        mark = sentinel_for(expected.dtype)
        if mark is None:
            return result
        session = dataclasses.replace(_session(case), poison=float(mark))
        spec = jax.sharding.PartitionSpec
        run = jax.jit(jax.shard_map(entry, mesh=mesh, in_specs=tuple(spec(*s) for s in opts.in_specs),
                                    out_specs=spec(*opts.out_specs), check_vma=False))
        got, _, _ = self._execute(case, session, devices, run, placed, schedule)
        sizes = dict(zip(opts.axis_names, opts.shape(case.sizes)))
        tolerance = case.puzzle.tolerance_on(case.backend)
        marked = None if got is None else compare(expected, got, tolerance.rtol, tolerance.atol,
                                                  mesh_options.device_blocks(expected.shape, opts, sizes))
        if marked is None or not marked.n_unwritten:
            return result
        idle = copies.idle_copy(session)  # a copy described and never started: what it should have written
        found = (copies.never_started(idle, devices),) if idle else result.findings
        return dataclasses.replace(result, mismatch=marked, findings=found)

    def _run_once(self, case: Case, session: StrictSession, opts: mesh_options.MeshOptions, devices: int,
                  run: Callable[..., Any], placed: list[Any], schedule: Schedule,
                  judge: Callable[..., Any] | None) -> CaseResult:
        """One run of the case, its devices taking turns in the order `schedule` gives, judged: given `judge`
        (the entry), its launcher first (engine/integrity: an answer XLA computed is no answer)."""
        from pallas_puzzles.engine.targets.pallas_call.case_runner import finish
        from pallas_puzzles.engine.targets.pallas_call.launcher_trace import judge_traced

        got, launcher, failed = self._execute(case, session, devices, run, placed, schedule)
        if failed is not None:
            return failed
        inputs, expected, _ = case.data()
        outside = judge_traced(launcher, case.puzzle, inputs, expected, session, judge) if judge else None
        if outside is not None:
            return finish(case, session, False, outside, grid_points_run=_device_steps(), devices=devices)
        return _verdict(case, session, opts, devices, got, expected)

    def _execute(self, case: Case, session: StrictSession, devices: int, run: Callable[..., Any],
                 placed: list[Any], schedule: Schedule) -> tuple[Any, Any, CaseResult | None]:
        """(the devices' output, the launcher's jaxpr, None); (None, None, the failed case) if the run stopped."""
        import jax
        import numpy as np

        from pallas_puzzles.engine.targets.pallas_call.case_runner import finish
        from pallas_puzzles.engine.targets.pallas_call.intercept.session import session_scope
        from pallas_puzzles.engine.targets.tpu_multichip import jax_private, watch
        from pallas_puzzles.engine.targets.tpu_multichip.monitor import MONITOR
        from pallas_puzzles.engine.targets.tpu_multichip.turns import TURNS

        MONITOR.start()
        session.dma_oldest_first = schedule.oldest_first
        TURNS.begin(devices, schedule, functools.partial(watch.deadlock, jax_private.interpreter()))
        try:
            with session_scope(session):
                launcher = run.trace(*placed).jaxpr  # judged below (engine/integrity); the run reuses the trace
                got = np.asarray(jax.block_until_ready(run(*placed)))
        except Exception as exc:  # the learner's kernel failed, or a rule stopped it
            TURNS.end()
            MONITOR.stop()
            finding = _failure(exc, session, devices)
            self.reset()
            return None, None, finish(case, session, False, finding, grid_points_run=_device_steps(),
                                      devices=devices)
        finally:
            TURNS.end()
            MONITOR.stop()
        return got, launcher, None


def _failure(exc: BaseException, session: StrictSession, devices: int) -> Finding:
    """What stopped the run: a rule's record (deadlock, race, bad device id), else the error itself."""
    from pallas_puzzles.engine.targets.pallas_call.explain.runtime import diagnose
    from pallas_puzzles.engine.targets.tpu_multichip.monitor import MONITOR
    from pallas_puzzles.engine.targets.tpu_multichip.problems import STOPS, RunStopped
    from pallas_puzzles.findings import FindingKind
    from pallas_puzzles.results import Finding

    if MONITOR.first_failure is not None:  # the error every other device's error follows from, first
        session.callback_errors.insert(0, MONITOR.first_failure)
    stops = [p for p in MONITOR.problems if isinstance(p, (*STOPS, Exception))]
    if stops:
        return _placed(_explainer(session, devices).finding(stops[0]), stops[0], session)
    if isinstance(exc, RunStopped):  # a rule stopped the run but left no record: our fault
        return Finding(FindingKind.INTERNAL, f"The multi-device checker stopped the kernel without a reason ({exc}).")
    return diagnose(exc, session)


def _verdict(case: Case, session: StrictSession, opts: mesh_options.MeshOptions, devices: int, got: Any,
             expected: Any) -> CaseResult:
    """Judge a run that finished: the rules of a finished run first, then the numbers, then overlap."""
    from pallas_puzzles.engine.compare import compare
    from pallas_puzzles.engine.targets.pallas_call.case_runner import finish
    from pallas_puzzles.engine.targets.tpu_multichip.monitor import MONITOR
    from pallas_puzzles.engine.targets.tpu_multichip.problems import RULES, AutoBarrier
    from pallas_puzzles.findings import FindingKind
    from pallas_puzzles.results import Finding

    explainer = _explainer(session, devices)
    broken = sorted((p for p in MONITOR.problems
                     if isinstance(p, RULES) and (opts.own_barrier or not isinstance(p, AutoBarrier))),
                    key=lambda p: RULES.index(type(p)))
    findings = [_placed(explainer.finding(p), p, session) for p in broken[:1]]
    steps = _device_steps()
    if tuple(got.shape) != tuple(expected.shape):
        findings.append(Finding(FindingKind.SHAPE, f"The devices' outputs together have shape {tuple(got.shape)}; "
                                f"the spec's output has shape {tuple(expected.shape)}."))
        return finish(case, session, False, *findings, grid_points_run=steps, devices=devices)
    sizes = dict(zip(opts.axis_names, opts.shape(case.sizes)))
    blocks = mesh_options.device_blocks(expected.shape, opts, sizes)
    tolerance = case.puzzle.tolerance_on(case.backend)
    mismatch = compare(expected, got, tolerance.rtol, tolerance.atol, blocks)
    # Right numbers: did the rings run both ways at once, and the copies overlap compute? Wrong ones with no
    # rule broken: did any copy leave its sender?
    if mismatch is None:
        told = [*(MONITOR.both_ways(devices) if opts.both_ways else []),
                *(MONITOR.no_overlap() if opts.overlap else [])]
    else:
        told = MONITOR.self_copies()
    findings += [_placed(explainer.finding(p), p, session) for p in told[:1]] if not findings else []
    passed = mismatch is None and not findings
    traffic = _traffic(case, opts, devices) if passed and opts.traffic else None
    return finish(case, session, passed, *findings, mismatch=mismatch, traffic=traffic, grid_points_run=steps,
                  devices=devices)


def _explainer(session: StrictSession, devices: int) -> Any:
    from pallas_puzzles.engine.targets.tpu_multichip.explain import Explainer

    return Explainer(session.learner_file, devices, session.calls[-1].call_line if session.calls else None)


def _placed(finding: Finding, problem: Any, session: StrictSession) -> Finding:
    """The finding with the grid point its device was at, when the kernel has a grid."""
    import dataclasses
    import itertools

    step = getattr(problem, "step", None)
    waits = getattr(problem, "waits", ())
    step = waits[0].step if step is None and waits else step
    if step is None or not session.calls or not session.calls[-1].grid:
        return finding
    points = list(itertools.product(*(range(g) for g in session.calls[-1].grid)))
    return dataclasses.replace(finding, grid_point=tuple(points[step])) if step < len(points) else finding


def _device_steps() -> tuple[tuple[int, ...], ...] | None:
    """The grid points device 0 ran, in order: what `show` steps through (it shows one device)."""
    from pallas_puzzles.engine.targets.tpu_multichip.monitor import MONITOR

    steps = [point for log in MONITOR.kernels for point in log.steps.get(0, [])]
    return tuple(steps) if steps else None


def _traffic(case: Case, opts: mesh_options.MeshOptions, devices: int) -> RingTraffic:
    from pallas_puzzles.engine.targets.tpu_multichip.monitor import MONITOR
    from pallas_puzzles.engine.targets.tpu_multichip.traffic import measure

    first = case.data()[0][0]
    sizes = dict(zip(opts.axis_names, opts.shape(case.sizes)))
    split = math.prod(sizes[axis] for axis in opts.in_specs[0] if axis)
    sent = [MONITOR.traffic[d].sent for d in range(devices)]
    received = [MONITOR.traffic[d].received for d in range(devices)]
    return measure(opts.traffic, devices, int(first.nbytes) // split, sent, received)


@functools.cache
def _mesh(shape: tuple[int, ...], names: tuple[str, ...]) -> Any:
    import jax

    return jax.make_mesh(shape, names, devices=jax.devices()[: math.prod(shape)])


def _session(case: Case) -> StrictSession:
    from pallas_puzzles.engine.targets.pallas_call.intercept import poison
    from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession

    # Race detection, with copies landing when they are waited for: a read before the wait, a copy
    # nobody waits for and a slot reused too early all show (../shared/notes/tpu-multichip-interpret.md).
    return StrictSession(backend=case.backend, learner_file=str(case.learner_file), detect_races=True,
                         poison=poison.unwritten_memory(case.index, case.data()[0])[0], seed=case.index,
                         multi_device=True,
                         interpret_options={"dma_execution_mode": "on_wait"})
