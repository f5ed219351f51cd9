"""Memory read before it was written where the launcher's output alone does not show it.

Two places the comparison with the spec cannot see into:
- a pallas_call output that the launcher goes on to combine (partials summed with jnp.sum): the
  spec's output is the combination, so the call's own output is examined instead, the sentinel
  still in it (never written) or a probe's pre-fill showing through (read before written);
- scratch, a carry or an accumulator, read before its first store: one more probe run changes
  only what scratch holds at first (padding keeps its value), and a result that follows it names
  the scratch rather than the padding.
Both run only for a case that failed, and only where the cause could be one of these.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from pallas_puzzles.engine.targets.pallas_call.explain.launcher_lines import (
    argument_line,
    guarding_whens,
    read_lines,
    store_lines,
)
from pallas_puzzles.engine.targets.pallas_call.intercept.records import BlockInfo, CallRecord
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession
from pallas_puzzles.engine.targets.pallas_call.probe import PROBE_FILL, probe_poison
from pallas_puzzles.engine.unwritten import fill_for
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine

Probe = Callable[..., Any]  # engine.probe.rerun with the case bound: returns a Rerun or None


def _lines(*groups: Any) -> tuple[SourceLine, ...]:
    return tuple(dict.fromkeys(line for group in groups for line in group if line is not None))


def _raw(rerun: Any, position: int, shape: tuple[int, ...]) -> np.ndarray | None:
    """Output `position` of the last pallas_call of a probe run, when it ran as the original did."""
    calls = rerun.calls if rerun is not None else []
    results = calls[-1].results if calls else ()
    value = np.asarray(results[position]) if position < len(results) else None
    return value if value is not None and value.shape == shape else None


def _unwritten_output(record: CallRecord, info: BlockInfo, count: int) -> Finding:
    return Finding(
        FindingKind.MISMATCH_UNWRITTEN,
        f"{count} element(s) of {info.name}, the output of pallas_call {record.kernel_name} that the launcher "
        f"goes on to use, were never written.",
        where=_lines((argument_line(record.call_line, "grid"), info.index_map_line)), array=info.name)


def behind_the_launcher(session: StrictSession, probe: Probe) -> Finding | None:
    """A fault in the last pallas_call's own output, when the launcher returns something made from it."""
    record = session.calls[-1] if session.calls else None
    if record is None:
        return None
    for position, (info, result) in enumerate(zip(record.outputs, record.results)):
        value = np.asarray(result)
        sentinel = fill_for(value.dtype, session.sentinel)
        unwritten = value == sentinel if sentinel is not None else np.zeros(value.shape, bool)
        if not unwritten.any():
            continue
        again = _raw(probe(poison=probe_poison(session.poison), sentinel=PROBE_FILL), position, value.shape)
        if again is None:
            return None
        read_first = unwritten & (again != np.asarray(PROBE_FILL, again.dtype))
        stored = store_lines(record.kernel_line, info.name)
        if read_first.any():
            return Finding(
                FindingKind.READ_BEFORE_WRITTEN,
                f"{info.name} is read before it is written: {int(read_first.sum())} element(s) of the output of "
                f"pallas_call {record.kernel_name} were built on what its blocks held before (here a huge leftover "
                "value), not on zero, and the launcher went on to use them.", where=stored, array=info.name)
        whens = guarding_whens(record.kernel_line, info.name)
        if whens:
            return Finding(
                FindingKind.NEVER_TRUE_WHEN,
                f"{int(unwritten.sum())} element(s) of {info.name} were never written: every store into it is "
                f"guarded by the pl.when at line {whens[0].line}, whose condition was never true where needed.",
                where=_lines(whens, stored), array=info.name)
        return _unwritten_output(record, info, int(unwritten.sum()))
    return None


def _leftover(poison: float) -> str:
    if math.isnan(poison):
        return "NaN"
    return "a huge leftover value" if abs(poison) >= 1e5 else f"a leftover {poison:g}"


def scratch_read_first(session: StrictSession, probe: Probe, got: np.ndarray, bad: np.ndarray,
                       output: str) -> Finding | None:
    """Scratch read before its first store, when changing only what it first holds changes the wrong elements."""
    record = session.calls[-1] if session.calls else None
    scratch = [s for s in (record.scratch if record is not None else ()) if "float" in s.dtype]
    if record is None or not scratch:
        return None
    rerun = probe(scratch_fill=0.0 if math.isnan(session.poison) else -session.poison)
    if rerun is None or rerun.output.shape != got.shape or np.array_equal(rerun.output[bad], got[bad], equal_nan=True):
        return None
    names = " or ".join(s.name for s in scratch)
    reads = [line for s in scratch for line in read_lines(record.kernel_line, s.name)]
    return Finding(
        FindingKind.READ_BEFORE_WRITTEN,
        f"{names} is read before it is written: {int(bad.sum())} element(s) of {output} are wrong, and change when "
        f"only what the scratch buffer holds at first changes (here {_leftover(session.poison)}; "
        "on hardware, whatever an earlier kernel left there).",
        where=_lines(reads[:2], (argument_line(record.call_line, "scratch_shapes"),)), array=scratch[0].name)
