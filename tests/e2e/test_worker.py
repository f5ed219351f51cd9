"""The long-lived checker process: reuse, crash recovery, time limits."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from helpers import COURSE

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.worker.client import Worker

REPO = Path(__file__).resolve().parents[2]


def test_a_crash_is_reported_and_the_worker_replaced(tmp_path):
    puzzle = COURSE.find("constant_add")
    crashing = tmp_path / puzzle.file
    crashing.write_text("import os\nos._exit(3)\n")
    with Worker("interpret") as worker:
        assert worker.start() is INTERPRET
        result = worker.check(puzzle, crashing)
        assert not result.passed and result.finding.kind is FindingKind.CRASH
        assert "fresh one was started" in result.finding.message
        # The process ended by itself: said so, with its status, not blamed on the grid's size.
        assert "exit status 3" in result.finding.message and "os._exit" in result.finding.explanation
        assert "grid" not in result.finding.explanation
        assert worker.restarts == 1
        again = worker.check(puzzle, REPO / "solutions" / puzzle.file)
        assert again.passed


def test_a_checker_killed_by_a_signal_says_which(tmp_path):
    puzzle = COURSE.find("constant_add")
    crashing = tmp_path / puzzle.file
    crashing.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    with Worker("interpret") as worker:
        worker.start()
        result = worker.check(puzzle, crashing)
        assert result.finding.kind is FindingKind.CRASH
        assert "killed by SIGSEGV" in result.finding.message and "fresh one was started" in result.finding.message
        assert "grid or block" in result.finding.explanation


def test_the_worker_is_reused_between_checks():
    puzzle = COURSE.find("constant_add")
    with Worker("interpret") as worker:
        worker.start()
        first = worker._process.pid
        for _ in range(3):
            assert worker.check(puzzle, REPO / "solutions" / puzzle.file).passed
        assert worker._process.pid == first and worker.restarts == 0


def test_learner_prints_are_captured_not_mixed_into_our_output(tmp_path):
    puzzle = COURSE.find("constant_add")
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


def test_findings_quote_the_current_text_after_lines_are_inserted_above(tmp_path):
    """A long-lived worker must not quote a line from an earlier version of the file.

    The static index_map check quotes lines without any exception passing through
    JAX (whose traceback code would refresh Python's line cache by chance).
    """
    puzzle = COURSE.find("constant_add_blocked")
    good = (REPO / "solutions" / puzzle.file).read_text()
    bug = "in_specs=[pl.BlockSpec((B,), lambda i: (i + 1,))],"
    wrong = good.replace("in_specs=[pl.BlockSpec((B,), lambda i: (i,))],", bug)
    assert wrong != good
    path = tmp_path / puzzle.file
    with Worker("interpret") as worker:
        worker.start()
        path.write_text(wrong)
        first = worker.check(puzzle, path).first_failure.finding
        assert bug in first.where[0].text
        path.write_text("# a note\n# another\n# and a third\n" + wrong)
        second = worker.check(puzzle, path).first_failure.finding
    assert [w.line for w in second.where] == [w.line + 3 for w in first.where]
    assert [w.text for w in second.where] == [w.text for w in first.where]
    assert bug in second.where[0].text


def test_cancel_stops_a_running_check_at_once(tmp_path):
    import threading
    import time

    from pallas_puzzles.worker.client import CheckCancelled

    puzzle = COURSE.find("constant_add")
    spinning = tmp_path / puzzle.file
    spinning.write_text((REPO / "solutions" / puzzle.file).read_text().replace(
        "    z_ref[...] = x_ref[...] + 10.0",
        "    spin = jax.lax.while_loop(lambda c: c >= 0.0, lambda c: c + 1.0, 0.0)\n"
        "    z_ref[...] = x_ref[...] + 10.0 + 0.0 * spin",
    ))
    outcome: dict[str, object] = {}
    with Worker("interpret") as worker:
        worker.start()

        def run() -> None:
            try:
                outcome["result"] = worker.check(puzzle, spinning)
            except CheckCancelled:
                outcome["cancelled"] = time.monotonic()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        time.sleep(2.0)
        asked = time.monotonic()
        worker.cancel()
        thread.join(timeout=10)
        assert "cancelled" in outcome and outcome["cancelled"] - asked < 2.0
        assert worker.check(puzzle, REPO / "solutions" / puzzle.file).passed  # a fresh worker takes over


SPIN = ("    spin = jax.lax.while_loop(lambda c: c >= 0.0, lambda c: c + 1.0, 0.0)\n"
        "    z_ref[...] = x_ref[...] + 10.0 + spin * 0.0\n")


def test_a_time_out_names_the_loop_and_its_time_matches_its_limit(tmp_path, monkeypatch):
    puzzle = COURSE.find("constant_add")
    spinning = tmp_path / puzzle.file
    source = (REPO / "solutions" / puzzle.file).read_text()
    spinning.write_text(source.replace("    z_ref[...] = x_ref[...] + 10.0\n", SPIN))
    monkeypatch.setenv("PALLAS_PUZZLES_TIME_LIMIT", "4")
    with Worker("interpret") as worker:
        worker.start()
        result = worker.check(puzzle, spinning)
    finding = result.finding
    assert finding.kind is FindingKind.TIMEOUT and "still running after 4 s" in finding.message
    assert "while_loop" in finding.where[0].text  # the line that loops, named
    assert 4.0 <= result.seconds < 6.0  # the footer says the time the kernel had, not the restart after it


def _anonymous_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) / 1024 for line in status if line.startswith("RssAnon:"))


def test_a_watch_session_of_many_saves_does_not_grow_the_checker_for_ever(tmp_path):
    """JAX keeps the programs of every check, and a save's file is new code: a Mosaic GPU check left
    about 5 MiB behind (a Blackwell one 24), so a long watch session grew until the memory limit
    stopped a correct kernel. The checker lets go of JAX's caches once it passes its ceiling."""
    from helpers import skip_if_jax_too_old

    from pallas_puzzles.engine.targets.memory import MEMORY_CEILING_MIB

    puzzle = COURSE.find("tma_copy")
    skip_if_jax_too_old(puzzle)
    solution = (REPO / "solutions" / puzzle.file).read_text()
    saved = tmp_path / puzzle.file
    sizes = []
    with Worker("interpret", target=puzzle.target) as worker:
        worker.start()
        for save in range(20):
            saved.write_text(solution + f"\n# save {save}\n")
            assert worker.check(puzzle, saved).passed
            sizes.append(_anonymous_mib(worker._process.pid))
    assert any(later < earlier for earlier, later in zip(sizes, sizes[1:])), sizes  # let go at least once
    assert sizes[-1] < max(MEMORY_CEILING_MIB, sizes[0]) + 30, sizes  # (JAX alone may start above the ceiling)


def test_watch_keeps_the_checkers_of_the_last_two_chapters_only():
    """Watch keeps a checker per target seen, so a learner who went through every chapter in one
    session held five JAX processes; the current chapter's and the one before stay warm."""
    from pallas_puzzles.worker.by_target import KEPT_CHECKERS, WorkersByTarget

    assert KEPT_CHECKERS == 2
    with WorkersByTarget("interpret") as workers:
        for target in ("tpu-interpret", "tpu-kernel", "tpu-multichip"):
            workers.start(target)
        workers.wait_until_ready("tpu-multichip")  # its second checker, where it shares its checks
        kernel, multichip = (_processes(workers.workers[t]) for t in ("tpu-kernel", "tpu-multichip"))
        assert list(workers.workers) == ["tpu-kernel", "tpu-multichip"]
        assert all(process.poll() is None for process in kernel + multichip)
        workers.start("tpu-kernel")  # back a chapter: the same checker, nothing stopped
        assert _processes(workers.workers["tpu-kernel"]) == kernel
        assert list(workers.workers) == ["tpu-multichip", "tpu-kernel"]
        workers.start("tpu-interpret")
        assert list(workers.workers) == ["tpu-kernel", "tpu-interpret"]
        assert all(process.wait(timeout=10) is not None for process in multichip)  # the least recent ones ended


def _processes(checker) -> list[object]:
    """A checker's processes: one, or two where a chapter's checks are shared (worker/split.py)."""
    return checker.processes if hasattr(checker, "processes") else [checker._process]


def test_watch_starts_the_next_chapters_checker_while_the_learner_reads_the_pass():
    """Passing a chapter's last puzzle moves the learner to a puzzle of another target: its checker
    starts in the background then, so the first save there does not wait for JAX to import."""
    import time

    from pallas_puzzles.worker.by_target import WorkersByTarget

    with WorkersByTarget("interpret") as workers:
        workers.start("tpu-interpret")
        workers.prepare(COURSE.find("remote_copy"))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and workers.workers.get("tpu-multichip", None) is None:
            time.sleep(0.05)
        warmed = workers.workers["tpu-multichip"]
        while time.monotonic() < deadline and warmed.backend is None:
            time.sleep(0.05)
        assert warmed.backend is not None and warmed.alive
        puzzle = COURSE.find("remote_copy")
        assert workers.check(puzzle, REPO / "solutions" / puzzle.file).passed
        assert workers.workers["tpu-multichip"] is warmed and warmed.restarts == 0


ORPHANING_PARENT = """
import os, sys, threading, time
from pathlib import Path
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.worker.client import Worker
puzzle = load_course().find("constant_add")
worker = Worker("interpret")
worker.start()
threading.Thread(target=worker.check, args=(puzzle, Path(sys.argv[1])), daemon=True).start()
print(worker._process.pid, flush=True)
time.sleep(2.0)  # the check is spinning now
os._exit(0)  # the parent dies as under kill -9: nothing of it stops the checker
"""


def test_a_checker_whose_parent_dies_ends_even_in_the_middle_of_a_check(tmp_path):
    """Its parent enforces the time limit; without a parent a hanging kernel would keep a core busy."""
    import subprocess
    import time

    puzzle = COURSE.find("constant_add")
    spinning = tmp_path / puzzle.file
    spinning.write_text((REPO / "solutions" / puzzle.file).read_text().replace(
        "    z_ref[...] = x_ref[...] + 10.0\n", SPIN))
    parent = subprocess.Popen([sys.executable, "-c", ORPHANING_PARENT, str(spinning)], stdout=subprocess.PIPE,
                              text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())  # (the checker shares this pipe: read its first line, not to the end)
    parent.wait(timeout=60)
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline and Path(f"/proc/{child}").exists() and not _zombie(child):
        time.sleep(0.2)
    alive = Path(f"/proc/{child}").exists() and not _zombie(child)
    if alive:
        os.kill(child, 9)
    assert not alive, "the checker outlived its parent"


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return False


_FAULT = ("INTERNAL: CUDA error: Failed to check stream capturing status: CUDA_ERROR_LAUNCH_FAILED: "
          "unspecified launch failure [executable_name='jit_bind']")


def test_a_gpu_fault_is_said_as_one_and_the_next_check_runs_in_a_fresh_checker(tmp_path):
    """After a kernel faults on a GPU, every later CUDA call of the process fails (seen on an H100: every
    check after the first fault answered CUDA_ERROR_LAUNCH_FAILED). Stood in for here by a file that
    makes every later check in its process fail the same way: the checker must be replaced."""
    puzzle = COURSE.find("constant_add")
    solution = REPO / "solutions" / puzzle.file
    faulting = tmp_path / puzzle.file
    faulting.write_text(
        "import jax\n\n\ndef _context_lost(*args, **kwargs):\n"
        f"    raise RuntimeError({_FAULT!r})\n\n\n"
        "jax.block_until_ready = _context_lost  # as a faulted GPU context: every later call fails\n"
        + solution.read_text())
    with Worker("interpret") as worker:
        worker.start()
        first = worker._process.pid
        result = worker.check(puzzle, faulting, fail_fast=False)
        assert not result.passed and result.kind is FindingKind.DEVICE_FAULT and result.first_failure.lost_device
        fault = result.first_failure.finding
        assert "unspecified launch failure (CUDA_ERROR_LAUNCH_FAILED)" in fault.message
        assert "fresh checker" in fault.explanation
        # No later case can run in a faulted process, fail_fast or not.
        assert len(result.cases) == 1 and result.skipped_cases == len(puzzle.cases_for(INTERPRET)) - 1
        assert worker.restarts == 1
        again = worker.check(puzzle, solution)
        assert again.passed, again.kind
        assert worker._process.pid != first


def test_what_native_code_prints_joins_the_checks_printed_text_not_the_terminal(tmp_path, capfd):
    """A GPU kernel's printf reaches descriptor 1 from the CUDA driver, once per thread (the tour gave
    some 9,856 lines on an H100): stood in for by os.write from the launcher, and by libc's buffered
    printf, which only a flush sends to a file."""
    puzzle = COURSE.find("constant_add")
    solution = (REPO / "solutions" / puzzle.file).read_text()
    printing = tmp_path / puzzle.file
    printing.write_text(solution.replace(
        "    return pl.pallas_call(",
        "    import os\n"
        "    os.write(1, b''.join(b'pid (%d) idx () x=1.0\\n' % i for i in range(1000)))\n"
        "    return pl.pallas_call(", 1))
    assert printing.read_text() != solution
    buffered = tmp_path / "buffered" / puzzle.file
    buffered.parent.mkdir()
    buffered.write_text(solution.replace(
        "    return pl.pallas_call(", "    import ctypes\n    ctypes.CDLL(None).printf(b'buffered by libc\\n')\n"
        "    return pl.pallas_call(", 1))
    with Worker("interpret") as worker:
        worker.start()
        result = worker.check(puzzle, printing)
        again = worker.check(puzzle, REPO / "solutions" / puzzle.file)
        flushed = worker.check(puzzle, buffered)
    assert "buffered by libc" in flushed.printed
    assert result.passed
    lines = result.printed.splitlines()
    assert lines[0] == "pid (0) idx () x=1.0" and lines[199] == "pid (199) idx () x=1.0"
    assert len(lines) == 201 and re.fullmatch(r"… and \d+ more lines", lines[200])  # the launcher runs per case
    assert "pid (" not in capfd.readouterr().out  # nothing reached the terminal
    assert again.printed == ""  # each check reads only its own
