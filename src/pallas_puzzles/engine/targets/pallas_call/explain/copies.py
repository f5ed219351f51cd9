"""Findings about manual copies that the copy ledger (intercept/dma_ledger.py) can explain:
a copy overtaken by another on its semaphore, and an output copy nobody waited for."""

from __future__ import annotations

from pallas_puzzles.engine.learner_lines import info_lines
from pallas_puzzles.engine.targets.pallas_call import jax_private
from pallas_puzzles.engine.targets.pallas_call.intercept.records import Copy, Ledger
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine


def _first(copy: Copy, learner_file: str) -> SourceLine | None:
    lines = copy.lines(learner_file)
    return lines[0] if lines else None


def at_line(line: SourceLine | None) -> str:
    """' at line N', or nothing when the line is unknown: for 'the copy started at line N'."""
    return f" at line {line.line}" if line is not None else ""


NEVER_STARTED = "is never started (a descriptor alone moves nothing)"


def idle_copy(session: StrictSession) -> SourceLine | None:
    """Where the kernel made a copy descriptor it never started or waited on (a descriptor moves nothing)."""
    return next((line for made, line in session.descriptors if not jax_private.copy_descriptor_used(made)), None)


def never_started(line: SourceLine, devices: int = 0) -> Finding:
    """A copy described at `line` and never started, behind output nothing wrote."""
    return Finding(FindingKind.MISMATCH_UNWRITTEN,
                   f"The copy made at line {line.line} {NEVER_STARTED}, so what it should have written was never "
                   "written.",
                   explanation="make_async_copy and make_async_remote_copy only describe a copy: .start() sets it "
                               "going, and a .wait() (or wait_recv/wait_send) waits for it.",
                   where=(line,), devices=devices)


def first_overtaken(ledger: Ledger) -> Copy | None:
    """The first copy still in flight after a wait on its semaphore took a newer copy's bytes."""
    return next((c for c in ledger.started() if c.overtaken_by is not None and not c.landed), None)


def overtaken(late: Copy, learner_file: str, reader: SourceLine | None, reading: bool, detail: str) -> Finding:
    """`late` was still in flight when a wait on its semaphore returned, ended by a newer copy."""
    assert late.overtaken_by is not None
    started, other = _first(late, learner_file), _first(late.overtaken_by, learner_file)
    waited = info_lines(late.overtaking_wait, learner_file)[:1]
    if reader is not None:
        head = (f"Line {reader.line} {'reads' if reading else 'writes'} a buffer before the copy "
                f"started{at_line(started)} into it had landed")
    else:
        head = f"The copy started{at_line(started)} was still in flight after the wait meant for it"
    return Finding(
        FindingKind.DMA_WRONG_COPY,
        f"{head}: the wait{at_line(waited[0] if waited else None)} was ended by the bytes of another copy on the "
        f"same semaphore, started{at_line(other)}.",
        where=tuple(dict.fromkeys(line for line in (reader, *waited, started, other) if line is not None)),
        detail=detail)


def output_not_waited(copy: Copy, learner_file: str, fallback: tuple[SourceLine, ...], detail: str) -> Finding:
    """A copy into an output in HBM that the pipeline read back at kernel exit, unwaited."""
    line = _first(copy, learner_file)
    return Finding(
        FindingKind.DMA_NOT_WAITED,
        f"The copy started{at_line(line)} into an output left in HBM was never waited on: Pallas reads the output "
        "when the kernel ends, whether or not the copy has landed.",
        where=(line,) if line is not None else fallback, detail=detail)
