"""Turning an exception from a learner's kernel into a finding in Pallas terms.

The learner sees their own lines and one plain-language line about what the
error usually means in Pallas; JAX's internal frames are never shown.
"""

from __future__ import annotations

import re

from pallas_puzzles.engine.file_faults import first_line
from pallas_puzzles.engine.learner_lines import learner_frames, recorded_lines
from pallas_puzzles.engine.meanings import plain_meaning, plain_message
from pallas_puzzles.engine.targets.pallas_call.explain import dma, writes
from pallas_puzzles.engine.targets.pallas_call.explain.launcher_lines import argument_line
from pallas_puzzles.engine.targets.pallas_call.intercept.negative_indices import NegativeIndex
from pallas_puzzles.engine.targets.pallas_call.intercept.records import BlockInfo, CallRecord
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession, StrictViolation
from pallas_puzzles.engine.targets.pallas_call.intercept.static_slices import StaticSliceOutOfBounds
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding
from pallas_puzzles.source_line import SourceLine

_BLOCK_INDEX = re.compile(
    r'Out-of-bounds block index \(([^)]*)\) for (input|output) "([^"]+)" in iteration \(([^)]*)\)')
_READ = re.compile(r"reading \[(.*)\] but buffer has shape \(([^)]*)\)")
_HBM_REF = re.compile(r"Buffers with a memory space of HBM or ANY cannot be referenced directly")
_STORE_SHAPE = re.compile(r"Invalid shape for `swap`\. Ref shape: \(([^)]*)\)\. Expected shape: \(([^)]*)\)\. "
                          r"Value shape: \(([^)]*)\)")


def _operand(calls: list[CallRecord], ref_name: str) -> tuple[CallRecord | None, BlockInfo | None]:
    for record in reversed(calls):
        for info in record.inputs + record.outputs:
            if info.name == ref_name:
                return record, info
    return (calls[-1] if calls else None), None


def _parse_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in re.findall(r"-?\d+", text))


def _spans(span: str) -> str:
    parts = re.findall(r"slice\((-?\d+), (-?\d+)", span)
    if not parts:
        return span
    return "[" + ", ".join(f"{a}:{b}" for a, b in parts) + "]"


def _from_callback_error(cb: BaseException, session: StrictSession) -> Finding:
    """An error raised inside the interpreter's callbacks, logged by JAX with its cause."""
    text = str(cb)
    point = session.grid_points[-1] if session.grid_points else None
    learner: tuple[SourceLine, ...] = (recorded_lines(cb, session.learner_file)
                                       or learner_frames(cb, session.learner_file))
    if isinstance(cb, NegativeIndex):
        kind = FindingKind.OOB_WRITE if cb.writing else FindingKind.OOB_READ
        return Finding(kind, f"Out-of-bounds {'write' if cb.writing else 'read'} at grid point {point}: {text}",
                       where=learner, grid_point=point, detail=text)
    block = _BLOCK_INDEX.search(text)
    if block:
        index, role, name, iteration = block.groups()
        record, info = _operand(session.calls, name)
        return Finding(
            FindingKind.OOB_BLOCK,
            f"{role.capitalize()} {name}: block index ({index}) at grid point ({iteration}) lies outside the array.",
            where=record.where(info) if record is not None else (), grid_point=_parse_tuple(iteration),
            array=name, detail=text,
        )
    if isinstance(cb, IndexError) and "read" in text:
        reading = _READ.search(text)
        span, shape = (reading.group(1), reading.group(2)) if reading else ("?", "?")
        return Finding(
            FindingKind.OOB_READ,
            f"Out-of-bounds read at grid point {point}: the kernel reads {_spans(span)} of a block of shape ({shape}).",
            where=learner, grid_point=point, detail=text,
        )
    if isinstance(cb, AssertionError) or "swap" in text:
        return Finding(
            FindingKind.OOB_WRITE,
            f"Out-of-bounds write at grid point {point}: the kernel stores past the edge of a block.",
            where=learner, grid_point=point, detail=text,
        )
    if "Revisited block" in text:
        return Finding(
            FindingKind.REVISIT,
            "An output block is written again after other blocks were written in between.",
            where=learner, grid_point=point, detail=text,
        )
    said = plain_message(f"{type(cb).__name__}: {text}", learner) or f"{type(cb).__name__}: {first_line(text)}"
    return Finding(
        FindingKind.ERROR, f"The kernel failed while running at grid point {point}: {said}",
        explanation=plain_meaning(f"{type(cb).__name__}: {text}"), where=learner, grid_point=point, detail=text,
    )


def _static_slice(exc: BaseException, session: StrictSession) -> Finding | None:
    """A static slice past a block's edge (see intercept/static_slices.py), in its own words."""
    current: BaseException | None = exc
    while current is not None and not isinstance(current, StaticSliceOutOfBounds):
        current = current.__cause__ or current.__context__
    if current is None:
        return None
    kind = FindingKind.OOB_WRITE if current.writing else FindingKind.OOB_READ
    return Finding(kind, str(current), where=learner_frames(current, session.learner_file), detail=str(current))


def _swapped_output(finding: Finding, session: StrictSession, expected: tuple[int, ...]) -> Finding | None:
    """An output block outside an out_shape whose dimensions are the spec's in another order."""
    for record in reversed(session.calls):
        for info in record.outputs:
            tail = (tuple(expected[len(expected) - len(info.array_shape):]) if len(expected) >= len(info.array_shape)
                    else ())
            if info.name == finding.array and sorted(tail) == sorted(info.array_shape) and tail != info.array_shape:
                return Finding(
                    FindingKind.SHAPE,
                    f"The output array {info.name} has shape {info.array_shape} (your out_shape), but the spec "
                    f"returns shape {tuple(expected)}: the same dimensions in another order, so the output's "
                    "BlockSpec asks for blocks outside it.",
                    where=_with(argument_line(record.call_line, "out_shape"), finding.where), array=info.name,
                    grid_point=finding.grid_point, detail=finding.message)
    return None


def wrong_out_shape(finding: Finding, session: StrictSession, expected: tuple[int, ...]) -> Finding | None:
    """A store or an output block that failed because out_shape differs from the spec's output, blamed on out_shape."""
    if finding.kind is FindingKind.OOB_BLOCK:
        return _swapped_output(finding, session, expected)
    if finding.kind not in (FindingKind.ERROR, FindingKind.OOB_WRITE) or "swap" not in finding.detail:
        return None
    for record in reversed(session.calls):
        for info in record.outputs:
            lead = len(expected) - len(info.array_shape)
            if lead < 0 or tuple(expected[lead:]) != info.array_shape:
                return Finding(
                    FindingKind.SHAPE,
                    f"The output array {info.name} has shape {info.array_shape} (your out_shape), but the spec "
                    f"returns shape {tuple(expected)}, so the kernel's store into it does not fit.",
                    where=_with(argument_line(record.call_line, "out_shape"), finding.where), array=info.name,
                    detail=finding.detail)
    return None


def _with(first: SourceLine | None, rest: tuple[SourceLine, ...]) -> tuple[SourceLine, ...]:
    return ((first,) if first is not None else ()) + tuple(line for line in rest if line != first)


def diagnose(exc: BaseException, session: StrictSession) -> Finding:
    """Explain an exception raised while running one shape case."""
    if isinstance(exc, StrictViolation):
        return exc.finding
    returning = writes.returned(str(exc), session.calls)  # named at the learner's return, not at the call
    if returning is not None:
        return returning
    copy_fault = dma.explain(exc, session)  # manual copies and semaphores (explain/dma.py)
    if copy_fault is not None:
        return copy_fault
    static = _static_slice(exc, session)
    if static is not None:
        return static
    if session.callback_errors:
        return _from_callback_error(session.callback_errors[0], session)
    text = str(exc)
    if _HBM_REF.search(text):  # said at the learner's line that reads or writes the HBM ref
        return Finding(FindingKind.HBM_COMPUTE,
                       "The kernel reads or writes a ref that lives in HBM as if it were in VMEM; a TensorCore "
                       "computes only on VMEM (copy it in with pltpu.sync_copy first).",
                       where=tuple(reversed(learner_frames(exc, session.learner_file))), detail=text)
    store = _STORE_SHAPE.search(text)
    if store:  # said in the learner's words, the store's own line first (not the pallas_call around it)
        where = learner_frames(exc, session.learner_file)
        return Finding(
            FindingKind.ERROR,
            f"A store puts a value of shape ({store.group(3)}) into a ref (or slice of one) of shape "
            f"({store.group(2)}): the two shapes must be the same.",
            explanation=plain_meaning(text), where=tuple(reversed(where)), detail=text)
    message = first_line(text) if text else type(exc).__name__
    where = learner_frames(exc, session.learner_file)
    return Finding(
        FindingKind.ERROR,
        plain_message(f"{type(exc).__name__}: {text}", where) or f"{type(exc).__name__}: {message}",
        explanation=plain_meaning(f"{type(exc).__name__} {text}"), where=where, detail=text,
    )
