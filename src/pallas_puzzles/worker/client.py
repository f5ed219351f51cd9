"""The parent's handle on one checker process.

Watch mode reuses one worker for every save. A check that crashes the worker or
outlives its time limit gets the worker replaced, and the learner is told so.
`cancel()` (from any thread) stops a running check at once: watch mode uses it
when a new save makes the running check pointless. A worker that keeps a spare
(watch mode) has a second process importing JAX and checking the puzzle's reference
solution while nothing waits for it, which takes over at once when the running one
is stopped, so a save that stops a check gets its verdict from a warm checker.
"""

from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from pallas_puzzles import backends
from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.course.reader import DEFAULT_TARGET
from pallas_puzzles.errors import UserError
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CheckResult, Finding
from pallas_puzzles.worker import launch
from pallas_puzzles.worker.limits import MEMORY_POLL, Limits, loop_lines, resident_mib, time_limit
from pallas_puzzles.worker.protocol import (
    Channel,
    CheckReply,
    CheckRequest,
    Ready,
    StartFailed,
    Stop,
)

STARTUP_TIMEOUT = 180.0


class CheckCancelled(Exception):
    """The running check was cancelled with Worker.cancel(); no verdict."""


@dataclass
class _Spare:
    """A checker process started ahead of need; `warming`: it was asked to check a reference solution
    first (whose reply is read and dropped when it takes over), within `seconds`."""

    spawned: launch.Spawned
    warming: bool
    seconds: float


class Worker:
    """One checker process for one target (the chapter's), backend and mode."""

    def __init__(self, requested: str, mode: Mode = Mode.RUN, target: str = DEFAULT_TARGET,
                 limits: Limits = Limits(), keep_spare: bool = False) -> None:
        self.target = target
        self.requested = requested
        self.mode = mode
        self.limits = limits
        self.keep_spare = keep_spare  # after each check, have a spare process ready (watch mode)
        self.backend: Backend | None = None
        self.warning: str | None = None
        self.restarts = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._channel: Channel | None = None
        self._spare: _Spare | None = None
        self._busy = threading.Lock()  # one check at a time
        self._cancelled = threading.Event()

    def prepare(self, warm_with: Puzzle | None = None) -> None:
        """Start a spare process in the background, unless one is there: the next start takes it over.
        With `warm_with`, it checks that puzzle's reference solution as soon as JAX is up, so that its
        first real check is as fast as any later one."""
        if self._spare is not None:
            return
        try:
            spawned = launch.spawn(self.target, self.requested, self.mode)
        except OSError:  # no spare: a later start spawns its own
            return
        warming = warm_with is not None and warm_with.solution_path.is_file()
        seconds = 0.0
        if warm_with is not None and warming:
            try:
                seconds = time_limit(warm_with)
                spawned.channel.send(CheckRequest(warm_with, str(warm_with.solution_path), True, 0))
            except (UserError, OSError):
                spawned.end()
                return
        self._spare = _Spare(spawned, warming, seconds)

    def warm_up(self, puzzle: Puzzle) -> None:
        """Before this worker's first check (keep_spare only): start its process in the background, warmed
        on `puzzle`'s reference solution."""
        if self.keep_spare and self.backend is None and puzzle.target == self.target:
            self.prepare(puzzle)

    def start(self) -> Backend:
        spare, self._spare = self._spare, None
        if spare is not None:
            try:
                return self._take_over(spare.spawned, spare.warming, spare.seconds)
            except UserError:  # the spare failed: a fresh process says why, if it fails too
                self._end_current()
        key = (self.target, self.requested, self.mode)
        return self._take_over(launch.take(*key) or launch.spawn(*key), False, 0.0)

    def _take_over(self, spawned: launch.Spawned, warming: bool, seconds: float) -> Backend:
        self._process = spawned.process
        self._channel = channel = spawned.channel
        if not channel.poll(STARTUP_TIMEOUT):
            self._end_current()
            raise UserError("The checker process did not start within three minutes; run `pallas-puzzles doctor`.")
        try:
            reply = channel.recv()
        except EOFError:
            self._end_current()
            raise UserError("The checker process died while starting JAX; run `pallas-puzzles doctor`.") from None
        if isinstance(reply, StartFailed):
            self._end_current()
            raise UserError(reply.message)
        assert isinstance(reply, Ready), reply
        if warming:
            self._drop_warm_up(channel, seconds)
        self.backend = backends.get(reply.backend)
        self.warning = reply.warning
        return self.backend

    def _drop_warm_up(self, channel: Channel, seconds: float) -> None:
        """Read and drop the reply to a spare's warm-up check; a spare that does not give one is not used."""
        try:
            if channel.poll(seconds) and isinstance(channel.recv(), CheckReply):
                return
        except (EOFError, OSError):
            pass
        self._end_current()
        raise UserError("The spare checker did not finish warming up.")

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def check(self, puzzle: Puzzle, file: Path, fail_fast: bool = True, timed_runs: int = 0) -> CheckResult:
        """Check one file; raises CheckCancelled if cancel() was called meanwhile."""
        with self._busy:
            self._cancelled.clear()
            if not self.alive:
                self._end_current()
                self.start()
            return self._check_started(puzzle, file, fail_fast, timed_runs)

    def _check_started(self, puzzle: Puzzle, file: Path, fail_fast: bool, timed_runs: int) -> CheckResult:
        channel = self._channel
        assert channel is not None and self.backend is not None
        started = time.perf_counter()
        limit = self.limits.seconds or time_limit(puzzle)
        try:
            channel.send(CheckRequest(puzzle, str(file), fail_fast, timed_runs))
            over = self._wait(channel, limit)
            if over is None:
                reply = channel.recv()
                assert isinstance(reply, CheckReply), reply
                if self.keep_spare:
                    self.prepare(puzzle)
                return reply.result
            finding = self._stopped(over, file, limit)
        except (EOFError, OSError):
            if self._cancelled.is_set():
                self._end_current()
                raise CheckCancelled() from None
            finding = Finding(
                FindingKind.CRASH,
                "The checker process crashed while running your kernel; a fresh one was started.",
            )
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
        if process is not None and process.poll() is None and self._busy.locked():
            self._cancelled.set()
            process.kill()

    def restart(self) -> None:
        self._end_current()
        self.restarts += 1
        self.start()

    def stop(self) -> None:
        """End the checker process, and the spare if there is one."""
        spare, self._spare = self._spare, None
        if spare is not None:
            spare.spawned.end()
        self._end_current()

    def _end_current(self) -> None:
        channel, process = self._channel, self._process
        self._process, self._channel = None, None
        if channel is not None:
            try:
                channel.send(Stop())
            except OSError:
                pass
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
