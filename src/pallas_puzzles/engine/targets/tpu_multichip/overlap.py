"""Whether a kernel computes while its copies fly, read from the kernel's jaxpr in program order.

The interpreter has no clock: what a TPU overlaps is what the kernel's program puts between a
copy's start and the wait for it. "Computing" means a product that reaches the output: a
`dot_general` (or a multiplication of two values read from memory) whose result is stored,
then or later, into one of the kernel's outputs, directly or through a scratch buffer (stored or
copied into the output). A store of zeros or of a copied block between the start and the wait is
not compute; a product computed before the wait and stored after it is. A copy's wait is the first
one on a semaphore it counts on: another copy's wait (a weight loaded meanwhile) is not its own.

Program order is the jaxpr's: both branches of a `pl.when` count where the `cond` stands, a
loop body once, and the kernel body repeats at the next grid step, so the wait for a copy
started late in a step may come early in the next one. hooks.py calls `idle_copies` as the
interpreter traces each kernel; the monitor holds the starts it returns for the kernel's run.

No jax import: jaxprs are read through their attributes (eqns, invars, outvars, params).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pallas_puzzles.engine.jaxprs import sub_jaxprs

_EMPTY: frozenset[int] = frozenset()


def _tail(outer: Sequence[Any], inner: Sequence[Any]) -> list[tuple[Any, Any]]:
    """Operands paired with a sub-jaxpr's variables from the end (a cond's index, a while loop's
    predicate constants and a scoped allocation's new refs have no partner)."""
    n = min(len(outer), len(inner))
    return list(zip(outer[len(outer) - n:], inner[len(inner) - n:]))


def _literal(var: Any) -> bool:
    return hasattr(var, "val")  # a jaxpr Literal (a constant operand): it has a value, and no hash


def _buffer(var: Any) -> bool:
    """A ref to memory (not a semaphore): what a copy reads or writes."""
    aval = str(getattr(var, "aval", ""))
    return not _literal(var) and aval.startswith("Ref") and "sem" not in aval


def _pairs(outer: Sequence[Any], sub: Any) -> list[tuple[Any, Any]]:
    """An equation's operands paired with a sub-jaxpr's variables: a scoped allocation (run_scoped) binds them
    to its constvars, its new refs being its invars; the others to its invars, from the end (_tail)."""
    constvars = getattr(sub, "constvars", None) or []
    if constvars and len(constvars) == len(outer):
        return list(zip(outer, constvars))
    return _tail(outer, sub.invars)


class _Flow:
    """Which values derive from memory reads, from which products, and which products reach an output.

    A product may reach the output through a scratch buffer (stored there while the copy flies, copied
    into the output after the wait): what a ref holds is followed too, by the kernel-level ref it is."""

    def __init__(self, outputs: Sequence[Any]) -> None:
        self.data: set[Any] = set()  # variables computed from loaded values
        self.made_by: dict[Any, frozenset[int]] = {}  # variable -> the products it derives from
        self.useful: set[int] = set()  # products stored into an output
        self.outputs = set(outputs)
        self.ref_of: dict[Any, Any] = {}  # a ref inside a branch or loop -> the ref it is outside
        self.holds: dict[Any, frozenset[int]] = {}  # a ref -> the products stored into it so far

    def of(self, var: Any) -> frozenset[int]:
        return _EMPTY if _literal(var) else self.made_by.get(var, _EMPTY)

    def is_data(self, var: Any) -> bool:
        return not _literal(var) and var in self.data

    def _ref(self, var: Any) -> Any:
        return self.ref_of.get(var, var)

    def walk(self, jaxpr: Any) -> None:
        for eqn in jaxpr.eqns:
            name = eqn.primitive.name
            made = frozenset().union(*(self.of(v) for v in eqn.invars))
            subs = sub_jaxprs(eqn.params)
            if subs:
                self._enter(eqn, subs)
                continue
            if name == "swap":
                ref = self._ref(eqn.invars[0])
                self.holds[ref] = self.holds.get(ref, _EMPTY) | self.of(eqn.invars[1])
                if ref in self.outputs:
                    self.useful |= self.of(eqn.invars[1])
            buffers = [v for v in eqn.invars if _buffer(v)] if name == "dma_start" else []
            if len(buffers) >= 2:  # a copy (source, then target, each with its indices) moves what it reads
                source, target = self._ref(buffers[0]), self._ref(buffers[1])
                moved = self.holds.get(source, _EMPTY)
                self.holds[target] = self.holds.get(target, _EMPTY) | moved
                if target in self.outputs:
                    self.useful |= moved
            if name == "get":
                made = made | self.holds.get(self._ref(eqn.invars[0]), _EMPTY)
            if is_product(eqn, self.is_data):
                made = made | {id(eqn)}
            for out in eqn.outvars:
                self.made_by[out] = made
                if name == "get" or any(self.is_data(v) for v in eqn.invars):
                    self.data.add(out)

    def semaphores(self, eqn: Any) -> set[Any]:
        """The semaphores a copy's start or wait names (dma_start and dma_wait take src, dst, semaphores, ...)."""
        return {self._ref(v) for v in eqn.invars if not _literal(v) and "sem" in str(getattr(v, "aval", ""))}

    def _enter(self, eqn: Any, subs: list[Any]) -> None:
        for _ in range(2):  # twice: what a loop carries into its next iteration
            for sub in subs:
                for outer, inner in _pairs(eqn.invars, sub):
                    self.made_by[inner] = self.of(outer)
                    if self.is_data(outer):
                        self.data.add(inner)
                    if not _literal(outer):
                        self.ref_of[inner] = self._ref(outer)
                self.walk(sub)
                for outer, inner in _tail(eqn.outvars, sub.outvars):
                    self.made_by[outer] = self.made_by.get(outer, _EMPTY) | self.of(inner)
                    if self.is_data(inner):
                        self.data.add(outer)


def is_product(eqn: Any, is_data: Any) -> bool:
    if eqn.primitive.name == "dot_general":
        return True
    return eqn.primitive.name == "mul" and len(eqn.invars) == 2 and all(is_data(v) for v in eqn.invars)


def _in_order(jaxpr: Any) -> Iterator[tuple[str, Any]]:
    """("start" | "wait" | "compute", equation), in program order, sub-jaxprs where they stand."""
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        subs = sub_jaxprs(eqn.params)
        for sub in subs:
            yield from _in_order(sub)
        if name == "dma_start":
            yield "start", eqn
        elif name.startswith("dma_wait"):
            yield "wait", eqn
        elif not subs:
            yield "compute", eqn


def idle_copies(jaxpr: Any, outputs: Sequence[Any]) -> dict[int, Any]:
    """For each copy start with no product into an output before the next wait (the kernel repeating
    at the next grid step), that wait's record of its line, keyed by id() of the start's record.
    `outputs` are the kernel jaxpr's variables for its output refs."""
    flow = _Flow(outputs)
    flow.walk(jaxpr)
    flow.walk(jaxpr)  # twice: the kernel repeats at the next grid step, with what its buffers hold
    order = list(_in_order(jaxpr))
    idle: dict[int, Any] = {}
    for at, (kind, eqn) in enumerate(order):
        if kind != "start":
            continue
        computed, semaphores = False, flow.semaphores(eqn)
        for later_kind, later in order[at + 1:] + order[:at]:
            # The copy's own wait: one on a semaphore it counts on (another copy's wait, such as a weight
            # loaded with sync_copy while it flies, is no wait for it).
            if later_kind == "wait" and (not semaphores or semaphores & flow.semaphores(later)):
                if not computed:
                    idle[id(eqn.source_info)] = later.source_info
                break
            computed = computed or (later_kind == "compute" and id(later) in flow.useful)
    return idle
