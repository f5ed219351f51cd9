"""What the launcher moves through HBM outside its pallas_calls: the XLA operations around them.

The cost model counts what each pallas_call's pipeline and copies move. Work a launcher does in
plain jnp (a scaling before the kernel, a normalisation after it, a jnp.stack of the inputs)
runs in XLA, which reads its operands from HBM and writes its results back; that is traffic
too. The launcher is traced once at the case's shapes (launcher_trace.py: the pallas_calls
replaced by stand-ins, nothing compiled or run) and its graph (engine/launcher_graph.py) is read
with a model of perfect fusion, a lower bound on what XLA moves:
- every array that leaves XLA's hands (a pallas_call operand, or what the launcher returns) is
  written once, unless it is only a view of an array already in HBM (a reshape, a squeeze);
- every array in HBM (a launcher input, a pallas_call output) that XLA computes from is read
  once, or only the part a slice takes;
- everything in between stays in registers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.engine.launcher_graph import Graph, Value
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession
from pallas_puzzles.engine.targets.pallas_call.launcher_trace import trace
from pallas_puzzles.perf.launcher import LauncherTraffic, XlaStep
from pallas_puzzles.source_line import SourceLine

VIEWS = frozenset({"reshape", "squeeze", "expand_dims", "copy", "copy_p", "join"})  # no data moves (a bitcast)
SLICES = frozenset({"slice", "dynamic_slice", "gather"})  # read only the part they take


def _maker(value: Value) -> Value:
    """What really holds the data of `value`: the array under a chain of views."""
    while value.kind == "xla" and value.primitive in VIEWS and value.inputs:
        value = value.inputs[0]
    return value


def _reads(sink: Value) -> dict[int, tuple[Value, int, SourceLine | None]]:
    """The arrays in HBM that XLA reads to compute `sink`: id -> (array, bytes read, the reading line)."""
    found: dict[int, tuple[Value, int, SourceLine | None]] = {}
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


def _steps(sinks: list[tuple[Value, str]]) -> tuple[XlaStep, ...]:
    read: dict[int, tuple[Value, int, SourceLine | None]] = {}
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


def traffic(graph: Graph) -> LauncherTraffic:
    """The launcher's XLA traffic, read from its traced graph."""
    sinks = [(value, f"that pallas_call {n + 1} reads") for value, n in graph.operands]
    sinks += [(value, "that the launcher returns") for value in graph.outputs]
    return LauncherTraffic(_steps(sinks))


def measure(entry: Callable[..., Any], inputs: Sequence[np.ndarray], puzzle: Puzzle,
            case: StrictSession) -> LauncherTraffic | None:
    """The launcher's XLA traffic at these inputs' shapes; None when it cannot be traced here."""
    graph = trace(entry, inputs, [item.name for item in puzzle.inputs], case).graph
    return traffic(graph) if graph is not None else None
