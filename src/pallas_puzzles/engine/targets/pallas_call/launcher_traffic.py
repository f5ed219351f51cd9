"""What the launcher moves through HBM outside its pallas_calls: the XLA operations around them.

The cost model counts what each pallas_call's pipeline and copies move. Work a launcher does in
plain jnp (a scaling before the kernel, a normalisation after it, a jnp.stack of the inputs)
runs in XLA, which reads its operands from HBM and writes its results back; that is traffic
too. Here the launcher is traced once at the case's shapes (jax.make_jaxpr, the pallas_calls
replaced by stand-ins, nothing compiled or run) and its jaxpr is read with a model of perfect
fusion, a lower bound on what XLA moves:
- every array that leaves XLA's hands (a pallas_call operand, or what the launcher returns) is
  written once, unless it is only a view of an array already in HBM (a reshape, a squeeze);
- every array in HBM (a launcher input, a pallas_call output) that XLA computes from is read
  once, or only the part a slice takes;
- everything in between stays in registers.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.engine.learner_lines import info_lines
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession, session_scope
from pallas_puzzles.perf.launcher import LauncherTraffic, XlaStep
from pallas_puzzles.source_line import SourceLine

VIEWS = frozenset({"reshape", "squeeze", "expand_dims", "copy", "copy_p"})  # no data moves (a bitcast)
SLICES = frozenset({"slice", "dynamic_slice", "gather"})  # read only the part they take
SUB_JAXPRS = ("jaxpr", "call_jaxpr", "fun_jaxpr")  # params of pjit, closed_call, custom_jvp/vjp, remat


@dataclass(eq=False)
class _Value:
    """An array in the launcher: where it lives, how big it is, what made it."""

    kind: str  # "input", "pallas" (a pallas_call output), "xla", or "constant"
    nbytes: int
    name: str = ""
    shape: tuple[int, ...] = ()
    dtype: str = ""
    primitive: str = ""
    inputs: list[_Value] = field(default_factory=list)
    line: SourceLine | None = None

    @property
    def in_hbm(self) -> bool:
        return self.kind in ("input", "pallas")


def _nbytes(aval: Any) -> int:
    shape = tuple(getattr(aval, "shape", ()))
    dtype = getattr(aval, "dtype", None)  # a numpy dtype, or one of JAX's own (a PRNG key's: 8 bytes)
    return int(np.prod(shape, dtype=np.int64)) * (int(dtype.itemsize) if dtype is not None else 4)


def _sub_jaxpr(eqn: Any) -> Any:
    for key in SUB_JAXPRS:
        sub = eqn.params.get(key)
        if sub is not None and hasattr(getattr(sub, "jaxpr", sub), "eqns"):
            return sub
    return None


class _Reader:
    """Walks a launcher's jaxpr, inlining nested jaxprs, into _Values; remembers the pallas operands."""

    def __init__(self, learner_file: str, kernels: Sequence[str]) -> None:
        self.learner_file, self.kernels = learner_file, kernels
        self.operands: list[tuple[_Value, int]] = []  # (array, the pallas_call that reads it)
        self.calls = 0

    def _line(self, eqn: Any) -> SourceLine | None:
        lines = info_lines(eqn.source_info, self.learner_file)
        return lines[0] if lines else None

    def walk(self, jaxpr: Any, args: list[_Value], call_site: SourceLine | None = None) -> list[_Value]:
        """`call_site`: the launcher line of a jnp function whose own jaxpr this is (its operations
        carry the line where jax first traced them, perhaps another caller's)."""
        env: dict[Any, _Value] = dict(zip(jaxpr.invars, args))
        env.update({v: _Value("constant", 0) for v in jaxpr.constvars})

        def read(var: Any) -> _Value:
            found = env.get(var) if hasattr(var, "aval") and not hasattr(var, "val") else None
            return found or _Value("constant", 0)  # a literal

        for eqn in jaxpr.eqns:
            ins = [read(v) for v in eqn.invars]
            sub = _sub_jaxpr(eqn)
            if eqn.primitive.name == "pure_callback":  # a pallas_call's stand-in (see patch.py)
                self.operands += [(value, self.calls) for value in ins]
                kernel = self.kernels[self.calls] if self.calls < len(self.kernels) else "kernel"
                self.calls += 1
                outs = [_Value("pallas", _nbytes(v.aval), name=f"the output of pallas_call {self.calls} ({kernel})")
                        for v in eqn.outvars]
            elif sub is not None:
                outs = self.walk(getattr(sub, "jaxpr", sub), ins, call_site or self._line(eqn))
            else:
                outs = [_Value("xla", _nbytes(v.aval), shape=tuple(v.aval.shape), dtype=str(v.aval.dtype),
                               primitive=eqn.primitive.name, inputs=ins, line=call_site or self._line(eqn))
                        for v in eqn.outvars]
            env.update(zip(eqn.outvars, outs))
        return [read(v) for v in jaxpr.outvars]


def _maker(value: _Value) -> _Value:
    """What really holds the data of `value`: the array under a chain of views."""
    while value.kind == "xla" and value.primitive in VIEWS and value.inputs:
        value = value.inputs[0]
    return value


def _reads(sink: _Value) -> dict[int, tuple[_Value, int, SourceLine | None]]:
    """The arrays in HBM that XLA reads to compute `sink`: id -> (array, bytes read, the reading line)."""
    found: dict[int, tuple[_Value, int, SourceLine | None]] = {}
    stack, seen = [sink], set()
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        for source in value.inputs:
            if source.in_hbm:
                amount = min(value.nbytes, source.nbytes) if value.primitive in SLICES else source.nbytes
                before = found.get(id(source))
                found[id(source)] = (source, max(amount, before[1] if before else 0), value.line)
            elif source.kind == "xla":
                stack.append(source)
    return found


def _steps(sinks: list[tuple[_Value, str]]) -> tuple[XlaStep, ...]:
    read: dict[int, tuple[_Value, int, SourceLine | None]] = {}
    per_line: dict[SourceLine | None, dict[str, Any]] = {}
    for sink, what in sinks:
        if sink.kind != "xla" or _maker(sink).in_hbm:
            continue
        step = per_line.setdefault(_maker(sink).line, {"read": 0, "written": 0, "reads": [], "writes": []})
        step["written"] += sink.nbytes
        step["writes"].append(f"a {sink.shape} {sink.dtype} array {what}")
        for key, (source, amount, line) in _reads(sink).items():
            if key not in read:
                read[key] = (source, amount, line)
                at = per_line.setdefault(line, {"read": 0, "written": 0, "reads": [], "writes": []})
                at["read"] += amount
                at["reads"].append(source.name)
    return tuple(XlaStep(line=line, read_bytes=s["read"], written_bytes=s["written"], reads=tuple(s["reads"]),
                         writes=tuple(dict.fromkeys(s["writes"]))) for line, s in per_line.items())


def measure(entry: Any, inputs: Sequence[np.ndarray], puzzle: Puzzle, case: StrictSession) -> LauncherTraffic | None:
    """The launcher's XLA traffic at these inputs' shapes (`case`: the shape case's session, for the
    learner's file and the backend); None when it cannot be traced here."""
    import jax

    learner_file, names = case.learner_file, [item.name for item in puzzle.inputs]
    session = StrictSession(backend=case.backend, learner_file=learner_file, run_kernels=False, stand_ins=True)
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in inputs]
    try:  # the launcher's own prints already showed in the run; a trace would print them again
        with session_scope(session), contextlib.redirect_stdout(io.StringIO()):
            closed = jax.make_jaxpr(lambda *args: entry(*args))(*shapes)  # a new function: no cached trace
    except Exception:  # the launcher does not trace (it needs concrete values): no figure, not a fault
        return None
    reader = _Reader(learner_file, [r.kernel_name for r in session.calls])
    args = [_Value("input", _nbytes(v.aval), name=name) for v, name in zip(closed.jaxpr.invars, names)]
    outs = reader.walk(closed.jaxpr, args)
    sinks = [(value, f"that pallas_call {n + 1} reads") for value, n in reader.operands]
    sinks += [(value, "that the launcher returns") for value in outs]
    return LauncherTraffic(_steps(sinks))
