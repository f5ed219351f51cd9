"""The fast path changes how fast a verdict comes, never what it says.

The guardians (test_course, test_mistakes, test_correct) read the verdicts of `dev check` on the
built-in course, made once per session by checker processes with the fast path on (the
`course_check` fixture); here every job of that check that tpu-interpret ran (stubs, reference
solutions, mistakes, correct alternatives), and every one of the multi-device and Mosaic GPU targets
(their interpreters' callbacks take numpy arguments), is checked again by checker processes started with
PALLAS_PUZZLES_FAST=0, and every verdict is compared: pass or fail, the kind, the lines named, the
grid points, the counts of wrong elements. Printed float values may differ in the last place (one
fused program against op by op), so the values themselves are not compared, only which elements are
wrong and how. The other tests pin each lever's behaviour: what is compiled, what is kept.
"""

from __future__ import annotations

import dataclasses
import io
import math
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import COURSE, checked_by_dev_check

from pallas_puzzles.backends import INTERPRET, Mode
from pallas_puzzles.checking import support
from pallas_puzzles.dev import check as dev_check
from pallas_puzzles.dev import examples
from pallas_puzzles.engine import targets
from pallas_puzzles.engine.case import Case
from pallas_puzzles.engine.checker import check_puzzle, load_learner_module
from pallas_puzzles.engine.targets.mosaic_gpu.target import MosaicGpuTarget
from pallas_puzzles.engine.targets.pallas_call import fast_path
from pallas_puzzles.engine.targets.pallas_call.fast_path import OFF, FastPath
from pallas_puzzles.engine.targets.tpu_interpret import TpuInterpreter
from pallas_puzzles.engine.targets.tpu_multichip.target import TpuMultichip
from pallas_puzzles.results import CaseResult, CheckResult, Finding, Mismatch
from pallas_puzzles.source_line import SourceLine

# The targets the fast path speeds up: tpu-interpret and tpu-kernel (its levers), the multi-device
# and Mosaic GPU interpreters (their callbacks take numpy arguments: numpy_callbacks.py); Blackwell's
# target is Mosaic GPU's.
_FAST = (TpuInterpreter, TpuMultichip, MosaicGpuTarget)


def _compared(course_check: dev_check.CourseCheck) -> list[tuple[dev_check.CourseJob, CheckResult]]:
    """The jobs the fast path could have touched: run, on the interpreter, by a target it speeds up."""
    return [(job, result) for job, result in course_check.checked
            if job.mode is Mode.RUN and job.requested == INTERPRET.name
            and issubclass(targets.get(job.puzzle.target), _FAST)]


@pytest.fixture(scope="module")
def slow_and_fast(course_check, tmp_path_factory) -> Iterator[list[tuple[str, CheckResult, CheckResult]]]:
    """(job name, verdict with the fast path, verdict without), for every job of a target it speeds up."""
    if TpuInterpreter().fast == OFF:
        pytest.skip(f"{fast_path.VARIABLE}=0: the course check ran without the fast path, nothing to compare")
    from rich.console import Console

    from pallas_puzzles.report.live import RunProgress

    compared = _compared(course_check)
    folder = tmp_path_factory.mktemp("slow")
    # dev check's edited files lived in a folder it has removed: write them again, the same way.
    jobs = [dataclasses.replace(job, file=examples.build(job.example, COURSE, folder)) if job.example else job
            for job, _ in compared]
    # Only the checker processes started here see the variable.
    with pytest.MonkeyPatch.context() as environment:
        environment.setenv(fast_path.VARIABLE, "0")
        environment.setenv("PALLAS_PUZZLES_TIME_LIMIT", "600")  # a loaded machine: slow, not timed out
        slow = dev_check.run_jobs(jobs, RunProgress(Console(file=io.StringIO()), len(jobs), enabled=False)).results
    yield [(job.name, fast, again) for (job, fast), again in zip(compared, slow)]


# -- what a verdict is, for comparing -----------------------------------------------------------

_FLOAT = re.compile(r"-?\d+\.\d+(e[-+]?\d+)?|-?\d+e[-+]?\d+")


def _words(text: str) -> str:
    """A message with its decimal numbers rounded to 4 significant digits (ulps apart stay equal)."""
    return _FLOAT.sub(lambda m: f"{float(m.group()):.4g}", text)


def _lines(lines: tuple[SourceLine, ...]) -> tuple[tuple[str, int, str], ...]:
    return tuple((Path(line.file).name, line.line, line.text) for line in lines)


def _finding(finding: Finding) -> tuple[Any, ...]:
    return (finding.kind, _words(finding.message), _lines(finding.where), finding.grid_point, finding.array)


def _mismatch(mismatch: Mismatch | None) -> tuple[Any, ...] | None:
    if mismatch is None:
        return None
    return (mismatch.shape, mismatch.total, mismatch.n_bad, mismatch.n_nan, mismatch.n_unwritten, mismatch.kind,
            mismatch.block_map, mismatch.grid_points, mismatch.more_grid_points, _lines(mismatch.stored_at),
            tuple((e.index, e.fault) for e in mismatch.examples))


def _case(case: CaseResult, cores: int) -> tuple[Any, ...]:
    points = case.grid_points_run
    # Two simulated cores record their grid points from two threads, in either order.
    points = tuple(sorted(points)) if points is not None and cores > 1 else points
    return (case.label, case.passed, tuple(_finding(f) for f in case.findings), _mismatch(case.mismatch),
            points, len(case.calls))


def verdict(result: CheckResult) -> dict[str, Any]:
    """Everything a learner is told, less the float values themselves."""
    cores = COURSE.find(result.name).cores
    return {"passed": result.passed, "kind": result.kind, "skipped cases": result.skipped_cases,
            "findings": [_finding(f) for f in result.findings],
            "cases": [_case(c, cores) for c in result.cases]}


def test_the_fast_path_changes_no_verdict(slow_and_fast):
    assert len(slow_and_fast) > 150, "stubs, solutions, mistakes and correct alternatives of tpu-interpret"
    compared = {COURSE.find(fast.name).target for _, fast, _ in slow_and_fast}
    runs_here = {p.target for p in COURSE.puzzles if support.refusal(p, INTERPRET) is None}  # GPU: jax >= 0.12
    assert compared == {target for target in runs_here if issubclass(targets.get(target), _FAST)}
    assert {"tpu-interpret", "tpu-multichip"} <= compared, compared
    differ = [name for name, fast, slow in slow_and_fast if verdict(fast) != verdict(slow)]
    assert not differ, [(name, verdict(fast), verdict(slow)) for name, fast, slow in slow_and_fast if name in differ]


# -- each lever, by what it does ----------------------------------------------------------------

class Lowerings:
    """Counts the programs JAX lowers to MLIR (jax.monitoring; a cached program is not lowered again)."""

    EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"

    def __init__(self) -> None:
        self.count = 0
        self._thread = threading.get_ident()

    def __call__(self, event: str, duration: float, **_: Any) -> None:
        if event == self.EVENT and threading.get_ident() == self._thread:
            self.count += 1

    def __enter__(self) -> Lowerings:
        import jax.monitoring

        jax.monitoring.register_event_duration_secs_listener(self)
        return self

    def __exit__(self, *exc: object) -> None:
        import jax.monitoring

        jax.monitoring.unregister_event_duration_listener(self)


def lowerings_per_case(target: TpuInterpreter, puzzle_name: str) -> list[int]:
    """Programs lowered while each shape case of a reference solution runs (its second check: the
    first one warms what can be kept)."""
    puzzle = COURSE.find(puzzle_name)
    check_puzzle(puzzle, puzzle.solution_path, INTERPRET, fail_fast=False, target=target)
    counts = []
    for index, sizes in enumerate(puzzle.cases_for(INTERPRET)):
        with Lowerings() as lowered:
            case = target.run_case(Case(puzzle, index, sizes, puzzle.solution_path, INTERPRET),
                                   _entry(puzzle))
        assert case.passed, case
        counts.append(lowered.count)
    return counts


def _entry(puzzle: Any) -> Any:
    return getattr(load_learner_module(puzzle.solution_path), puzzle.entry)


def started(fast: FastPath) -> TpuInterpreter:
    target = TpuInterpreter(fast)
    target.start()
    return target


def test_small_grids_run_eagerly_and_large_ones_compile(course_check):
    """constant_add_blocked's cases have grids of 2, 1, 8 and 1 points: with a limit of 2, only the
    8-point case lowers a program (its interpreter); the others reuse the warm op-by-op programs."""
    solution = checked_by_dev_check(course_check, "solution")["constant_add_blocked"]
    grids = [math.prod(c.grid) for c in solution.cases[0].calls]
    assert grids == [2]
    counts = lowerings_per_case(started(FastPath(eager_grid_limit=2)), "constant_add_blocked")
    assert [count > 0 for count in counts] == [False, False, True, False], counts


def _lowered_by_a_new_block_shape(rows: int, columns: int, numpy_ops: bool) -> int:
    """Programs lowered when a small kernel on (rows, columns) blocks, a shape nothing else uses, is
    interpreted op by op on a 2-point grid."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    from pallas_puzzles.engine.targets.pallas_call.intercept import eager

    def kernel(x_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = jnp.where(x > 0, x * 2.0 + 1.0, -x) + jnp.max(x, axis=1, keepdims=True)

    block = pl.BlockSpec((rows, columns), lambda i: (i, 0))
    call = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((2 * rows, columns), jnp.float32),
                          grid=(2,), in_specs=[block], out_specs=block, interpret=pltpu.InterpretParams())
    x = jax.device_put(np.linspace(-1, 1, 2 * rows * columns, dtype=np.float32).reshape(2 * rows, columns))
    with eager.eagerly(limit=8, numpy_ops=numpy_ops), Lowerings() as lowered:
        out = eager.launcher(call)(x)
    host = np.asarray(x)
    row_max = host.reshape(2, rows, columns).max(2, keepdims=True).reshape(2 * rows, 1)
    np.testing.assert_array_equal(np.asarray(out), np.where(host > 0, host * 2 + 1, -host) + row_max)
    return lowered.count


def test_with_numpy_ops_a_new_block_shape_costs_no_xla_program():
    """Op by op, the interpreter's own scalar programs are warm after one call; what a new puzzle
    brings is its block shapes. numpy computes their operations (those it gets to the bit: no float
    sums or exp here): nothing is lowered for them."""
    started(FastPath())
    _lowered_by_a_new_block_shape(7, 11, numpy_ops=True)  # warms the interpreter's own programs
    assert _lowered_by_a_new_block_shape(13, 17, numpy_ops=True) == 0
    assert _lowered_by_a_new_block_shape(19, 23, numpy_ops=False) > 0


def test_while_interpreting_a_scalar_is_staged_once_per_value_and_type():
    """The interpreter lifts its loop counters and flags into JAX arrays over and over: one array per
    scalar value, dtype and weak type stands for all (JAX arrays never change), placed without a
    program, and the same array as JAX's own stage makes; outside an eager interpretation staging is
    JAX's own."""
    import jax
    from jax._src import core
    from test_host_ops import literal as scalar

    from pallas_puzzles.engine.targets.pallas_call.intercept import eager

    started(FastPath())

    stage = core.stage_p.impl
    values = [scalar(9, np.uint8), scalar(-2.5, np.float32), scalar(7, np.int16, weak=True),
              scalar(1.5, np.float32, weak=True), scalar(-0.0, np.float32), True]
    eager._state.interpreting = 1
    try:
        eager._staged_scalars.clear()
        jax.clear_caches()  # no program of an earlier test's staging to reuse
        with Lowerings() as lowered:
            placed = [stage(value) for value in values]
        assert lowered.count == 0
        eager._state.interpreting = 0
        jax_way = [stage(value) for value in values]
        eager._state.interpreting = 1
        for ours, theirs in zip(placed, jax_way):
            assert (ours.dtype, ours.weak_type, ours.shape) == (theirs.dtype, theirs.weak_type, theirs.shape)
            assert np.asarray(ours).tobytes() == np.asarray(theirs).tobytes()
        three = stage(scalar(3, np.int32))
        assert stage(scalar(3, np.int32)) is three and int(three) == 3 and not three.weak_type
        others = [stage(scalar(3, np.int32, weak=True)), stage(scalar(3, np.int16)), stage(scalar(4, np.int32)),
                  stage(scalar(0.0, np.float32)), stage(scalar(-0.0, np.float32))]
        assert len({id(three), *map(id, others)}) == 6
        assert others[0].weak_type and others[1].dtype == np.int16 and int(others[2]) == 4
        assert np.signbit(np.asarray(others[4])) and not np.signbit(np.asarray(others[3]))
        assert stage(True) is stage(True) and bool(stage(True)) and not bool(stage(False))
    finally:
        eager._state.interpreting = 0
    assert stage(scalar(3, np.int32)) is not stage(scalar(3, np.int32))


def test_without_the_fast_path_every_case_compiles():
    counts = lowerings_per_case(started(OFF), "constant_add_blocked")
    assert all(count > 0 for count in counts), counts


def test_caches_stay_after_a_check_below_the_memory_ceiling_and_go_above_it():
    import jax

    from pallas_puzzles.engine.targets.memory import CacheRelease

    double = jax.jit(lambda x: x * 2.0)

    def lowered_after_a_check(release: CacheRelease) -> int:
        double(1.0)
        release.after_check()
        with Lowerings() as lowered:
            double(1.0)
        return lowered.count

    assert lowered_after_a_check(CacheRelease(ceiling_mib=1e9)) == 0
    assert lowered_after_a_check(CacheRelease(ceiling_mib=1.0)) == 1
    assert lowered_after_a_check(CacheRelease(ceiling_mib=0.0, trim=False)) == 1  # the fast path off


def test_caches_go_once_the_next_check_growing_as_the_last_did_would_pass_the_ceiling(monkeypatch):
    """Each checker stays under the ceiling: clearing only once past it let both checkers of the whole
    course end a check's growth above it, at the same time."""
    from pallas_puzzles.engine.targets import memory

    readings = iter([60.0, 75.0, 89.0, 70.0, 80.0, 80.0])
    monkeypatch.setattr(memory, "private_memory_mib", lambda: next(readings))
    checks, cleared = [], []
    monkeypatch.setattr(memory, "forget_compiled", lambda: cleared.append(len(checks)))
    release = memory.CacheRelease(ceiling_mib=100.0, trim=False)
    for check in range(1, 5):
        checks.append(check)
        release.after_check()
    # 60 (kept: no growth seen yet), 75 (+15: 90 kept), 89 (+14: 103 cleared; 70 left), 80 (+10: 90 kept)
    assert cleared == [3], "cleared after the third check only"


def test_a_thread_reuses_its_mlir_context_as_often_as_set():
    from jax._src.interpreters import mlir

    started(FastPath(context_reuse=2))
    contexts = [mlir.make_ir_context() for _ in range(4)]
    assert contexts[0] is contexts[1] is contexts[2] and contexts[3] is not contexts[0]


@pytest.mark.parametrize(("setting", "fast"), [("1", True), ("0", False)])
def test_start_up_is_frozen_out_of_the_collectors_sight_unless_turned_off(setting: str, fast: bool):
    probe = ("import gc\n"
             "from pallas_puzzles.engine.targets.pallas_call.fast_path import start_up_out_of_collectors_sight\n"
             "with start_up_out_of_collectors_sight():\n    import jax\n    during = gc.isenabled()\n"
             "print(during, gc.isenabled(), gc.get_freeze_count(), gc.get_threshold()[0])")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          env={**os.environ, fast_path.VARIABLE: setting})
    assert done.returncode == 0, done.stderr
    collecting_during, collecting_after, frozen, young = done.stdout.split()
    assert collecting_during == str(not fast) and collecting_after == "True", done.stdout
    assert (int(frozen) > 10_000) is fast, done.stdout
    assert (int(young) == fast_path.GC_YOUNG_THRESHOLD) is fast, "the young generation is collected less often"
