"""The commonest first mistake, in the learner's words: a kernel that hands its result back instead of
storing it into its output ref (it `return`s the value, or assigns `z_ref = value`).

Pallas itself says the first in terms of the function it was given (on the interpreter, the checker's
own wrapper around the kernel) and at the pallas_call line; the second is no error at all, only an
output never written. Both are named here at the learner's line, with the store to write instead.
"""

from __future__ import annotations

import re

from pallas_puzzles.engine.targets.pallas_call.explain.launcher_lines import rebinding_lines, return_lines
from pallas_puzzles.engine.targets.pallas_call.intercept.records import CallRecord
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding

RETURNS_NONE = "should return None"  # Pallas's words (pallas_call.py and mpmd.py, jax 0.10.2 and 0.12.0.1)
HOW = ("A kernel's result leaves through its output ref: the kernel returns nothing and stores into the "
       "ref's block with {ref}[...] = value (or a slice of it). A name assigned inside the kernel, or a "
       "value returned, never reaches the output.")


def _output_name(record: CallRecord) -> str:
    return record.outputs[0].name if record.outputs else "z_ref"


def returned(text: str, calls: list[CallRecord]) -> Finding | None:
    """Pallas refused a kernel that returns a value: the learner's `return` line, not the call's."""
    if RETURNS_NONE not in text or not calls:
        return None
    record = calls[-1]
    lines = return_lines(record.kernel_line)
    if not lines:
        return None
    ref = _output_name(record)
    where = f" at {record.kernel_line.file}:{record.kernel_line.line}" if record.kernel_line is not None else ""
    detail = re.sub(r" at \S+:\d+ (?=should return None)", where + " ", text)  # not the checker's wrapper
    return Finding(FindingKind.ERROR, f"Your kernel {record.kernel_name} returns a value at line {lines[0].line}: "
                   f"a kernel returns nothing. Store the value into its output ref instead: {ref}[...] = ...",
                   explanation=HOW.format(ref=ref), where=lines, detail=detail)


def rebound(record: CallRecord, ref: str, unwritten: int) -> Finding | None:
    """Output elements never written because the kernel rebinds the output ref's name to a value."""
    lines = rebinding_lines(record.kernel_line, ref)
    if not lines:
        return None
    return Finding(FindingKind.MISMATCH_UNWRITTEN,
                   f"{unwritten} element(s) of {ref} were never written: line {lines[0].line} assigns a new value to "
                   f"the name {ref}, which makes it a plain variable and leaves the output untouched. Store into the "
                   f"ref instead: {ref}[...] = ...", explanation=HOW.format(ref=ref), where=lines, array=ref)
