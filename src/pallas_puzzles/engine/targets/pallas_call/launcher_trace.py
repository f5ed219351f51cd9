"""The launcher of a shape case traced once, its pallas_calls replaced by stand-ins, and read as a graph.

jax.make_jaxpr at the case's shapes, with the strict stand-in recording each call and handing back a
callback in its place (intercept/patch.py): nothing is compiled or run, and the kernels' bodies are not
traced. One trace serves both readers of the pallas_call family's launcher: where its answer comes
from (engine/integrity) and what it moves through HBM around the kernels (launcher_traffic).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.engine.integrity import answers
from pallas_puzzles.engine.integrity.verdict import Kernel, judge_graph, judge_jaxpr, untraceable
from pallas_puzzles.engine.launcher_graph import Graph, Reader, Value, nbytes
from pallas_puzzles.engine.learner_lines import source_of
from pallas_puzzles.engine.targets.pallas_call import jax_private
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession, session_scope
from pallas_puzzles.engine.targets.pallas_call.intercept.stand_ins import StandIn
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding


def stand_in_name(eqn: Any) -> str | None:
    """The kernel's name when `eqn` is a pallas_call's stand-in; None for any other operation."""
    if eqn.primitive.name != "pure_callback":
        return None
    function = jax_private.callback_function(eqn)
    return function.kernel_name if isinstance(function, StandIn) else None


@dataclass
class LauncherTrace:
    """A traced launcher: its graph and the calls it made while traced; or why it could not be traced."""

    graph: Graph | None
    session: StrictSession
    failure: BaseException | None = None
    inputs: tuple[Value, ...] = ()  # the launcher's arguments, as the graph holds them
    entry: Callable[..., Any] | None = None  # the launcher traced


def trace(entry: Callable[..., Any], inputs: Sequence[np.ndarray], names: Sequence[str],
          case: StrictSession) -> LauncherTrace:
    """Trace `entry` at these inputs' shapes (`case`: the shape case's session, for the learner's file, the
    backend and the simulated cores)."""
    import jax

    learner_file = case.learner_file
    session = StrictSession(backend=case.backend, learner_file=learner_file, cores=case.cores,  # pl.kernel's mesh
                            run_kernels=False, stand_ins=True)
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in inputs]
    try:  # the launcher's own prints already showed in the run; a trace would print them again
        with session_scope(session), contextlib.redirect_stdout(io.StringIO()):
            closed = jax.make_jaxpr(lambda *args: entry(*args))(*shapes)  # a new function: no cached trace
    except Exception as exc:
        return LauncherTrace(None, session, exc, entry=entry)
    reader = Reader(learner_file, stand_in_name, [r.kernel_name for r in session.calls])
    args = [Value("input", nbytes(v.aval), name=name) for v, name in zip(closed.jaxpr.invars, names)]
    return LauncherTrace(reader.read(closed.jaxpr, args), session, inputs=tuple(args), entry=entry)


def integrity(traced: LauncherTrace, puzzle: Puzzle, inputs: Sequence[np.ndarray], expected: np.ndarray,
              run: StrictSession) -> Finding | None:
    """Does every element of the case's answer come from the learner's kernels? (engine/integrity) `run`: the
    session of the case's run, whose records name every kernel it called (a trace may find a jitted launcher's
    calls in jax's cache and record none)."""
    learner_file = traced.session.learner_file
    if traced.graph is None:
        assert traced.failure is not None
        return untraceable(traced.failure, learner_file)
    return judge_graph(traced.graph, answers.rules(puzzle, inputs, expected), learner_file, _kernels(run),
                       source_of(traced.entry))


def unlike_the_run(traced: LauncherTrace, run: StrictSession, inputs: Sequence[np.ndarray]) -> Finding | None:
    """A launcher whose trace hands a kernel one of its inputs as it is, while the run handed that kernel other
    values: it computes only when its arrays hold values, where the trace cannot see it."""
    if traced.graph is None:
        return None
    if len(run.calls) != traced.graph.kernels:
        if len(traced.session.calls) == traced.graph.kernels:  # the trace ran all of the launcher's code again
            return Finding(FindingKind.OUTSIDE_KERNEL, f"Your launcher calls {len(run.calls)} kernel(s) when it runs "
                           f"but {traced.graph.kernels} when it is traced: it does something else once the values "
                           "of its arrays are known. A launcher must do the same under jax.jit as when it runs.",
                           where=tuple(x for x in (source_of(traced.entry),) if x is not None))
        return None  # a jitted launcher found in jax's cache by the run: its calls cannot be paired
    position = {id(value): n for n, value in enumerate(traced.inputs)}
    given: dict[int, list[Value]] = {}
    for value, call in traced.graph.operands:
        given.setdefault(call, []).append(value)
    for call, values in given.items():
        operands = run.calls[call].operands
        for k, value in enumerate(values):
            n = position.get(id(value))
            if n is None or k >= len(operands) or operands[k] is None:
                continue
            if not np.array_equal(np.asarray(operands[k]), inputs[n]):
                return Finding(FindingKind.OUTSIDE_KERNEL, f"Your launcher hands kernel call {call + 1} other values "
                               f"when it runs than when it is traced (its operand {k + 1}, {value.name} as it is): "
                               "it computes on the values only when they are known. A launcher must do the same "
                               "under jax.jit as when it runs; compute in the kernel.",
                               where=tuple(x for x in (run.calls[call].call_line,) if x is not None))
    return None


def judge_traced(jaxpr: Any, puzzle: Puzzle, inputs: Sequence[Any], expected: Any, run: StrictSession,
                 entry: Callable[..., Any]) -> Finding | None:
    """The same judgement of a launcher a target traced itself (jax.jit(...).trace: real pallas_calls)."""
    return judge_jaxpr(jaxpr, answers.rules(puzzle, inputs, expected), run.learner_file, _kernels(run),
                       source_of(entry))


def _kernels(run: StrictSession) -> list[Kernel]:
    return [Kernel(r.kernel_name, r.kernel_line, r.call_line) for r in run.calls]

