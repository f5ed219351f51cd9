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


def _environment_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(entry.decode().split("=", 1) for entry in raw if b"=" in entry)


def test_a_checker_keeps_two_allocator_arenas_unless_the_user_chose(monkeypatch):
    """Freed memory stays in the arena of the thread that freed it: two arenas keep a checker smaller."""
    import pytest

    from pallas_puzzles import environment
    from pallas_puzzles.worker import launch

    if not Path("/proc/self/environ").exists():
        pytest.skip("reads a process's environment from Linux's /proc")
    for chosen, expected in ((None, launch.CHECKER_ARENAS), ("4", "4")):
        if chosen is None:
            monkeypatch.delenv(environment.ALLOCATOR_ARENAS.name, raising=False)
        else:
            monkeypatch.setenv(environment.ALLOCATOR_ARENAS.name, chosen)
        with Worker("interpret") as worker:
            worker.start()  # ready: the process runs the checker, with the environment it was given
            assert worker._process is not None
            assert _environment_of(worker._process.pid).get(environment.ALLOCATOR_ARENAS.name) == expected
