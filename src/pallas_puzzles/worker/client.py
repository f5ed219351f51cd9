"""The parent's handle on one checker process.

Watch mode reuses one worker for every save. A check that crashes the worker or
outlives its time limit gets the worker replaced, and the learner is told so.
`cancel()` (from any thread) stops a running check at once: watch mode uses it
when a new save makes the running check pointless.
"""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
from pathlib import Path

from pallas_puzzles import backends
from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.course.reader import DEFAULT_TARGET
from pallas_puzzles.errors import UserError
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CaseSpan, CheckResult, Finding
from pallas_puzzles.source_line import SourceLine
from pallas_puzzles.worker import launch
from pallas_puzzles.worker.limits import STARTUP_TIMEOUT, Limits, resident_mib, time_limit
from pallas_puzzles.worker.protocol import (
    Channel,
    CheckReply,
    CheckRequest,
    Ready,
    StartFailed,
    Stop,
)

_LOOP = re.compile(r"\b(while_loop|fori_loop|scan)\s*\(|^\s*while\b")


def loop_lines(file: Path) -> tuple[SourceLine, ...]:
    """The lines of a file that start a loop: where a kernel that never ends usually spins.

    The interpreter runs a kernel inside XLA, where no Python frame says which line it is on,
    so these are read from the source rather than from the stopped process.
    """
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ()
    return tuple(SourceLine(str(file), n, line.strip()) for n, line in enumerate(text.splitlines(), start=1)
                 if _LOOP.search(line) and not line.lstrip().startswith("#"))[:4]


class CheckCancelled(Exception):
    """The running check was cancelled with Worker.cancel(); no verdict."""


MEMORY_POLL = 0.05  # seconds between looks at a checker's memory while a check runs


class Worker:
    """One checker process for one target (the chapter's), backend and mode; or, given `serves` (a process
    group of engine.targets.process_groups, `target` among them), for any of those targets: the process
    switches to a puzzle's target as it checks it, as a fresh checker for that target would check."""

    def __init__(self, requested: str, mode: Mode = Mode.RUN, target: str = DEFAULT_TARGET,
                 limits: Limits = Limits(), serves: tuple[str, ...] = ()) -> None:
        self.target = target
        self.serves = serves or (target,)
        assert target in self.serves, (target, serves)
        self._current = target  # the target the process checks for now: a restart starts with it
        self.requested = requested
        self.mode = mode
        self.limits = limits
        self.backend: Backend | None = None
        self.warning: str | None = None
        self.restarts = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._channel: Channel | None = None
        self._busy = threading.Lock()  # one check at a time
        self._cancelled = threading.Event()

    def start(self) -> Backend:
        self.launch()
        return self.wait_ready()

    def launch(self) -> None:
        """Start the checker process (or take the one started early) without waiting for it."""
        key = (self._current, self.requested, self.mode, self.serves)
        spawned = launch.take(*key) or launch.spawn(*key)
        self._process = spawned.process
        self._channel = spawned.channel

    def wait_ready(self) -> Backend:
        """Wait until the launched process has started JAX; its backend, or a UserError saying why not."""
        channel = self._channel
        assert channel is not None, "launch() first"
        if not channel.poll(STARTUP_TIMEOUT):
            self.stop()
            raise UserError("The checker process did not start within three minutes; run `pallas-puzzles doctor`.")
        try:
            reply = channel.recv()
        except EOFError:
            self.stop()
            raise UserError("The checker process died while starting JAX; run `pallas-puzzles doctor`.") from None
        if isinstance(reply, StartFailed):
            self.stop()
            raise UserError(reply.message)
        assert isinstance(reply, Ready), reply
        self.backend = backends.get(reply.backend)
        self.warning = reply.warning
        return self.backend

    def prepare(self, puzzle: Puzzle) -> None:
        """Nothing to get ready: a Worker serves one target, started already (watch.runner.Checker)."""

    @property
    def busy(self) -> bool:
        """A check is running (or about to)."""
        return self._busy.locked()

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def check(self, puzzle: Puzzle, file: Path, fail_fast: bool = True, timed_runs: int = 0,
              cases: CaseSpan | None = None) -> CheckResult:
        """Check one file (only `cases`, when given); raises CheckCancelled if cancel() was called meanwhile."""
        with self._busy:
            self._cancelled.clear()
            if not self.alive:
                self._current = self._target_for(puzzle)
                self.stop()
                self.start()
            return self._check_started(puzzle, file, fail_fast, timed_runs, cases)

    def _target_for(self, puzzle: Puzzle) -> str:
        """The target the process checks `puzzle` with: its own where it serves it, else the current one
        (a puzzle checked on a given target's checker, as tests do)."""
        return puzzle.target if puzzle.target in self.serves else self._current

    def _check_started(self, puzzle: Puzzle, file: Path, fail_fast: bool, timed_runs: int,
                       cases: CaseSpan | None) -> CheckResult:
        channel = self._channel
        assert channel is not None and self.backend is not None
        started = time.perf_counter()
        limit = self.limits.seconds or time_limit(puzzle)
        try:
            channel.send(CheckRequest(puzzle, str(file), fail_fast, timed_runs, cases))
            self._current = self._target_for(puzzle)
            over = self._wait(channel, limit)
            if over is None:
                reply = channel.recv()
                if isinstance(reply, StartFailed):  # the puzzle's target could not start in this process
                    raise UserError(reply.message)
                assert isinstance(reply, CheckReply), reply
                # A GPU fault leaves this process's GPU context unusable: the next check starts a fresh checker.
                if any(case.lost_device for case in reply.result.cases):
                    self.stop()
                    self.restarts += 1
                return reply.result
            finding = self._stopped(over, file, limit)
        except (EOFError, OSError):
            if self._cancelled.is_set():
                self.stop()
                raise CheckCancelled() from None
            finding = _crash_finding(self._process)
        seconds = time.perf_counter() - started  # the check's own time: the restart below is not the kernel's
        self.restart()
        return CheckResult(
            number=puzzle.number, name=puzzle.name, file=str(file), backend=self.backend.name,
            passed=False, mode=self.mode.value, findings=[finding], seconds=seconds,
        )

    def _wait(self, channel: Channel, limit: float) -> FindingKind | None:
        """Wait for the reply; None when it is there, else the limit it ran past (TIMEOUT or MEMORY)."""
        deadline = time.monotonic() + limit
        while (remaining := deadline - time.monotonic()) > 0:
            if channel.poll(min(remaining, MEMORY_POLL) if self.limits.memory_mib else remaining):
                return None
            process = self._process
            if process is not None and resident_mib(process.pid) > self.limits.memory_mib > 0:
                return FindingKind.MEMORY
        return FindingKind.TIMEOUT

    def _stopped(self, why: FindingKind, file: Path, limit: float) -> Finding:
        """The finding for a check stopped at a limit."""
        if why is FindingKind.MEMORY:
            allow = f" ({self.limits.raise_memory} to allow it)" if self.limits.raise_memory else ""
            return Finding(FindingKind.MEMORY, f"Your kernel took more than {self.limits.memory_mib} MiB of "
                                               f"memory{allow} and was stopped; a fresh checker was started.")
        loops = loop_lines(file)
        return Finding(FindingKind.TIMEOUT,
                       f"Your kernel was still running after {limit:.0f} s and was stopped; "
                       "a fresh checker was started."
                       + (" One of the loops below probably never ends." if loops else ""), where=loops)

    def cancel(self) -> None:
        """Stop the running check, if any, from any thread; the next check starts a fresh worker."""
        process = self._process
        if process is not None and process.poll() is None and self.busy:
            self._cancelled.set()
            process.kill()

    def restart(self) -> None:
        self.stop()
        self.restarts += 1
        self.start()

    def ask_to_stop(self) -> None:
        """Tell the process to end, without waiting (stop() waits): a pool tells all its checkers first,
        so that they end at the same time. Telling twice is harmless: the checker ends at the first Stop,
        and a second finds the pipe closed or is never read."""
        if self._channel is not None:
            try:
                self._channel.send(Stop())
            except OSError:
                pass

    def stop(self) -> None:
        self.ask_to_stop()
        channel, process = self._channel, self._process
        self._process, self._channel = None, None
        if process is not None:
            try:
                process.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        if channel is not None:
            channel.close()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _crash_finding(process: subprocess.Popen[bytes] | None) -> Finding:
    """The checker died mid-check: killed by a signal (a crash: the catalogue's explanation), or it exited,
    which only code run in it (os._exit) makes it do."""
    try:
        status = process.wait(timeout=2) if process is not None else None
    except subprocess.TimeoutExpired:
        status = None
    if status is not None and status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return Finding(FindingKind.CRASH,
                       f"The checker process was killed by {name} while running your kernel; a fresh one was started.")
    if status is not None:
        return Finding(FindingKind.CRASH,
                       f"The checker process ended (exit status {status}) while running your code; a fresh one "
                       "was started.",
                       explanation="Something your file ran ended the process, such as os._exit(): the checker "
                                   "imports your file and calls your launcher in its own process. Keep such code under "
                                   "`if __name__ == \"__main__\":`.")
    return Finding(FindingKind.CRASH, "The checker process crashed while running your kernel; a fresh one was started.")
