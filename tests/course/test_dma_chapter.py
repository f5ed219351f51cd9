"""The manual-DMA chapter's machinery: min_jax, stalled semaphores, the copy hooks."""

from __future__ import annotations

from pathlib import Path

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.engine.targets.pallas_call.intercept.dma_watch import STALL_SECONDS
from pallas_puzzles.findings import FindingKind

REPO = Path(__file__).resolve().parents[2]


def test_a_never_signalled_wait_stops_fast_and_names_the_wait(tmp_path):
    puzzle = load_course().find("dma_copy")
    source = (REPO / "solutions" / puzzle.file).read_text()
    learner = tmp_path / puzzle.file
    learner.write_text(source.replace("    copy_in.start()\n", "", 1))
    result = check_puzzle(puzzle, learner, INTERPRET)
    finding = result.first_failure.finding
    assert finding.kind is FindingKind.SEMAPHORE_STALL
    assert [line.text for line in finding.where] == ["copy_in.wait()"]
    assert result.seconds < STALL_SECONDS + 10 < puzzle.limit_seconds
    # The checker is usable again at once: the next check of the same process passes.
    assert check_puzzle(puzzle, REPO / "solutions" / puzzle.file, INTERPRET).passed


def test_copy_hooks_are_transparent_outside_a_check():
    import jax.numpy as jnp
    from jax.experimental.pallas import tpu as pltpu

    from pallas_puzzles.engine.targets.pallas_call.intercept import dma_watch

    dma_watch.install()
    dma_watch.install()  # idempotent: wrappers are not stacked
    assert pltpu.make_async_copy.__wrapped__.__name__ == "make_async_copy"
    # No session active: a shape mismatch is left to JAX (here: descriptors are built lazily).
    assert pltpu.make_async_copy(jnp.zeros((2, 8)), jnp.zeros((4, 8)), None) is not None


def test_a_stalled_wait_in_the_worker_is_a_finding_and_the_worker_carries_on(tmp_path):
    """What watch mode sees: a semaphore-stall finding well inside the time limit, the same worker reused."""
    from pallas_puzzles.worker.client import Worker

    puzzle = load_course().find("paged_gather")
    learner = tmp_path / puzzle.file
    learner.write_text((REPO / "solutions" / puzzle.file).read_text()
                       .replace("copy(s).wait()", "copy(0).wait()"))
    with Worker("interpret") as worker:
        worker.start()
        first = worker._process.pid
        stalled = worker.check(puzzle, learner)
        assert stalled.first_failure.kind is FindingKind.SEMAPHORE_STALL
        assert stalled.seconds < puzzle.limit_seconds
        assert worker.check(puzzle, REPO / "solutions" / puzzle.file).passed
        assert worker._process.pid == first and worker.restarts == 0


def test_a_copy_overrun_names_the_copy_before_the_launcher(tmp_path):
    from helpers import MISTAKES, build_mistake

    mistake = next(m for m in MISTAKES if m.name == "p25_copy_overruns")
    result = check_puzzle(load_course().find("dma_copy"), build_mistake(mistake, tmp_path), INTERPRET)
    finding = result.first_failure.finding
    assert finding.kind is FindingKind.DMA_OVERRUN
    assert mistake.line in finding.where[0].text  # the copy's line leads, not the pallas_call it was traced from
