"""The Mosaic GPU target beyond the course's mistakes.toml: the promises of issue 20 that no single
chapter mistake shows (a hang stopped in seconds, a clean check after a failure, rules of
kernels outside the chapter, the GPU backend's compiler), and the chapter on an older jax.

Checks run in this process, as in test_mistakes.py; the chapter needs jax >= 0.12, so on the
jax 0.10 leg only the tests that need no GPU interpreter run.
"""

from __future__ import annotations

from helpers import COURSE

from pallas_puzzles.backends import GPU, INTERPRET, TPU, Mode
from pallas_puzzles.checking import support
from pallas_puzzles.engine import targets
from pallas_puzzles.findings import FindingKind

CHAPTER = [p for p in COURSE.puzzles if p.chapter == "mosaic_gpu"]
TMA_COPY = COURSE.find("tma_copy")


def test_the_chapter_is_seven_puzzles_on_its_own_target():
    assert [p.name for p in CHAPTER] == ["tma_copy", "ragged_rows", "tma_double_buffer", "wgmma_matmul",
                                         "pipeline_matmul", "warp_specialized", "hopper_attention"]
    assert {p.target for p in CHAPTER} == {"mosaic-gpu"}
    assert all(p.min_jax == "0.11" and p.backends == ("interpret", "gpu") for p in CHAPTER)
    assert all(len(p.hints) >= 3 and len(p.cases_for(INTERPRET)) >= 3 for p in CHAPTER)


def test_the_gpu_backend_runs_the_chapter_compiled_and_lower_refuses_it():
    puzzle = TMA_COPY
    assert targets.partner_name(puzzle.target, GPU, Mode.RUN) == "mosaic-gpu-device"
    assert targets.partner_name(puzzle.target, INTERPRET, Mode.RUN) == "mosaic-gpu"
    assert support.refusal(puzzle, GPU, have_jax="0.12.0.1") is None
    lowering = support.refusal(puzzle, TPU, Mode.LOWER, have_jax="0.12.0.1")
    assert lowering is not None and "not TPU kernels" in lowering.sentence
    assert support.refusal(puzzle, TPU, have_jax="0.12.0.1").kind is FindingKind.UNSUPPORTED


def test_the_jax_a_check_needs_is_that_of_what_runs_it():
    """Compiled on a GPU the chapter needs jax 0.11 (its solutions lower there); JAX's GPU interpreter needs
    0.12. A jax 0.11 refuses the interpreter alone, in one sentence that names the backend that still runs."""
    assert support.refusal(TMA_COPY, GPU, have_jax="0.11.2") is None
    assert support.refusal(TMA_COPY, None, have_jax="0.11.2") is None  # backend not known yet: a GPU may run it
    refused = support.refusal(TMA_COPY, INTERPRET, have_jax="0.11.2")
    assert refused is not None and refused.kind is FindingKind.JAX_TOO_OLD
    assert "jax 0.12 or newer on the interpret backend" in refused.sentence and "--backend gpu" in refused.sentence
    assert refused.sentence.count(". ") == 0
    older = support.refusal(TMA_COPY, None, have_jax="0.10.2")
    assert older is not None and "jax 0.11 or newer" in older.sentence and "backend" not in older.sentence
    assert support.refusal(TMA_COPY, GPU, have_jax="0.10.2").kind is FindingKind.JAX_TOO_OLD
    assert targets.get("mosaic-gpu").min_jax == "0.12" and targets.get("mosaic-gpu-device").min_jax == "0.11"


def test_an_older_jax_is_told_what_to_install_in_one_sentence():
    refused = support.refusal(TMA_COPY, INTERPRET, have_jax="0.10.2")
    assert refused is not None and refused.kind is FindingKind.JAX_TOO_OLD
    assert "jax 0.12 or newer" in refused.sentence and "Python 3.12" in refused.sentence
    assert refused.sentence.count(". ") == 0


class _Clock:
    """A stand-in for the detector's vector clocks: `a.ordered(b)` when a happened before b."""

    def __init__(self, before: tuple[_Clock, ...] = ()) -> None:
        self.before = before

    def ordered(self, other: _Clock) -> bool:
        return self is other or any(self.ordered(earlier) for earlier in other.before)


def test_a_read_racing_with_a_refill_is_a_slot_in_use_in_either_order():
    """What CI once saw (the consumer's read raced with the refill, the read found it), as the detector's
    data: the reader waited for an earlier copy into the same window, so the racing copy refilled a buffer
    still in use. A read that waited for no copy into the window races with the copy it skipped waiting for."""
    from pallas_puzzles.engine.targets.mosaic_gpu import faults, races
    from pallas_puzzles.engine.targets.mosaic_gpu.record import Access, Race

    first_copy, refill = _Clock(), _Clock()
    after_wait = _Clock(before=(first_copy,))  # the consumer waited on the first copy's barrier
    copy = Access(op="tma-load", writes=True, memory="SMEM", line=None)
    read = Access(op="read", writes=False, memory="SMEM", line=None)
    window = (0, 8)
    state = type("State", (), {"writes": {"k": [(0, first_copy, window, None), (0, refill, window, None)]},
                               "reads": {"k": []}})()
    notes = {id(first_copy): (copy, first_copy), id(refill): (copy, refill)}
    overlap = lambda a, b: a == b  # noqa: E731
    assert races.refilled(state, "k", window, after_wait, refill, notes, overlap)
    assert not races.refilled(state, "k", window, _Clock(), first_copy, notes, overlap)
    for found in (Race(read, copy, refill=True), Race(copy, read, refill=True)):
        assert faults.race_finding(found).kind is FindingKind.SMEM_SLOT_IN_USE
    for found in (Race(read, copy), Race(copy, read)):
        assert faults.race_finding(found).kind is FindingKind.SMEM_READ_BEFORE_WAIT
