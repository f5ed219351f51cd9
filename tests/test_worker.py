"""The long-lived checker process: reuse, crash recovery, time limits."""

from __future__ import annotations

from pathlib import Path

from pallas_puzzles.metadata import load_course
from pallas_puzzles.worker import Worker

REPO = Path(__file__).resolve().parents[1]
COURSE = load_course()


def test_a_crash_is_reported_and_the_worker_replaced(tmp_path):
    puzzle = COURSE.find(1)
    crashing = tmp_path / puzzle.file
    crashing.write_text("import os\nos._exit(3)\n")
    with Worker("interpret") as worker:
        assert worker.start() == "interpret"
        result = worker.check(puzzle, crashing)
        assert not result.passed and result.finding.kind == "crash"
        assert "fresh one was started" in result.finding.title
        assert worker.restarts == 1
        again = worker.check(puzzle, REPO / "solutions" / puzzle.file)
        assert again.passed


def test_the_worker_is_reused_between_checks():
    puzzle = COURSE.find(1)
    with Worker("interpret") as worker:
        worker.start()
        first = worker._process.pid
        for _ in range(3):
            assert worker.check(puzzle, REPO / "solutions" / puzzle.file).passed
        assert worker._process.pid == first and worker.restarts == 0


def test_learner_prints_are_captured_not_mixed_into_our_output(tmp_path):
    puzzle = COURSE.find(1)
    noisy = tmp_path / puzzle.file
    noisy.write_text((REPO / "solutions" / puzzle.file).read_text().replace(
        "    z_ref[...] = x_ref[...] + 10.0",
        '    jax.debug.print("block starts with {}", x_ref[0])\n    z_ref[...] = x_ref[...] + 10.0',
    ))
    with Worker("interpret") as worker:
        worker.start()
        result = worker.check(puzzle, noisy)
    assert result.passed
    assert "block starts with" in result.printed
