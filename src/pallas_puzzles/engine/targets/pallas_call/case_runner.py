"""Running one shape case of a `pallas_call` kernel under the strict stand-in, and judging it.

Shared by the targets of the pallas_call family: `tpu-interpret` (the strict TPU
interpreter on the CPU) and `device` (compiled on a GPU or TPU). The stand-in
(engine/targets/pallas_call/intercept/patch.py) records every call and checks its index_maps; on
the CPU it also runs the interpreter strictly. A failed case is explained
(engine/targets/pallas_call/explain/cause.py), a passing one costed on the TPU pipeline model.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from pallas_puzzles.engine import specs
from pallas_puzzles.engine.case import Case
from pallas_puzzles.engine.compare import compare
from pallas_puzzles.engine.targets.pallas_call import launcher_trace, launcher_traffic, probe
from pallas_puzzles.engine.targets.pallas_call.explain import cause, inputs_written
from pallas_puzzles.engine.targets.pallas_call.explain.launcher_lines import argument_line
from pallas_puzzles.engine.targets.pallas_call.explain.runtime import diagnose, wrong_out_shape
from pallas_puzzles.engine.targets.pallas_call.intercept import call_reader, landing_order, poison
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession, session_scope
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.perf.budget import check_budget
from pallas_puzzles.perf.model import case_performance
from pallas_puzzles.results import CallLayout, CaseResult, Finding


def new_session(case: Case) -> StrictSession:
    """The strict settings of one shape case: its shuffle of parallel axes (the first case runs them
    backwards); what unwritten memory holds is set from the case's inputs when it runs."""
    puzzle = case.puzzle
    return StrictSession(backend=case.backend, learner_file=str(case.learner_file),
                         allow_revisits=puzzle.revisits_allowed, cores=puzzle.cores,
                         detect_races=puzzle.detect_races, seed=case.index,
                         reverse_parallel=case.index == 0, dma_mode=landing_order.mode_for_case(case.index),
                         dma_oldest_first=landing_order.oldest_first_for_case(case.index),
                         tpu_block_rules=puzzle.tpu_only and case.backend.interprets)


def layouts(session: StrictSession) -> tuple[CallLayout, ...]:
    """The calls the case made, as results data; read once the case has run (the records are final)."""
    return tuple(call_reader.layout(record) for record in session.calls)


def finish(case: Case, session: StrictSession, passed: bool, *findings: Finding, **more: Any) -> CaseResult:
    points = tuple(session.grid_points) if session.backend.interprets else None
    return case.done(passed, *findings, calls=more.pop("calls", None) or layouts(session),
                     grid_points_run=more.pop("grid_points_run", points), **more)


def output_layout(session: StrictSession, shape: tuple[int, ...]) -> tuple[tuple[int, ...] | None, np.ndarray | None]:
    """Block shape and coverage of the pallas_call output that produced a result of `shape`.

    Under jax.vmap the recorded call has the per-example shape: its trailing
    dimensions match and the coverage repeats over the batch dimensions.
    """
    found = session.output_for(shape)
    if found is None:
        return None, None
    _, out, lead = found
    block = (1,) * lead + tuple(out.block_dims) if out.block_dims is not None else None
    covered = np.broadcast_to(out.covered, shape) if out.covered is not None else None
    return block, covered


def shape_finding(expected: np.ndarray, got: Any, session: StrictSession) -> Finding | None:
    got_shape = tuple(getattr(got, "shape", ()))
    if got_shape != tuple(expected.shape):
        out_shape = [argument_line(r.call_line, "out_shape") for r in session.calls[-1:]]
        return Finding(
            FindingKind.SHAPE,
            f"Your function returned shape {got_shape}; the spec's output has shape {tuple(expected.shape)}.",
            where=tuple(line for line in out_shape if line is not None),
        )
    return None


def run(case: Case, entry: Callable[..., Any], reset: Callable[[], None], cost_card: bool) -> CaseResult:
    """Run the case, compare with the spec, explain a failure; `reset` clears the interpreter after one."""
    import jax

    session = new_session(case)
    inputs, expected, flops = case.data()
    session.poison, session.sentinel = poison.unwritten_memory(case.index, inputs)
    interprets = session.backend.interprets
    device = jax.devices("cpu")[0] if interprets else None
    try:
        with session_scope(session), jax.default_device(device):
            got = jax.block_until_ready(entry(*specs.on_device(inputs)))
    except Exception as exc:  # the learner's code failed: explain it
        finding = diagnose(exc, session)
        finding = wrong_out_shape(finding, session, tuple(expected.shape)) or finding
        if interprets:
            reset()
        if finding.kind is FindingKind.HBM_COMPUTE:  # Mosaic refuses it when compiling: no step runs (the
            return finish(case, session, False, finding, grid_points_run=())  # fast path's run got further)
        return finish(case, session, False, finding)
    if isinstance(got, (tuple, list)) and len(got) == 1:
        got = got[0]
    # A copy nobody waited for comes first: what the output holds is then a matter of chance.
    problem = session.unbalanced[0] if session.unbalanced else (inputs_written.finding(session)
                                                                 or shape_finding(expected, got, session))
    if problem is not None:
        return finish(case, session, False, problem)
    block, covered = output_layout(session, tuple(expected.shape))
    tolerance = case.puzzle.tolerance_on(case.backend)  # a GPU's own where its dots round otherwise
    mismatch = compare(expected, np.asarray(got), tolerance.rtol, tolerance.atol, block, covered, session.sentinel)
    # One trace of the launcher: where its answer comes from (before the numbers: an answer XLA computed is
    # no answer, right or wrong), then what it moves around the kernels.
    traced = launcher_trace.trace(entry, inputs, [item.name for item in case.puzzle.inputs], session)
    outside = (launcher_trace.integrity(traced, case.puzzle, inputs, expected, session)
               or launcher_trace.unlike_the_run(traced, session, inputs))
    if outside is not None:
        return finish(case, session, False, outside, mismatch=mismatch)
    if mismatch is not None:
        rerun = functools.partial(probe.rerun, session, entry, inputs)
        causes, mismatch = cause.explain(expected, np.asarray(got), mismatch, session, covered, rerun)
        return finish(case, session, False, *causes, mismatch=mismatch)
    calls = layouts(session)
    if not cost_card:
        return finish(case, session, True, calls=calls)
    launcher = launcher_traffic.traffic(traced.graph) if traced.graph is not None else None
    performance = case_performance(calls, case.label, inputs, expected, flops, launcher)
    budget = case.puzzle.budget
    over = check_budget(performance, budget, calls) if budget is not None else None
    return finish(case, session, over is None, *([over] if over else []), calls=calls, performance=performance)
