"""Checkers forked from one process that has imported JAX (worker/zygote.py, worker/forked.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from pallas_puzzles.course.reader import load_course
from pallas_puzzles.worker.client import Worker
from pallas_puzzles.worker.forked import ForkedProcess
from pallas_puzzles.worker.pool import WorkerPool

SOLUTIONS = Path(__file__).parents[2] / "solutions"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checkers are forked on Linux only")


def _parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def _role(pid: int) -> str | None:
    """"zygote", "reaper" (what a retired zygote with checkers left execs), or None."""
    _, option, program, role = (_command_line(pid) + ["", "", "", ""])[:4]
    if option == "-m" and program == "pallas_puzzles.worker" and role == "zygote":
        return role
    if option == "-c" and "pallas_puzzles.worker.zygote" in program and role == "reaper":
        return role
    return None


def _is_zygote(pid: int) -> bool:
    return _role(pid) == "zygote"


def _becomes(pid: int, role: str, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while _role(pid) != role and time.monotonic() < deadline:
        time.sleep(0.02)
    return _role(pid) == role


def _maps(pid: int, part_of_path: str) -> bool:
    return part_of_path in Path(f"/proc/{pid}/maps").read_text()


def _passes(worker: Worker, name: str) -> bool:
    puzzle = load_course().find(name)
    return worker.check(puzzle, SOLUTIONS / puzzle.file).passed


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":  # ended; its parent has not reaped it yet
            return True
        time.sleep(0.05)
    return False


def test_a_pools_checkers_are_forked_from_one_zygote_and_check_alike():
    with WorkerPool("interpret", 2) as pool:
        pool.start()
        jobs = [(load_course().find(name), SOLUTIONS / load_course().find(name).file)
                for name in ("constant_add", "constant_add_blocked")]
        assert all(result.passed for result in pool.check_in_order(jobs))
        pids = [worker._process.pid for worker in pool.workers if worker._process is not None]
        assert len(set(pids)) == 2
        parents = {_parent_of(pid) for pid in pids}
        assert len(parents) == 1 and _role(parents.pop()) in ("zygote", "reaper")


def test_a_pools_zygote_hands_over_to_a_small_reaper_that_reports_its_checkers_ends():
    """A pool asks for all its checkers at once: its zygote then needs JAX no more, only to report ends."""
    with WorkerPool("interpret", 2) as pool:
        pool.start()
        zygote = _parent_of(pool.workers[0]._process.pid)
        # Retired the moment it had forked (the Retire waiting behind the last request), it lets go of
        # its import's code at once, not only when the reaper takes over a second later.
        deadline = time.monotonic() + 10
        while _role(zygote) == "zygote" and _resident_code_kib(zygote, "/jaxlib/") > 1024 \
                and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _role(zygote) == "zygote" and _resident_code_kib(zygote, "/jaxlib/") <= 1024
        jobs = [(load_course().find("constant_add"), SOLUTIONS / load_course().find("constant_add").file)] * 2
        assert all(result.passed for result in pool.check_in_order(jobs))
        first, second = (worker._process.pid for worker in pool.workers)
        reaper = _parent_of(first)
        assert _parent_of(second) == reaper and _becomes(reaper, "reaper")
        assert not _maps(reaper, "/jaxlib/") and _maps(first, "/jaxlib/")  # JAX is the checkers' alone
        os.kill(first, signal.SIGSEGV)
        assert pool.workers[0]._process.wait(timeout=10) == -signal.SIGSEGV  # reported by the reaper
        assert _passes(pool.workers[0], "constant_add")  # a restart: from a new zygote
        assert _is_zygote(_parent_of(pool.workers[0]._process.pid))
        assert _passes(pool.workers[1], "constant_add")  # the reaper's other checker goes on
        pool.workers[1].stop()
        assert _gone(reaper)  # it ends with its last checker


def test_a_cancelled_checker_is_replaced_by_a_fork_of_the_same_zygote():
    with Worker("interpret") as worker:
        worker.start()
        first = worker._process.pid
        zygote = _parent_of(first)
        worker.restart()  # what a cancelled, timed-out or crashed check ends in
        second = worker._process.pid
        assert second != first and _gone(first)
        assert _parent_of(second) == zygote and _is_zygote(zygote)
        assert _passes(worker, "constant_add")


def _resident_code_kib(pid: int, part_of_path: str) -> int:
    """Resident KiB of process `pid`'s code mappings (r-xp) of files whose path contains `part_of_path`."""
    total, code = 0, False
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if not fields[0].endswith(":"):
            code = fields[1] == "r-xp" and part_of_path in line
        elif code and fields[0] == "Rss:":
            total += int(fields[1])
    return total


def test_once_it_has_forked_the_zygote_keeps_none_of_the_code_it_ran_to_import_jax():
    with Worker("interpret") as worker:
        worker.start()
        checker = worker._process.pid
        zygote = _parent_of(checker)
        assert _passes(worker, "constant_add")
        assert _resident_code_kib(checker, "/jaxlib/") > 8 * 1024  # the checker runs jaxlib's code
        deadline = time.monotonic() + 10
        while _resident_code_kib(zygote, "/jaxlib/") > 1024 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _resident_code_kib(zygote, "/jaxlib/") <= 1024  # the zygote ran it only to import
        worker.restart()  # and forks alike afterwards
        assert _parent_of(worker._process.pid) == zygote and _passes(worker, "constant_add")


def test_a_checkers_end_by_a_signal_is_reported_by_the_zygote():
    puzzle = load_course().find("constant_add")
    with Worker("interpret") as worker:
        worker.start()
        assert isinstance(worker._process, ForkedProcess)
        pid = worker._process.pid
        os.kill(pid, signal.SIGSEGV)
        assert worker._process.wait(timeout=10) == -signal.SIGSEGV  # the zygote reports the status
        assert worker.check(puzzle, SOLUTIONS / puzzle.file).passed  # a fresh checker took over


def test_a_changed_environment_gets_a_new_zygote_and_the_old_one_ends_with_its_last_checker(monkeypatch):
    with Worker("interpret") as old:
        old.start()
        old_zygote = _parent_of(old._process.pid)
        monkeypatch.setenv("PALLAS_PUZZLES_TEST_MARKER", "1")  # JAX may read the environment on import
        with Worker("interpret") as new:
            new.start()
            new_zygote = _parent_of(new._process.pid)
            assert new_zygote != old_zygote and _is_zygote(new_zygote)
            assert _passes(old, "constant_add") and _passes(new, "constant_add")  # the old checker still works
            old.stop()
            assert _gone(old_zygote)  # retired: it ended once its last checker had


def test_a_zygote_without_checkers_retires_and_the_next_checker_comes_from_a_new_one():
    """A library user that stopped its checkers (a benchmark, a test) keeps no JAX process for long."""
    with Worker("interpret") as worker:
        worker.start()
        zygote = _parent_of(worker._process.pid)
    assert _gone(zygote, within=15)  # ZYGOTE's IDLE_SECONDS after its last checker ended
    with Worker("interpret") as worker:
        worker.start()
        assert _parent_of(worker._process.pid) != zygote and _is_zygote(_parent_of(worker._process.pid))
        assert _passes(worker, "constant_add")


def test_a_dead_zygote_is_replaced_and_its_checkers_end():
    with Worker("interpret") as worker:
        worker.start()
        checker = worker._process.pid
        zygote = _parent_of(checker)
        assert _is_zygote(zygote)
        os.kill(zygote, signal.SIGKILL)
        assert _gone(checker)  # a checker ends when its zygote does
        assert _passes(worker, "constant_add")  # the next check starts a new zygote
        assert _parent_of(worker._process.pid) != zygote


def test_with_the_fast_path_off_a_checker_is_started_fresh(monkeypatch):
    monkeypatch.setenv("PALLAS_PUZZLES_FAST", "0")
    with Worker("interpret") as worker:
        worker.start()
        assert isinstance(worker._process, subprocess.Popen)
        assert _parent_of(worker._process.pid) == os.getpid()


def test_a_zygote_with_more_threads_than_one_starts_checkers_fresh(monkeypatch):
    """A user's OPENBLAS_NUM_THREADS gives the zygote BLAS threads when numpy is imported: forking then
    could copy a lock mid-use, so each checker is a program of its own (still the zygote's child)."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("OpenBLAS starts no thread of its own on one core")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    with Worker("interpret") as worker:
        worker.start()
        pid = worker._process.pid
        assert _is_zygote(_parent_of(pid)) and not _is_zygote(pid)
        assert _command_line(pid)[2] == "pallas_puzzles.worker"
        assert _passes(worker, "constant_add")


def _processes_marked(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def test_a_command_leaves_no_process_behind_and_no_folder_in_use(workspace):
    """Its zygote (and so every checker) has ended when the command returns: a script may unmount or
    delete the workspace next. The zygote's own folder is the root, never the learner's."""
    marker = f"PALLAS_PUZZLES_TEST_MARKER={uuid.uuid4()}"
    output = workspace.parent / "output.txt"
    with output.open("w") as file:  # not a pipe, which the command's processes would all hold open
        subprocess.run([sys.executable, "-m", "pallas_puzzles", "verify", "1", "--backend", "interpret"],
                       cwd=workspace, stdout=file, stderr=subprocess.STDOUT, timeout=300,
                       env={**os.environ, **dict([marker.split("=", 1)])})
    assert _processes_marked(marker) == []
    assert "Fill in the lines marked TODO" in output.read_text()


def test_at_the_end_a_zygote_and_its_checkers_are_ended_without_waiting():
    """At a command's exit its zygote ends with every checker it still runs, even one it is still
    importing JAX for: the command waits for no import."""
    from pallas_puzzles.worker import forked

    with Worker("interpret") as worker:
        worker.start()
        running = worker._process.pid
        # Another environment: a second zygote, still importing JAX when the command ends.
        importing = forked.zygote_for("interpret", worker.mode, {**os.environ, "PALLAS_PUZZLES_TEST_MARKER": "2"})
        forked.end_all()
        assert importing.process.returncode == -signal.SIGKILL  # ended mid-import, not waited for
        assert _gone(running)
        worker._process = None  # ended above


def test_a_checker_stopped_before_it_was_forked_counts_as_ended_at_once_and_is_killed_once_it_exists():
    """Nobody waits for a zygote still importing JAX to fork a checker that is no longer wanted."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        process = ForkedProcess()
        process.kill()
        assert process.poll() == -signal.SIGKILL and process.wait(timeout=0) == -signal.SIGKILL
        process._started(sleeper.pid)
        assert sleeper.wait(timeout=10) == -signal.SIGKILL
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()
