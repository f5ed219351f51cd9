"""The answer comes from the kernel: a launcher's traced graph judged, in the learner's words.

Every target calls `judge` with the jaxpr (or graph) of the launcher it traced for a shape case.
A finding names the launcher line that computed outside a kernel and says what to do instead; it
is also a finding when the launcher cannot be traced because it needs its inputs' values on the
host, when a kernel it calls is not defined in the learner's file, or when the output does not
come out of a kernel at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pallas_puzzles.engine.file_faults import first_line
from pallas_puzzles.engine.integrity.origin import Origins, Rules
from pallas_puzzles.engine.integrity.vocabulary import REORDERS, words
from pallas_puzzles.engine.launcher_graph import Graph, KernelOf, Reader, Value, nbytes
from pallas_puzzles.engine.learner_lines import learner_frames, same_file
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine

KIND = FindingKind.OUTSIDE_KERNEL
MAX_LINES = 4  # lines a finding quotes
# The errors JAX raises when traced code needs a value it cannot know yet (public: jax.errors).
_NEEDS_VALUES = ("TracerArrayConversionError", "ConcretizationTypeError", "TracerBoolConversionError",
                 "TracerIntegerConversionError")


@dataclass(frozen=True)
class Kernel:
    """A kernel the launcher called: where its body is defined and the line that called it."""

    name: str
    defined: SourceLine | None
    called: SourceLine | None = None


def _lines(*groups: Any) -> tuple[SourceLine, ...]:
    """The lines of every group, in order, each once."""
    out: dict[tuple[str, int], SourceLine] = {}
    for group in groups:
        for line in (group if isinstance(group, (tuple, list)) else (group,)):
            if line is not None:
                out.setdefault((line.file, line.line), line)
    return tuple(out.values())


def _at(step: Value, origins: Origins) -> tuple[str, tuple[SourceLine, ...]]:
    """"at line 12" and the lines to quote: the launcher's own lines first (where it computed, or called a
    helper that did), then the lines inside its helpers, each in file order."""
    done = origins.computations(step)
    outer = sorted((v.lines[-1] for v in done if v.lines), key=lambda line: line.line)
    inner = sorted((line for v in done for line in v.lines[:-1]), key=lambda line: line.line)
    where = _lines(step.lines[-1:], outer, inner)[:MAX_LINES]
    return (f" at line {step.lines[-1].line}" if step.lines else ""), where


def _step_finding(step: Value, origins: Origins, before: int | None, kernels: int,
                  launcher: SourceLine | None) -> Finding:
    what = words(step.primitive)
    at, where = _at(step, origins)
    if step.primitive in REORDERS and step.primitive in origins.rules.reorders:
        message = (f"Your launcher rearranges the data itself ({what}{at}): in this puzzle that rearrangement is "
                   "the answer, so the kernel must do it (its BlockSpecs, index_maps and stores place every "
                   "element). Pass the inputs to the kernel as they are.")
    elif before is not None:
        receiver = "your kernel" if kernels == 1 else f"kernel call {before + 1}"
        message = (f"Your launcher computes on the data before the kernel runs: {what}{at}, whose result "
                   f"{receiver} receives. The kernel must compute the answer from the puzzle's inputs: pass "
                   "them in as they are (reshaped, sliced or padded if you need) and do this arithmetic on "
                   "their blocks inside the kernel.")
    elif kernels:
        message = (f"Your launcher changes the kernel's output before returning it: {what}{at}. Every "
                   "element of the answer must come out of a kernel as it is: do this inside the kernel, "
                   "before it stores into its output ref.")
    else:
        message = (f"Your launcher computes the answer itself ({what}{at}) and calls no kernel. Compute it in "
                   "a kernel and return the kernel's output.")
    return Finding(KIND, message, where=where or _lines(launcher))


def _output_finding(value: Value, origins: Origins, kernels: int, launcher: SourceLine | None) -> Finding | None:
    origin = origins.of(value)
    where = _lines(value.lines[-1:], launcher)
    if not origin.kernel:
        if origin.data:
            return Finding(KIND, "Your launcher returns its input (or part of it) without passing it through a "
                           "kernel. The answer must come out of your kernel: return the pallas_call's output.",
                           where=where)
        return Finding(KIND, "Your launcher returns an array it made itself (a constant, zeros), not a kernel's "
                       "output. Return what your pallas_call computes.", where=where)
    if origin.foreign:
        return Finding(KIND, "Part of what your launcher returns does not come out of a kernel: it joins the "
                       "kernel's output with an input or a constant (padding, a concatenation). Let the kernel "
                       "write every element of the answer.", where=where)
    if not origin.data:
        return Finding(KIND, "Your output does not depend on the puzzle's inputs: your kernels only receive arrays "
                       "the launcher made itself. Pass the inputs to the kernel and compute from them.",
                       where=where)
    return None


def _not_yours(kernels: Sequence[Kernel], learner_file: str) -> Finding | None:
    for kernel in kernels:
        if kernel.defined is not None and not same_file(kernel.defined.file, learner_file):
            return Finding(KIND, f"The kernel {kernel.name} is not yours: it is defined in {kernel.defined.file}, "
                           "not in your file. The puzzle asks for your own kernel: write it in this file.",
                           where=_lines(kernel.called))
    return None


def judge_graph(graph: Graph, rules: Rules, learner_file: str, kernels: Sequence[Kernel] = (),
                launcher: SourceLine | None = None) -> Finding | None:
    """The first way the launcher's output does not come from the learner's kernels; None when it does."""
    found = _not_yours(kernels, learner_file)
    if found is not None:
        return found
    origins = Origins(rules)
    for value, call in graph.operands:  # in the order the kernels were called: the earliest fault first
        step = origins.of(value).step
        if step is not None:
            return _step_finding(step, origins, call, graph.kernels, launcher)
    for value in graph.outputs:
        step = origins.of(value).step
        if step is not None:
            return _step_finding(step, origins, None, graph.kernels, launcher)
        found = _output_finding(value, origins, graph.kernels, launcher)
        if found is not None:
            return found
    return None


def judge_jaxpr(jaxpr: Any, rules: Rules, learner_file: str, kernels: Sequence[Kernel] = (),
                launcher: SourceLine | None = None, kernel_of: KernelOf | None = None) -> Finding | None:
    """`judge_graph` of a traced launcher's jaxpr (a ClosedJaxpr, or a Jaxpr and no constants)."""
    inner = getattr(jaxpr, "jaxpr", jaxpr)
    args = [Value("input", nbytes(v.aval), name=f"input {n}") for n, v in enumerate(inner.invars)]
    graph = Reader(learner_file, kernel_of).read(inner, args)
    return judge_graph(graph, rules, learner_file, kernels, launcher)


def untraceable(exc: BaseException, learner_file: str) -> Finding | None:
    """A launcher that ran but could not be traced at its own line: it needs its inputs' values on the host, or
    does something else when traced; None when the trace failed in no learner line (not a verdict: the run
    already judged the launcher)."""
    where = learner_frames(exc, learner_file)
    if not where:
        return None
    names = {type(e).__name__ for e in (exc, exc.__cause__, exc.__context__) if e is not None}
    if names & set(_NEEDS_VALUES):
        message = (f"Your launcher needs the values of its inputs on the host at line {where[-1].line}: it turns an "
                   "array into numpy or a Python number (np.asarray, float(), an `if` on its values).")
    else:
        message = (f"Your launcher runs, but fails when it is traced (as under jax.jit) at line {where[-1].line}: "
                   f"{type(exc).__name__}: {first_line(str(exc))}.")
    return Finding(KIND, message + " A launcher only arranges arrays for its kernels, and must work on arrays "
                   "whose values are not known yet: compute with the values inside the kernel.", where=where[-1:],
                   detail=str(exc))
