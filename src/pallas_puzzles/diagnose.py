"""Turn an exception from a learner's kernel into a Finding in Pallas terms.

The learner sees their own frames and one plain-language line about what the
error usually means in Pallas; JAX's internal frames are never shown.
"""

from __future__ import annotations

import re
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any

from pallas_puzzles.results import Finding, SourceLine
from pallas_puzzles.strict import CallRecord, StrictSession, StrictViolation, make_line

# (pattern in the error text, what it usually means in Pallas)
PLAIN_MEANINGS: tuple[tuple[str, str], ...] = (
    (r"Invalid shape for `swap`",
     "A value stored into a ref must have the shape of what it replaces (here the whole block): the "
     "right-hand side has another shape. Check the broadcast ([:, None] makes a column, [None, :] a row)."),
    (r"Invalid dtype for `swap`",
     "A value stored into a ref must have the ref's dtype; cast it with .astype(ref.dtype)."),
    (r"Out of bound slice",
     "A pl.ds(start, size) slice reaches past the end of a ref: start + size must not exceed that "
     "dimension of the block."),
    (r"captures? constants|closes? over|Pallas kernels? .*consts",
     "Kernels cannot close over arrays: pass them to pallas_call as inputs, or build them inside "
     "the kernel with jnp."),
    (r"Incompatible shapes for broadcasting|could not be broadcast|shapes must be equal|must have the same shape|"
     r"Shapes must be|do not match|mismatch",
     "Two values in the kernel have shapes that do not line up. Print them with .shape; for an outer "
     "operation index one side with [:, None] and the other with [None, :]."),
    (r"contracting dimension|dot_general requires",
     "The inner dimensions of a jnp.dot differ: an (m, k) block can only be multiplied by a (k, n) block."),
    (r"TracerBoolConversion|ConcretizationType|TracerIntegerConversion|concrete value",
     "Python control flow (if, for ... in range, int()) met a traced value such as program_id or "
     "loaded data. Inside a kernel use pl.when, jnp.where or lax.fori_loop instead."),
    (r"index_map",
     "An index_map must take one argument per grid axis and return one block index per block "
     "dimension."),
    (r"Advanced indexers|int indexing|Cannot do int indexing|gather",
     "Refs are indexed with ..., slices or pl.ds(start, size), not with arrays of indices."),
    (r"block.?shape|Block shape",
     "A BlockSpec's block_shape needs one entry per array dimension (None squeezes a dimension away)."),
    (r"program_id",
     "pl.program_id(axis) exists only for the axes of the grid passed to pallas_call."),
    (r"dtype|float0|cannot cast",
     "A value has a different dtype than the ref it is written to; cast it with .astype(ref.dtype)."),
)


def plain_meaning(text: str) -> str:
    for pattern, meaning in PLAIN_MEANINGS:
        if re.search(pattern, text, flags=re.IGNORECASE):
            return meaning
    return ""


def _same_file(a: str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return a == b


def _tracebacks(exc: BaseException) -> list[TracebackType]:
    seen: set[int] = set()
    out: list[TracebackType] = []
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if current.__traceback__ is not None:
            out.append(current.__traceback__)
        current = current.__cause__ or current.__context__
    return out


def learner_frames(exc: BaseException, learner_file: str) -> tuple[SourceLine, ...]:
    """The frames of the learner's file in an exception and its causes, outermost first."""
    lines: list[SourceLine] = []
    for tb in _tracebacks(exc):
        for frame, lineno in traceback.walk_tb(tb):
            if _same_file(frame.f_code.co_filename, learner_file):
                line = make_line(frame.f_code.co_filename, lineno, frame.f_code.co_name)
                if line not in lines:
                    lines.append(line)
    return tuple(lines)


def _source_info_lines(exc: BaseException, learner_file: str) -> tuple[SourceLine, ...]:
    """Learner lines recorded by JAX for the kernel operation that failed in the interpreter."""
    lines: list[SourceLine] = []
    for tb in _tracebacks(exc):
        for frame, _ in traceback.walk_tb(tb):
            info = frame.f_locals.get("source_info")
            frames = getattr(getattr(info, "traceback", None), "frames", None) or ()
            for f in frames:
                name = getattr(f, "file_name", "")
                if _same_file(name, learner_file):
                    line = make_line(name, int(getattr(f, "line_num", 0)), getattr(f, "function_name", ""))
                    if line not in lines:
                        lines.append(line)
    return tuple(reversed(lines)) if lines else ()


def _operand(calls: list[CallRecord], ref_name: str) -> tuple[CallRecord | None, Any]:
    for record in reversed(calls):
        for info in record.inputs + record.outputs:
            if info.name == ref_name:
                return record, info
    return (calls[-1] if calls else None), None


def _parse_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in re.findall(r"-?\d+", text))


def _from_callback_error(cb: BaseException, session: StrictSession) -> Finding:
    text = str(cb)
    point = session.grid_points[-1] if session.grid_points else None
    learner = _source_info_lines(cb, session.learner_file) or learner_frames(cb, session.learner_file)
    block = re.search(r'Out-of-bounds block index \(([^)]*)\) for (input|output) "([^"]+)" in iteration \(([^)]*)\)', text)
    if block:
        index, role, name, iteration = block.groups()
        record, info = _operand(session.calls, name)
        where = tuple(x for x in (getattr(info, "index_map_line", None), getattr(record, "call_line", None)) if x)
        return Finding(
            kind="oob-block",
            title=f"{role.capitalize()} {name}: block index ({index}) at grid point ({iteration}) lies outside the array.",
            explanation="The index_map returns block numbers, not element offsets; every block must start inside the array.",
            where=where, grid_point=_parse_tuple(iteration), array=name, detail=text,
        )
    if isinstance(cb, IndexError) and "read" in text:
        reading = re.search(r"reading \[(.*)\] but buffer has shape \(([^)]*)\)", text)
        span = reading.group(1) if reading else "?"
        shape = reading.group(2) if reading else "?"
        return Finding(
            kind="oob-read",
            title=f"Out-of-bounds read at grid point {point}: the kernel reads {_spans(span)} of a block of shape ({shape}).",
            explanation=(
                "Inside a kernel a ref is the block, not the whole array: indices run from 0 to the "
                "block size. Plain interpret mode would silently clamp this read and could hide the bug; "
                "on real hardware it reads whatever memory lies there."
            ),
            where=learner, grid_point=point, detail=text,
        )
    is_write = isinstance(cb, AssertionError) or "swap" in text
    if is_write:
        return Finding(
            kind="oob-write",
            title=f"Out-of-bounds write at grid point {point}: the kernel stores past the edge of a block.",
            explanation=(
                "A store like ref[pl.ds(start, size)] = value must fit inside the block: "
                "0 <= start and start + size <= the block's length along that dimension."
            ),
            where=learner, grid_point=point, detail=text,
        )
    if "Revisited block" in text:
        return Finding(
            kind="revisit",
            title="An output block is written again after other blocks were written in between.",
            explanation="Pallas writes an output block back when its index changes; returning to it later overwrites earlier results.",
            where=learner, grid_point=point, detail=text,
        )
    return Finding(
        kind="error",
        title=f"The kernel failed while running at grid point {point}: {type(cb).__name__}: {_first_line(text)}",
        explanation=plain_meaning(text), where=learner, grid_point=point, detail=text,
    )


def _spans(span: str) -> str:
    parts = re.findall(r"slice\((-?\d+), (-?\d+)", span)
    if not parts:
        return span
    return "[" + ", ".join(f"{a}:{b}" for a, b in parts) + "]"


def _first_line(text: str) -> str:
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return text.strip()


def diagnose(exc: BaseException, session: StrictSession) -> Finding:
    """Explain an exception raised while running one shape case."""
    if isinstance(exc, StrictViolation):
        return exc.finding
    if session.callback_errors:
        return _from_callback_error(session.callback_errors[0], session)
    text = str(exc)
    message = _first_line(text) if text else type(exc).__name__
    frames = learner_frames(exc, session.learner_file)
    return Finding(
        kind="error",
        title=f"{type(exc).__name__}: {message}",
        explanation=plain_meaning(f"{type(exc).__name__} {text}"),
        where=frames,
        detail=text,
    )


def syntax_finding(exc: SyntaxError, learner_file: str) -> Finding:
    line = exc.lineno or 0
    text = (exc.text or "").rstrip("\n")
    caret = ""
    if exc.offset and text:
        caret = " " * (exc.offset - 1 - (len(text) - len(text.lstrip()))) + "^"
    where = (SourceLine(file=exc.filename or learner_file, line=line, text=text.strip(), function=""),)
    return Finding(
        kind="syntax",
        title=f"Python cannot read your file: {exc.msg} (line {line}).",
        explanation="Fix this line (or the one just before it) and save again; nothing was run.",
        where=where, detail=caret,
    )


def import_finding(exc: BaseException, learner_file: str) -> Finding:
    text = str(exc)
    return Finding(
        kind="import",
        title=f"Your file failed while being imported: {type(exc).__name__}: {_first_line(text) if text else ''}",
        explanation=plain_meaning(text) or "Code at the top level of the file runs on import; the error is in the line below.",
        where=learner_frames(exc, learner_file),
        detail=text,
    )
