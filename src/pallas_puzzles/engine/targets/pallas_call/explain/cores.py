"""Races between the TensorCores of one device, in the learner's terms.

On a chip with several TensorCores per device (a pl.kernel over a TensorCoreMesh, or a
pallas_call's parallel axis split over cores) each core moves HBM with copies of its own.
When the race detector finds two copies of *different* cores on one HBM window with nothing
ordering them, the copy ledger says which core started each and where:
- both write: the cores do the same work (their shares overlap), a race to write;
- one writes and the other reads: a core reads what another publishes before a barrier
  has made it safe (pltpu.core_barrier).
"""

from __future__ import annotations

from collections.abc import Sequence

from pallas_puzzles.engine.targets.pallas_call.intercept.records import Copy
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine


def _line(copy: Copy, learner_file: str) -> SourceLine | None:
    lines = copy.lines(learner_file)
    return lines[0] if lines else None  # the innermost: the copy itself, not the launcher around it


def _at(line: SourceLine | None) -> str:
    return f" (line {line.line})" if line is not None else ""


def race(accesses: Sequence[tuple[str, ...]], session: StrictSession, text: str) -> Finding | None:
    """A finding for two copies of different cores racing on one window; None for any other race.
    `accesses`: the race report's (kind, memory, who, core, frame) for each side."""
    ledger = session.calls[-1].ledger if session.calls else None
    if ledger is None or len(accesses) < 2:
        return None
    sides = [(kind, ledger.copies.get(int(who))) for kind, _space, who, _core, _frame in accesses[:2]]
    if any(copy is None for _, copy in sides):
        return None
    (first_kind, first), (second_kind, second) = sides
    assert first is not None and second is not None
    if first.core == second.core:
        return None
    space = accesses[0][1].upper()
    pipeline = session.calls[-1].pipelines[-1] if session.calls[-1].pipelines else None
    lines = {copy.id: _line(copy, session.learner_file) or pipeline for copy in (first, second)}
    where = tuple(sorted({line for line in lines.values() if line is not None}, key=lambda line: line.line))
    if first_kind == second_kind == "write":
        low, high = sorted((first.core, second.core))  # the same words whichever core the detector caught first
        return Finding(FindingKind.RACE,
                       f"Cores {low} and {high} both copy into the same {space} window"
                       f"{_at(where[0] if where else None)}: the cores' shares of the work overlap, and the last "
                       "copy to land wins.", where=where, detail=text)
    writer, reader = (first, second) if first_kind == "write" else (second, first)
    return Finding(FindingKind.CORE_BARRIER,
                   f"Core {reader.core} reads{_at(lines[reader.id])} the {space} window that core {writer.core} "
                   f"writes{_at(lines[writer.id])}, with nothing between them that makes one wait for the other: "
                   "the read may come first and find what the memory held before.",
                   where=tuple(line for line in (lines[reader.id], lines[writer.id]) if line is not None),
                   detail=text)
