"""What a puzzle's answer is made of, read from its spec: the rules its launcher is judged by.

Most answers compute (an addition, a sum, a matrix product), and a launcher may then arrange the data
as it likes. Where the spec only rearranges its inputs (a transpose, a roll round a ring), that
rearrangement is the puzzle: the launcher may not do it outside the kernel. The spec is traced once
per shape (jax.make_jaxpr, nothing compiled) and read with the launcher's own rules.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.engine import specs
from pallas_puzzles.engine.integrity.origin import Origins, Rules
from pallas_puzzles.engine.integrity.vocabulary import REORDERS
from pallas_puzzles.engine.launcher_graph import Reader, Value, nbytes

Signature = tuple[tuple[tuple[int, ...], str], ...]


def rules(puzzle: Puzzle, inputs: Sequence[Any], expected: Any) -> Rules:
    """The launcher rules of one shape case: its dtypes, the course's allowed operations, the answer's own
    rearrangements."""
    signature = tuple((tuple(a.shape), str(a.dtype)) for a in inputs)
    dtypes = frozenset({str(a.dtype) for a in inputs} | {str(expected.dtype)})
    return Rules(dtypes=dtypes, allowed=frozenset(puzzle.launcher_ops),
                 answer_layout=lambda: _reorders(specs.spec_module(puzzle).spec, signature, dtypes))


@functools.cache
def _reorders(spec: Callable[..., Any], signature: Signature, dtypes: frozenset[str]) -> frozenset[str]:
    """The rearrangements the spec's answer is made of, when it computes nothing; else none."""
    import jax

    try:
        closed = jax.make_jaxpr(spec)(*(jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in signature))
    except Exception:  # a spec that needs concrete values: judge the launcher by the general rules
        return frozenset()
    args = [Value("input", nbytes(v.aval)) for v in closed.jaxpr.invars]
    graph = Reader("").read(closed.jaxpr, args)
    origins = Origins(Rules(dtypes=dtypes))
    if any(origins.of(out).step is not None or not origins.of(out).data for out in graph.outputs):
        return frozenset()
    used: set[str] = set()
    stack, seen = list(graph.outputs), set()
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if value.primitive in REORDERS:
            used.add(value.primitive)
        stack.extend(value.inputs)
    return frozenset(used)
