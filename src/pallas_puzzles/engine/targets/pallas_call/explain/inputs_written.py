"""A copy into an input's HBM buffer that input_output_aliases does not hand to the kernel.

Without an alias, XLA keeps an input's buffer after the call (findings.toml, input-written, says why
that matters), so on a TPU such a copy corrupts the caller's data. The interpreter gives each input a
buffer of its own and throws it away after the call, so a kernel that did this passed whenever its
output was right (a result copied "in place" into x_hbm, then on into z_hbm). The interpreter
allocates a call's input buffers first, in order (records.Ledger.hbm_buffers), so each copy's
destination tells which input it writes.
"""

from __future__ import annotations

from pallas_puzzles.engine.targets.pallas_call.intercept.records import CallRecord, Copy
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import Finding


def _not_owned(record: CallRecord) -> dict[int, str]:
    """HBM buffer -> the name of the input it holds, for the inputs no alias hands to the kernel."""
    buffers = record.ledger.hbm_buffers[:len(record.inputs)]
    return {buffer: info.name for position, (buffer, info) in enumerate(zip(buffers, record.inputs))
            if record.n_prefetch + position not in record.aliases}


def _first_write(record: CallRecord) -> tuple[Copy, str] | None:
    inputs = _not_owned(record)
    return next(((copy, inputs[copy.writes_hbm]) for copy in record.ledger.started()
                 if copy.writes_hbm is not None and copy.writes_hbm in inputs), None)


def finding(session: StrictSession) -> Finding | None:
    """The first copy of the case's kernels into an input they do not own; None when there is none."""
    for record in session.calls:
        found = _first_write(record)
        if found is None:
            continue
        copy, name = found
        lines = copy.lines(session.learner_file)[:1]
        if lines:
            what = f"The copy at line {lines[0].line}"
        else:  # a copy an emit_pipeline started: Pallas's own line, not the learner's
            lines = tuple(dict.fromkeys(record.pipelines))
            numbers = " and ".join(str(line.line) for line in lines)
            what = (f"The pipeline at line {numbers}" if len(lines) == 1 else
                    f"One of the pipelines (lines {numbers})" if lines else "A copy")
        return Finding(FindingKind.INPUT_WRITTEN,
                       f"{what} writes into {name}, an input of the kernel: without input_output_aliases its "
                       f"buffer still belongs to the caller, and on a TPU the copy overwrites the caller's array. "
                       f"Copy into an output (or a scratch buffer) instead.", where=lines, array=name)
    return None
