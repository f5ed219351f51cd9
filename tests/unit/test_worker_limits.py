"""The long-lived checker process: reuse, crash recovery, time limits."""

from __future__ import annotations

from pathlib import Path

from helpers import COURSE

from pallas_puzzles.worker.client import Worker

REPO = Path(__file__).resolve().parents[2]


def test_a_failing_drain_thread_reaches_the_caller_instead_of_hanging(monkeypatch):
    import threading

    import pytest

    from pallas_puzzles.worker.pool import WorkerPool

    def broken_check(self, puzzle, file, fail_fast=True, timed_runs=0):
        raise BrokenPipeError("the pipe to the checker broke")

    monkeypatch.setattr(Worker, "check", broken_check)
    pool = WorkerPool("interpret", 2)  # never started: check is the only thing that runs
    names = ("constant_add", "constant_add_blocked", "outer_add")
    jobs = [(COURSE.find(n), REPO / "solutions" / COURSE.find(n).file) for n in names]
    outcome: dict[str, BaseException] = {}

    def consume() -> None:
        try:
            list(pool.check_in_order(jobs))
        except BaseException as exc:  # noqa: B036 - the test inspects whatever arrives
            outcome["error"] = exc

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "check_in_order hung after a drain thread failed"
    assert isinstance(outcome.get("error"), RuntimeError)
    assert "BrokenPipeError" in str(outcome["error"]) and "puzzle 1" in str(outcome["error"])
    with pytest.raises(RuntimeError):
        list(pool.check_in_order(jobs))


def test_a_pool_checks_on_its_first_checker_while_the_others_still_start(monkeypatch):
    """The first checker is often the one started early, half a second before the others: it takes jobs as
    soon as it is ready, and a slower one joins once it is."""
    import threading

    from pallas_puzzles.backends import INTERPRET
    from pallas_puzzles.results import CheckResult
    from pallas_puzzles.worker.pool import WorkerPool

    pool = WorkerPool("interpret", 2)
    first, second = pool.workers
    second_ready = threading.Event()
    checked_by: list[Worker] = []
    monkeypatch.setattr(Worker, "launch", lambda self: None)
    monkeypatch.setattr(Worker, "stop", lambda self: None)

    def wait_ready(self):
        if self is second:
            assert second_ready.wait(10)
        return INTERPRET

    def check(self, puzzle, file, fail_fast=True, timed_runs=0):
        checked_by.append(self)
        return CheckResult(number=puzzle.number, name=puzzle.name, file=str(file), backend="interpret", passed=True)

    monkeypatch.setattr(Worker, "wait_ready", wait_ready)
    monkeypatch.setattr(Worker, "check", check)
    assert pool.start() is INTERPRET, "started once the first checker is ready"
    jobs = [(p, p.solution_path) for p in COURSE.puzzles[:4]]
    assert all(r.passed for r in pool.check_in_order(jobs))
    assert checked_by == [first] * 4, "the second checker, still starting, took no job"
    second_ready.set()


def test_the_time_limit_is_the_puzzles_own_unless_overridden(monkeypatch):
    import pytest

    from pallas_puzzles.errors import UserError
    from pallas_puzzles.worker.limits import time_limit

    puzzle = COURSE.find("matmul_grid_k")
    monkeypatch.delenv("PALLAS_PUZZLES_TIME_LIMIT", raising=False)
    assert time_limit(puzzle) == puzzle.limit_seconds == max(12.0, 8 * puzzle.reference_seconds)
    monkeypatch.setenv("PALLAS_PUZZLES_TIME_LIMIT", "5")
    assert time_limit(puzzle) == 5.0
    for bad in ("soon", "0", "-3"):
        monkeypatch.setenv("PALLAS_PUZZLES_TIME_LIMIT", bad)
        with pytest.raises(UserError, match="positive number of seconds"):
            time_limit(puzzle)




def test_watch_ends_its_checkers_while_one_is_still_starting_in_the_background(monkeypatch):
    """Quitting right after a pass: the next chapter's checker may still be starting (prepare), and its
    failed start removes it from the checkers while they are being stopped."""
    from pallas_puzzles.worker import by_target

    stopped = []

    class Starting:
        def __init__(self, requested, mode, target, limits) -> None:
            self.target = target

        def ask_to_stop(self) -> None:
            pass

        def stop(self) -> None:
            stopped.append(self.target)
            workers.workers.pop("tpu-multichip", None)  # what the failed background start does meanwhile

    monkeypatch.setattr(by_target, "Worker", Starting)
    workers = by_target.WorkersByTarget("interpret")
    workers.workers = {"tpu-interpret": Starting("interpret", None, "tpu-interpret", None),
                       "tpu-multichip": Starting("interpret", None, "tpu-multichip", None)}
    workers.stop()
    assert stopped == ["tpu-interpret", "tpu-multichip"]  # every checker there when quitting began
