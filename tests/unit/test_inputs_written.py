"""A copy into an input's HBM buffer is a finding unless input_output_aliases hands that buffer to the kernel."""

from __future__ import annotations

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.engine.targets.pallas_call.explain import inputs_written
from pallas_puzzles.engine.targets.pallas_call.intercept.records import BlockInfo, CallRecord, Copy
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.source_line import SourceLine

X, Y, Z = 10, 11, 12  # the interpreter's HBM buffers: the inputs first, in order, then the outputs


def session_with(*writes: int, aliases: dict[int, int] | None = None) -> StrictSession:
    def block(name: str, role: str) -> BlockInfo:
        return BlockInfo(name, role, (8, 128), None, None, None)

    record = CallRecord("k", None, None, (), [block("x_hbm", "input"), block("y_hbm", "input")],
                        [block("z_hbm", "output")], aliases=aliases or {},
                        pipelines=[SourceLine("learner.py", 9, "pltpu.emit_pipeline(")])
    record.ledger.hbm_buffers = [X, Y, Z]
    for order, buffer in enumerate(writes):
        record.ledger.copies[order] = Copy(order, order, 0, 0, None, None, buffer)
    session = StrictSession(backend=INTERPRET, learner_file="learner.py")
    session.calls.append(record)
    return session


def test_a_copy_into_an_input_the_kernel_does_not_own_is_a_finding_naming_the_input() -> None:
    found = inputs_written.finding(session_with(Z, Y))
    assert found is not None and found.kind is FindingKind.INPUT_WRITTEN and found.array == "y_hbm"
    assert found.message.startswith("The pipeline at line 9 writes into y_hbm")  # no learner line: its pipeline


def test_copies_into_outputs_and_into_aliased_inputs_are_the_kernels_own() -> None:
    assert inputs_written.finding(session_with(Z)) is None
    assert inputs_written.finding(session_with(X, Z, aliases={0: 0})) is None
