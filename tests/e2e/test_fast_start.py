"""What makes a check start and compile fast: tested XLA flags only, no GPU interpreter, a quick exit."""

from __future__ import annotations

from pathlib import Path

from pallas_puzzles.course.reader import load_course
from pallas_puzzles.worker.client import Worker


def test_the_checker_process_ends_cleanly_after_stop(tmp_path):
    course = load_course()
    with Worker("interpret") as worker:
        worker.start()
        process = worker._process
        assert worker.check(course.find("constant_add"),
                            Path(__file__).parents[2] / "solutions" / course.find("constant_add").file).passed
    assert process is not None and process.wait(timeout=5) == 0
