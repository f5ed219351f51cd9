"""A launcher's jaxpr read as a graph of arrays: what made each one, from what, at which learner line.

Every target traces the learner's launcher once per shape case somewhere (jax.make_jaxpr with the
pallas_calls replaced by stand-ins, or jax.jit(...).trace before lowering); its jaxpr is read here
into Values, with nested jaxprs inlined (jit, custom_jvp/vjp, checkpoint, custom_vmap, shard_map)
and loops and branches read through (a loop body twice, so what one step computes reaches the next).
A kernel (pallas_call, pl.kernel's mpmd_map, plgpu.kernel, a stand-in the target names) is one node
whose operands are remembered. Two readers build on the graph: launcher_traffic (what XLA moves
around the kernels) and integrity (the answer comes from a kernel). Nothing here runs or compiles.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pallas_puzzles.engine.jaxprs import open_jaxpr, sub_jaxprs
from pallas_puzzles.engine.learner_lines import info_lines
from pallas_puzzles.source_line import SourceLine

KERNELS = frozenset({"pallas_call", "mpmd_map", "core_map"})  # public Pallas kernels as jaxprs hold them
LOOP_PASSES = 2  # a loop body read twice: what one step computes reaches the next step's inputs

# Tells a target's own stand-in for a kernel (a callback the checker put in its place) from the
# learner's operations: the kernel's name, or None.
KernelOf = Callable[[Any], "str | None"]


@dataclass(eq=False)
class Value:
    """An array in the launcher: where it lives, how big it is, what made it."""

    kind: str  # "input", "kernel" (a kernel's output), "xla" (computed around the kernels), or "constant"
    nbytes: int
    name: str = ""
    shape: tuple[int, ...] = ()
    dtype: str = ""
    primitive: str = ""
    inputs: list[Value] = field(default_factory=list)
    line: SourceLine | None = None  # the learner's line that made it (the innermost)
    lines: tuple[SourceLine, ...] = ()  # every learner line on the stack that made it, innermost first
    params: dict[str, Any] = field(default_factory=dict)  # the operation's parameters
    call: int = -1  # kernel outputs: which kernel call made it (0-based, in the order they were traced)

    @property
    def in_hbm(self) -> bool:
        return self.kind in ("input", "kernel")


def nbytes(aval: Any) -> int:
    shape = tuple(getattr(aval, "shape", ()))
    dtype = getattr(aval, "dtype", None)  # a numpy dtype, or one of JAX's own (a PRNG key's: 8 bytes)
    return int(np.prod(shape, dtype=np.int64)) * (int(dtype.itemsize) if dtype is not None else 4)


def contains_kernel(jaxpr: Any, kernel_of: KernelOf | None = None) -> bool:
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in KERNELS or (kernel_of is not None and kernel_of(eqn) is not None):
            return True
        if any(contains_kernel(sub, kernel_of) for sub in sub_jaxprs(eqn.params)):
            return True
    return False


@dataclass
class Graph:
    """What a reader found: the launcher's outputs and every kernel's operands."""

    outputs: list[Value]
    operands: list[tuple[Value, int]]  # (array, the kernel call that reads it)
    kernels: int  # kernel calls seen


class Reader:
    """Walks a launcher's jaxpr into Values; remembers each kernel's operands."""

    def __init__(self, learner_file: str, kernel_of: KernelOf | None = None,
                 kernel_names: Sequence[str] = ()) -> None:
        self.learner_file, self.kernel_of, self.kernel_names = learner_file, kernel_of, kernel_names
        self.operands: list[tuple[Value, int]] = []
        self.calls = 0

    def read(self, jaxpr: Any, args: list[Value]) -> Graph:
        outputs = self.walk(open_jaxpr(jaxpr), args)
        return Graph(outputs, self.operands, self.calls)

    def _lines(self, eqn: Any) -> tuple[SourceLine, ...]:
        return info_lines(eqn.source_info, self.learner_file)

    def _kernel_name(self, eqn: Any) -> str | None:
        own = self.kernel_of(eqn) if self.kernel_of is not None else None
        if own is not None:
            return own
        if eqn.primitive.name in KERNELS:
            return str(eqn.params.get("name") or "kernel")
        return None

    def walk(self, jaxpr: Any, args: list[Value], call_site: tuple[SourceLine, ...] = ()) -> list[Value]:
        """`call_site`: the learner's lines that called a jnp function whose own jaxpr this is (its
        operations carry the lines where jax first traced them, perhaps another caller's)."""
        env: dict[Any, Value] = dict(zip(jaxpr.invars, args))
        env.update({v: Value("constant", 0) for v in jaxpr.constvars})

        def read(var: Any) -> Value:
            found = env.get(var) if hasattr(var, "aval") and not hasattr(var, "val") else None
            return found or Value("constant", 0)  # a literal

        for eqn in jaxpr.eqns:
            ins = [read(v) for v in eqn.invars]
            lines = call_site or self._lines(eqn)
            env.update(zip(eqn.outvars, self._equation(eqn, ins, lines)))
        return [read(v) for v in jaxpr.outvars]

    def _equation(self, eqn: Any, ins: list[Value], lines: tuple[SourceLine, ...]) -> list[Value]:
        line = lines[0] if lines else None
        name = eqn.primitive.name
        kernel = self._kernel_name(eqn)
        subs = sub_jaxprs(eqn.params)
        if kernel is None and subs and name not in ("cond", "while") \
                and any(contains_kernel(sub, self.kernel_of) for sub in subs) and not self._inlinable(eqn, subs):
            kernel = name  # a wrapper around a kernel the reader cannot see into (pl.run_state's core_map)
        if kernel is not None:
            return self._kernel(eqn, ins, kernel, lines)
        if name == "cond":
            return self._cond(eqn, ins, lines)
        if name == "while":
            return self._while(eqn, ins, lines)
        if subs and self._inlinable(eqn, subs):
            return self.walk(subs[0], ins, lines)
        return [Value("xla", nbytes(v.aval), shape=tuple(v.aval.shape), dtype=str(v.aval.dtype), primitive=name,
                      inputs=ins, line=line, lines=lines, params=dict(eqn.params)) for v in eqn.outvars]

    @staticmethod
    def _inlinable(eqn: Any, subs: list[Any]) -> bool:
        """A call (jit, custom_jvp, shard_map, scan, ...): one inner jaxpr taking the operands in order."""
        sub = subs[0]
        return len(sub.invars) == len(eqn.invars) and len(sub.outvars) == len(eqn.outvars)

    def _kernel(self, eqn: Any, ins: list[Value], kernel: str, lines: tuple[SourceLine, ...]) -> list[Value]:
        # A pallas_call's grid sized at run time takes its sizes first: they say how many steps the kernel
        # runs, not what it computes, so a launcher may work them out from the data (count[0] // BR).
        sizes = getattr(eqn.params.get("grid_mapping"), "num_dynamic_grid_bounds", 0) or 0
        self.operands += [(value, self.calls) for value in ins[sizes:]]
        if self.calls < len(self.kernel_names):
            kernel = self.kernel_names[self.calls]
        self.calls += 1
        return [Value("kernel", nbytes(v.aval), name=f"the output of pallas_call {self.calls} ({kernel})",
                      shape=tuple(v.aval.shape), dtype=str(v.aval.dtype), primitive=eqn.primitive.name, inputs=ins,
                      line=lines[0] if lines else None, lines=lines, call=self.calls - 1) for v in eqn.outvars]

    @staticmethod
    def _join(values: list[Value], like: Value, lines: tuple[SourceLine, ...], control: list[Value]) -> Value:
        """One of several arrays, chosen at run time (a branch's result, a loop's carry)."""
        return Value("xla", like.nbytes, shape=like.shape, dtype=like.dtype, primitive="join",
                     inputs=[*values, *control], line=lines[0] if lines else None, lines=lines,
                     params={"choices": len(values)})

    def _cond(self, eqn: Any, ins: list[Value], lines: tuple[SourceLine, ...]) -> list[Value]:
        index, operands = ins[0], ins[1:]
        results = [self.walk(open_jaxpr(branch), operands, lines) for branch in eqn.params["branches"]]
        return [self._join(list(outs), outs[0], lines, [index]) for outs in zip(*results)]

    def _while(self, eqn: Any, ins: list[Value], lines: tuple[SourceLine, ...]) -> list[Value]:
        cond_n, body_n = eqn.params["cond_nconsts"], eqn.params["body_nconsts"]
        cond_consts, body_consts, carry = ins[:cond_n], ins[cond_n:cond_n + body_n], ins[cond_n + body_n:]
        state = list(carry)
        for _ in range(LOOP_PASSES):
            stop = self.walk(open_jaxpr(eqn.params["cond_jaxpr"]), [*cond_consts, *state], lines)
            after = self.walk(open_jaxpr(eqn.params["body_jaxpr"]), [*body_consts, *state], lines)
            state = [self._join([before, new], before, lines, stop) for before, new in zip(carry, after)]
        return state
