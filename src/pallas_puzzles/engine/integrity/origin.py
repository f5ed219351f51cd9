"""Where each array of a launcher comes from: the puzzle's inputs, a kernel, a constant, or XLA's arithmetic.

A launcher may arrange the data around its kernels (engine/integrity/vocabulary.py's layout: reshape,
transpose, slice, pad, a cast to a dtype the puzzle uses), and nothing more: every element of the answer
must be computed by a kernel. Reading the launcher's graph (engine/launcher_graph.py) from its inputs
forward, each array gets an Origin; the last operation that computed on the data outside a kernel
before it is its `step`, whose line (and those of the computations it builds on) the finding names.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pallas_puzzles.engine.integrity.vocabulary import CAST, INDEX_OPERANDS, LAYOUT, REORDERS
from pallas_puzzles.engine.launcher_graph import Value


@dataclass(frozen=True)
class Origin:
    data: bool  # made from the launcher's inputs (directly or through a kernel)
    kernel: bool  # some of its elements come out of a kernel
    foreign: bool  # some of its elements do not: an input passed through, a constant, padding
    step: Value | None = None  # the last computation on the data outside a kernel it depends on


CONSTANT = Origin(data=False, kernel=False, foreign=True)
INPUT = Origin(data=True, kernel=False, foreign=True)


@dataclass(frozen=True)
class Rules:
    """What this puzzle's launcher may do to the data besides layout."""

    dtypes: frozenset[str] = frozenset()  # casts to these are layout (the puzzle's own dtypes)
    allowed: frozenset[str] = frozenset()  # computing operations allowed on kernel outputs (`launcher_ops`)
    # The layout that is this puzzle's answer itself (answers.py), worked out only when a launcher rearranges
    # its data that way: most never do, and the spec then need not be traced.
    answer_layout: Callable[[], frozenset[str]] = frozenset

    @functools.cached_property
    def reorders(self) -> frozenset[str]:
        return self.answer_layout()


def _union(origins: list[Origin], step: Value | None) -> Origin:
    return Origin(data=any(o.data for o in origins), kernel=any(o.kernel for o in origins),
                  foreign=any(o.foreign for o in origins), step=step)


def _cast_target(value: Value) -> str:
    try:
        return str(np.dtype(value.params.get("new_dtype")))
    except TypeError:
        return str(value.params.get("new_dtype"))


class Origins:
    """The Origin of every array, worked out once (an array feeds many others)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self._known: dict[int, Origin] = {}

    def computations(self, step: Value) -> list[Value]:
        """`step` and every computation on the data it builds on, outside the kernels."""
        found, stack, seen = [], [step], set()
        while stack:
            value = stack.pop()
            if id(value) in seen or value.kind != "xla":
                continue
            seen.add(id(value))
            if self.of(value).step is value:
                found.append(value)
            stack.extend(value.inputs)
        return found

    def of(self, value: Value) -> Origin:
        """Iteratively (a launcher's unrolled Python loop can be thousands of operations deep)."""
        stack = [value]
        while stack:
            top = stack[-1]
            waiting = [v for v in top.inputs if id(v) not in self._known]
            if waiting and top.kind != "input":
                stack.extend(waiting)
                continue
            stack.pop()
            if id(top) not in self._known:
                self._known[id(top)] = self._compute(top, [self._known.get(id(v), CONSTANT) for v in top.inputs])
        return self._known[id(value)]

    def _compute(self, value: Value, ins: list[Origin]) -> Origin:
        if value.kind == "input":
            return INPUT
        if value.kind == "kernel":
            return Origin(data=any(o.data for o in ins), kernel=True, foreign=False)
        if value.kind == "constant" or not any(o.data for o in ins):
            return CONSTANT  # made from constants only (zeros, an iota): no data, nothing computed on it
        earlier = next((o.step for o in ins if o.step is not None), None)
        primitive = value.primitive
        index = INDEX_OPERANDS.get(primitive)
        positions = range(len(ins))
        at_index = set(positions[index]) if index is not None else set()
        if primitive == "join":  # a branch or a loop: which array it is may depend on the data
            choices = int(value.params.get("choices", len(ins)))
            at_index = set(range(choices, len(ins)))
        moved = [o for n, o in enumerate(ins) if n not in at_index]
        computed = Origin(data=True, kernel=any(o.kernel for o in ins), foreign=True, step=value)
        if any(ins[n].data for n in at_index):
            return computed  # positions (or a choice) taken from the data: indexing by value is computing
        if primitive == CAST:
            return _union(moved, earlier) if _cast_target(value) in self.rules.dtypes else computed
        if primitive in LAYOUT or primitive == "join":
            answer = primitive in REORDERS and primitive in self.rules.reorders
            return computed if answer else _union(moved, earlier)
        if primitive in self.rules.allowed and all(o.kernel and not o.foreign for o in moved if o.data):
            return _union([o for o in moved if o.data], earlier)  # the course's combine of kernel outputs
        return computed
