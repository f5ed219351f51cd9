"""Watch's two checkers sharing a check (worker/split.py), in real checker processes: the verdict is one
checker's, whichever part a case ran in, and a part that crashes or is cancelled leaves a checker that
answers the next save."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from helpers import COURSE, skip_if_jax_too_old

from pallas_puzzles.findings import FindingKind
from pallas_puzzles.worker.by_target import WorkersByTarget
from pallas_puzzles.worker.client import CheckCancelled, Worker
from pallas_puzzles.worker.split import SharedChecker

PUZZLE = COURSE.find("ring_all_gather")  # three cases: 2, 5 and 8 devices
SOLUTION = PUZZLE.solution_path.read_text()

pytestmark = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="checks are shared on two cores or more")


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / PUZZLE.file
    path.write_text(text)
    return path


def _seen(result) -> tuple[object, ...]:
    return (result.passed, [(c.label, c.passed, [(f.kind, f.message, f.where) for f in c.findings])
                            for c in result.cases], [(f.kind, f.where) for f in result.findings],
            result.printed, result.skipped_cases)


@pytest.fixture(scope="module")
def shared():
    with WorkersByTarget("interpret") as workers:
        workers.start(PUZZLE.target)
        assert workers.wait_until_ready(PUZZLE.target, timeout=120)
        checker = workers.workers[PUZZLE.target]
        assert isinstance(checker, SharedChecker)
        yield workers, checker


@pytest.fixture(scope="module")
def alone():
    with Worker("interpret", target=PUZZLE.target) as worker:
        worker.start()
        yield worker


def test_a_shared_check_gives_one_checkers_verdict(shared, alone, tmp_path, monkeypatch):
    workers, checker = shared
    parts: list[object] = []
    second_check = checker.second.check
    monkeypatch.setattr(checker.second, "check", lambda *a, **k: parts.append(k.get("cases")) or second_check(*a, **k))
    noisy = _launcher_does('    print("devices", n)').replace(
        "def ring_all_gather(x", 'print("loaded")\n\n\ndef ring_all_gather(x', 1)
    only_last = SOLUTION.replace("grid=(n - 1,)", "grid=(min(n - 1, 4),)")  # fails with 8 devices only
    assert noisy != SOLUTION and only_last != SOLUTION
    for text in (noisy, only_last):
        file = _file(tmp_path, text)
        pid = checker.second._process.pid
        result = workers.check(PUZZLE, file)
        assert _seen(result) == _seen(alone.check(PUZZLE, file))
        assert checker.second._process.pid == pid  # the second checker ran its part, and lives on
        if text is noisy:  # the file's print once, the launcher's of every case in order
            assert result.passed and result.printed.count("loaded") == 1
            assert [line for line in result.printed.splitlines() if "devices" in line][-1] == "devices 8"
    assert not result.passed and [c.passed for c in result.cases] == [True, True, False]
    # each check gave the second checker the later cases (where it splits follows the cases' times)
    assert len(parts) == 2 and all(0 < p.start < p.stop == 3 for p in parts)


def test_a_crash_in_the_second_part_is_the_checks_and_the_next_save_is_answered(shared, alone, tmp_path):
    workers, checker = shared
    crashing = SOLUTION.replace("    n = lax.axis_size(\"x\")\n    return",
                                "    n = lax.axis_size(\"x\")\n    if n == 8:\n        import os\n        os._exit(3)\n"
                                "    return", 1)
    result = workers.check(PUZZLE, _file(tmp_path, crashing))
    assert not result.passed and result.finding.kind is FindingKind.CRASH and not result.cases
    assert "exit status 3" in result.finding.message
    again = workers.check(PUZZLE, _file(tmp_path, SOLUTION))  # the first checker alone, the second restarting
    assert again.passed and len(again.cases) == 3
    assert workers.wait_until_ready(PUZZLE.target, timeout=120)
    assert _seen(workers.check(PUZZLE, _file(tmp_path, SOLUTION))) == _seen(again)


def _launcher_does(code: str) -> str:
    """The solution, its launcher running `code` first (`n` is the number of devices)."""
    launch = "    n = lax.axis_size(\"x\")\n    return"
    return SOLUTION.replace(launch, launch.replace("    return", code + "\n    return"), 1)


@pytest.mark.parametrize("slow_when", ["True", "n == 8"])  # both parts running; the first done, the second not
def test_cancel_stops_the_check_at_once_and_the_next_check_runs(shared, tmp_path, slow_when):
    workers, checker = shared
    assert workers.wait_until_ready(PUZZLE.target, timeout=120)
    file = _file(tmp_path, _launcher_does(f"    if {slow_when}:\n        import time\n        time.sleep(30)"))
    outcome: list[object] = []
    thread = threading.Thread(target=lambda: outcome.append(_raised(lambda: workers.check(PUZZLE, file))))
    thread.start()
    time.sleep(3)
    started = time.monotonic()
    workers.cancel()
    thread.join(timeout=20)
    assert outcome and isinstance(outcome[0], CheckCancelled) and time.monotonic() - started < 10
    assert workers.check(PUZZLE, _file(tmp_path, SOLUTION)).passed


def test_a_failure_in_the_first_part_answers_without_waiting_for_the_second(shared, alone, tmp_path):
    workers, checker = shared
    assert workers.wait_until_ready(PUZZLE.target, timeout=120)
    file = _file(tmp_path, _launcher_does("    if n == 2:\n        raise ValueError('two devices')\n"
                                          "    if n == 8:\n        import time\n        time.sleep(6)"))
    second = checker.second._process.pid
    started = time.monotonic()
    result = workers.check(PUZZLE, file)
    assert time.monotonic() - started < 5 and checker.second.busy  # the second part sleeps on, unseen
    assert _seen(result) == _seen(alone.check(PUZZLE, file))
    assert [c.passed for c in result.cases] == [False] and result.skipped_cases == 2
    assert workers.check(PUZZLE, _file(tmp_path, SOLUTION)).passed  # the first checker alone meanwhile
    assert checker.second._process.pid == second  # the part nobody needed was left to finish, not killed


def _raised(call):
    try:
        return call()
    except BaseException as exc:  # what the check raised is the outcome under test
        return exc


GPU_PUZZLE = COURSE.find("hopper_attention")  # three cases; half of each is its CUDA lowering


def test_a_gpu_case_cut_in_two_gives_one_checkers_verdict(tmp_path):
    """Once a GPU puzzle's cases and their lowerings have been timed, a check may cut a case in two: one
    checker lowers it for CUDA, the other runs the rest of it. The verdict stays one checker's, whether
    the file passes or fails in the rest of the case cut."""
    skip_if_jax_too_old(GPU_PUZZLE)
    solution = GPU_PUZZLE.solution_path.read_text()
    unscaled = solution.replace("acc * alpha[:, None] + pv", "acc + pv", 1)  # the running sum never rescaled
    assert unscaled != solution
    with WorkersByTarget("interpret") as workers, Worker("interpret", target=GPU_PUZZLE.target) as alone:
        workers.start(GPU_PUZZLE.target)
        alone.start()
        assert workers.wait_until_ready(GPU_PUZZLE.target, timeout=120)
        checker = workers.workers[GPU_PUZZLE.target]
        assert isinstance(checker, SharedChecker)
        file = tmp_path / GPU_PUZZLE.file
        file.write_text(solution)
        assert workers.check(GPU_PUZZLE, file).passed  # times every case and its lowering
        costs, lowerings = checker._case_costs(GPU_PUZZLE, 3)
        assert all(0 < lowering < cost for cost, lowering in zip(costs, lowerings))
        parts: list[object] = []
        second_check = checker.second.check
        checker.second.check = lambda *a, **k: parts.append(k.get("cases")) or second_check(*a, **k)
        for text in (solution, unscaled):
            # times under which the first case is best cut: its lowering alone in the first part
            checker._costs[GPU_PUZZLE.name], checker._lowerings[GPU_PUZZLE.name] = [0.4, 0.1, 0.1], [0.25, 0.05, 0.05]
            file.write_text(text)
            result = workers.check(GPU_PUZZLE, file)
            assert _seen(result) == _seen(alone.check(GPU_PUZZLE, file))
        assert not result.passed and [c.passed for c in result.cases] == [False] and result.skipped_cases == 2
        assert len(parts) == 2 and all(p.starts_after_lowering and p.start == 0 for p in parts)
