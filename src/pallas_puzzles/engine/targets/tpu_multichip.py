"""The tpu-multichip target: kernels that talk across TPU chips, run on simulated CPU devices.

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

No jax at module level: the CLI imports this to learn the process set-up.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from pallas_puzzles.engine.targets.base import ProcessSetup, Target

from pallas_puzzles.engine.targets.multichip import options as mesh_options
from pallas_puzzles.engine.targets.multichip.explain import Explainer
from pallas_puzzles.engine.targets.multichip.monitor import (
    MONITOR,
    AutoBarrier,
    BadDevice,
    BadDeviceId,
    Deadlock,
    EarlyAccess,
    Leftover,
    LostCopy,
    NoCollectiveId,
    Race,
    RunStopped,
)
from pallas_puzzles.engine.targets.multichip.traffic import RingTraffic, measure
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CaseResult, Finding

if TYPE_CHECKING:
    from pallas_puzzles.engine.case import Case

    from pallas_puzzles.engine.intercept.session import StrictSession

# What stops a run, in the order a learner should hear of it; then what breaks the rules of a finished run.
_STOPS = (Deadlock, Race, BadDevice, BadDeviceId, NoCollectiveId)
_RULES = (EarlyAccess, AutoBarrier, LostCopy, Leftover)


class TpuMultichip(Target):
    name: ClassVar[str] = "tpu-multichip"
    summary: ClassVar[str] = ("Pallas's TPU interpreter over simulated devices: remote copies, semaphores, "
                              "barrier handshakes and ring collectives")
    setup: ClassVar[ProcessSetup] = ProcessSetup(host_devices=mesh_options.MAX_DEVICES)
    cost_card: ClassVar[bool] = False

    @classmethod
    def option_problems(cls, options: Mapping[str, Any]) -> list[str]:
        return mesh_options.problems(options)

    def start(self) -> None:
        from pallas_puzzles.engine.intercept import patch
        from pallas_puzzles.engine.targets.multichip import hooks

        patch.install()
        hooks.install()

    def reset(self) -> None:
        from pallas_puzzles.engine.targets.multichip import hooks

        hooks.recover()

    def between_puzzles(self) -> None:
        MONITOR.stop()

    def run_case(self, case: Case, entry: Callable[..., Any]) -> CaseResult:
        import jax

        from pallas_puzzles.engine.intercept.session import session_scope

        opts = mesh_options.parse(case.puzzle.target_options)
        shape = opts.shape(case.sizes)
        devices = math.prod(shape)
        if devices > len(jax.devices()):
            return case.done(False, Finding(FindingKind.INTERNAL,
                                            f"This case needs {devices} devices; the checker has {len(jax.devices())}."))
        mesh = _mesh(shape, opts.axis_names)
        spec = jax.sharding.PartitionSpec
        in_specs = tuple(spec(*s) for s in opts.in_specs)
        placed = [jax.device_put(a, jax.sharding.NamedSharding(mesh, s)) for a, s in zip(case.inputs, in_specs)]
        run = jax.jit(jax.shard_map(entry, mesh=mesh, in_specs=in_specs, out_specs=spec(*opts.out_specs),
                                    check_vma=False))
        session = _session(case)
        MONITOR.start()
        try:
            with session_scope(session):
                got = np.asarray(jax.block_until_ready(run(*placed)))
        except Exception as exc:  # the learner's kernel failed, or a rule stopped it
            MONITOR.stop()
            finding = self._failure(exc, session, devices)
            self.reset()
            return case.done(False, finding)
        finally:
            MONITOR.stop()
        return self._verdict(case, session, opts, devices, got)

    def _explainer(self, session: StrictSession, devices: int) -> Explainer:
        return Explainer(session.learner_file, devices, session.calls[-1].call_line if session.calls else None)

    def _failure(self, exc: BaseException, session: StrictSession, devices: int) -> Finding:
        from pallas_puzzles.engine.explain.runtime import diagnose

        stops = [p for p in MONITOR.problems if isinstance(p, _STOPS) or isinstance(p, Exception)]
        if stops:
            return self._placed(self._explainer(session, devices).finding(stops[0]), stops[0], session)
        if isinstance(exc, RunStopped):  # a rule stopped the run but its record is missing: our fault
            return Finding(FindingKind.INTERNAL, f"The multi-device checker stopped the kernel without a reason ({exc}).")
        return diagnose(exc, session)

    def _verdict(self, case: Case, session: StrictSession, opts: mesh_options.MeshOptions, devices: int,
                 got: np.ndarray) -> CaseResult:
        from pallas_puzzles.engine.compare import compare

        explainer = self._explainer(session, devices)
        problems = [p for p in MONITOR.problems if isinstance(p, _RULES) and (opts.own_barrier or not isinstance(p, AutoBarrier))]
        problems.sort(key=lambda p: _RULES.index(type(p)))
        findings = [self._placed(explainer.finding(p), p, session) for p in problems[:1]]
        expected = case.expected
        if tuple(got.shape) != tuple(expected.shape):
            findings.append(Finding(FindingKind.SHAPE, f"Your launcher returned a block that makes the whole output "
                                    f"{tuple(got.shape)}; the spec's output has shape {tuple(expected.shape)}."))
            return case.done(False, *findings)
        mismatch = compare(expected, got, case.puzzle.rtol, case.puzzle.atol, _device_blocks(expected.shape, opts, shape_of(opts, case)))
        if mismatch is None and not findings and opts.overlap:
            findings += [self._placed(explainer.finding(p), p, session) for p in MONITOR.no_overlap()[:1]]
        passed = mismatch is None and not findings
        traffic = self._traffic(case, opts, devices) if passed and opts.traffic else None
        return case.done(passed, *findings, mismatch=mismatch, traffic=traffic)

    def _placed(self, finding: Finding, problem: Any, session: StrictSession) -> Finding:
        """The finding with the grid point its device was at, when the kernel has a grid."""
        step = getattr(problem, "step", None)
        if step is None and isinstance(problem, Deadlock) and problem.waits:
            step = problem.waits[0].step
        if step is None or not session.calls or not session.calls[-1].grid:
            return finding
        points = list(itertools.product(*(range(g) for g in session.calls[-1].grid)))
        if step >= len(points):
            return finding
        import dataclasses

        return dataclasses.replace(finding, grid_point=tuple(int(i) for i in points[step]))

    def _traffic(self, case: Case, opts: mesh_options.MeshOptions, devices: int) -> RingTraffic:
        first = case.inputs[0]
        split = math.prod(dict(zip(opts.axis_names, opts.shape(case.sizes)))[a] for a in opts.in_specs[0] if a)
        sent = [MONITOR.traffic[d].sent for d in range(devices)]
        received = [MONITOR.traffic[d].received for d in range(devices)]
        return measure(opts.traffic, devices, int(first.nbytes) // split, sent, received)


def shape_of(opts: mesh_options.MeshOptions, case: Case) -> dict[str, int]:
    return dict(zip(opts.axis_names, opts.shape(case.sizes)))


def _device_blocks(shape: tuple[int, ...], opts: mesh_options.MeshOptions, sizes: dict[str, int]) -> tuple[int, ...]:
    """One cell of the mismatch map per device's share of the output."""
    block = list(shape)
    for dim, axis in enumerate(opts.out_specs):
        if axis and dim < len(block):
            block[dim] = max(1, block[dim] // sizes[axis])
    return tuple(block)


@functools.cache
def _mesh(shape: tuple[int, ...], names: tuple[str, ...]) -> Any:
    import jax

    return jax.make_mesh(shape, names, devices=jax.devices()[: math.prod(shape)])


def _session(case: Case) -> StrictSession:
    from pallas_puzzles.engine.intercept import poison
    from pallas_puzzles.engine.intercept.session import StrictSession

    # Race detection with copies landing when waited for: a read before the wait, a copy nobody waits
    # for and a slot reused too early all show (see the notes in shared/notes/tpu-multichip-interpret.md).
    return StrictSession(backend=case.backend, learner_file=str(case.learner_file), detect_races=True,
                         poison=poison.poison_for_case(case.index), seed=case.index,
                         interpret_options={"dma_execution_mode": "on_wait"})
