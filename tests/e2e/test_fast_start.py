"""What makes a check start and compile fast: tested XLA flags only, no GPU interpreter, a quick exit."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_a_pools_checkers_are_all_told_to_stop_then_end_cleanly():
    """stop() tells every checker first, then waits: they end together, each on its own (exit 0), none
    killed after waiting for another."""
    from pallas_puzzles.worker.pool import WorkerPool

    with WorkerPool("interpret", 2) as pool:
        pool.start()
        for worker in pool.workers:
            assert pool._ready[id(worker)].wait(120)
        processes = [worker._process for worker in pool.workers]
        events = []
        for number, worker in enumerate(pool.workers):
            for name in ("ask_to_stop", "stop"):
                original = getattr(worker, name)
                setattr(worker, name, lambda original=original, event=(name, number): (events.append(event),
                                                                                       original())[1])
        pool.stop()
    assert events[:3] == [("ask_to_stop", 0), ("ask_to_stop", 1), ("stop", 0)]  # all told, then waited for
    assert [process.returncode for process in processes] == [0, 0]


def _environment_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(entry.decode().split("=", 1) for entry in raw if b"=" in entry)


@pytest.mark.parametrize("variable, default", [
    ("ALLOCATOR_ARENAS", "CHECKER_ARENAS"),  # freed memory stays in the arena of the thread that freed it
    ("BLAS_THREADS", "CHECKER_BLAS_THREADS"),  # more BLAS threads made two checkers side by side slower
])
def test_a_checker_starts_with_our_default_unless_the_user_chose(monkeypatch, variable, default):
    from pallas_puzzles import environment
    from pallas_puzzles.worker import launch

    if not Path("/proc/self/environ").exists():
        pytest.skip("reads a process's environment from Linux's /proc")
    name = getattr(environment, variable).name
    for chosen, expected in ((None, getattr(launch, default)), ("4", "4")):
        if chosen is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, chosen)
        with Worker("interpret") as worker:
            worker.start()  # ready: the process runs the checker, with the environment it was given
            assert worker._process is not None
            assert _environment_of(worker._process.pid).get(name) == expected
