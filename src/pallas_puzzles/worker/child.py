"""The checker process's own loop: set up for one target and start JAX once, then answer check requests."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

from pallas_puzzles.backends import Mode
from pallas_puzzles.engine.targets import process
from pallas_puzzles.engine.targets.memory import CacheRelease, forget_compiled
from pallas_puzzles.engine.targets.pallas_call.fast_path import start_up_out_of_collectors_sight
from pallas_puzzles.engine.targets.process import Started
from pallas_puzzles.errors import UserError
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CheckResult, Finding
from pallas_puzzles.worker.native_output import NativeOutput
from pallas_puzzles.worker.protocol import (
    Channel,
    CheckReply,
    CheckRequest,
    Ready,
    StartFailed,
    Stop,
)

# How often a checker looks whether its parent is still there (end_with_parent).
PARENT_POLL_SECONDS = 0.5


def _start(target: str, requested: str, mode: Mode,
           serves: tuple[str, ...] = ()) -> tuple[Ready | StartFailed, Started | None]:
    try:
        started = process.start(target, requested, mode, serves)
    except UserError as exc:
        return StartFailed(exc.message), None
    except Exception as exc:  # a broken jax install: say so in one line
        return StartFailed(f"JAX failed to start ({type(exc).__name__}: {exc}); run `pallas-puzzles doctor`."), None
    return Ready(started.backend.name, started.warning), started


class Targets:
    """The targets this checker has started, and the one it checks for now. A checker serves the
    targets it was started for (`serves`); it switches to another one the first time a request's
    puzzle needs it, as the notebook's process does."""

    def __init__(self, started: Started, name: str, requested: str, mode: Mode, serves: tuple[str, ...]) -> None:
        self.requested, self.mode, self.serves = requested, mode, serves
        self.name = name
        self.by_name = {name: started}

    @property
    def now(self) -> Started:
        return self.by_name[self.name]

    def switch(self, name: str) -> StartFailed | None:
        """Make `name` the target checks run for, where this checker serves it (else checks go on with the
        current one, as a checker started for one target checks any puzzle it is given); a StartFailed
        where it cannot start here."""
        if name == self.name or name not in self.serves:
            return None
        if name not in self.by_name:
            # What the last target compiled is no use to the next. Dropped and collected first, so that
            # the freeze after the start keeps no garbage, and collections stay as cheap as at start-up
            # (a target's modules unfrozen made every clear of the caches a 90 ms collection).
            forget_compiled()
            with start_up_out_of_collectors_sight():
                reply, started = _start(name, self.requested, self.mode, self.serves)
            if started is None:
                assert isinstance(reply, StartFailed)
                return reply
            self.by_name[name] = started
        else:
            process.rejoin(name, self.by_name[name])
        self.name = name
        return None


def serve(channel: Channel, target: str, requested: str, mode: Mode, serves: tuple[str, ...] = ()) -> None:
    with start_up_out_of_collectors_sight():
        reply, started = _start(target, requested, mode, serves)
        if started is not None:
            from pallas_puzzles.engine.case import forget_data
            from pallas_puzzles.engine.checker import check_puzzle
    channel.send(reply)
    if started is None:
        return

    targets = Targets(started, target, requested, mode, serves or (target,))
    previous: str | None = None  # the puzzle checked last
    release = CacheRelease.from_environment()  # when this process lets go of JAX's caches
    native = NativeOutput()
    while True:
        try:
            message = channel.recv()
        except (EOFError, KeyboardInterrupt):
            return
        if isinstance(message, Stop) or not isinstance(message, CheckRequest):
            return
        puzzle = message.puzzle
        if previous is not None and previous != puzzle.name:
            targets.now.target.between_puzzles()
            forget_data()
        previous = puzzle.name
        refused = targets.switch(puzzle.target)
        if refused is not None:
            channel.send(refused)
            continue
        started = targets.now
        native.clear()
        try:
            result = check_puzzle(puzzle, Path(message.file), started.backend, mode, fail_fast=message.fail_fast,
                                  target=started.target, timed_runs=message.timed_runs, cases=message.cases)
        except Exception:  # a bug of ours: report it rather than die silently
            result = CheckResult(
                number=puzzle.number, name=puzzle.name, file=message.file, backend=started.backend.name,
                passed=False, mode=mode.value,
                findings=[Finding(FindingKind.INTERNAL, "The checker itself failed while checking your file.",
                                  detail=traceback.format_exc())],
            )
        result.printed += native.taken()
        channel.send(CheckReply(result))
        try:
            release.after_check()  # the reply is on its way: the learner waits for none of this
        except Exception:  # letting go of memory failed: the checker still answers the next check
            pass


def end_with_parent(poll: float = PARENT_POLL_SECONDS) -> None:
    """End this process soon after its parent dies (a watch or a test run killed), even in the middle of a
    check: the parent holds the time limit, so without it a kernel that hangs would keep a core busy for
    ever, and nobody would read the verdict. (Not PR_SET_PDEATHSIG: that fires when the parent's *thread*
    that started this process ends, and parents start checkers from threads.)"""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main(argv: list[str]) -> None:
    """`python -m pallas_puzzles.worker READ_FD WRITE_FD TARGET BACKEND MODE [SERVES]`."""
    serves = tuple(argv[6].split(",")) if len(argv) > 6 and argv[6] else ()
    run(int(argv[1]), int(argv[2]), argv[3], argv[4], Mode(argv[5]), serves)


def run(read_fd: int, write_fd: int, target: str, requested: str, mode: Mode, serves: tuple[str, ...]) -> None:
    """Be a checker until told to stop, then end the process (a started one, or one the zygote forked)."""
    # A Ctrl-C in the terminal reaches this process too; the parent decides when it ends.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    end_with_parent()
    try:
        serve(Channel(read_fd, write_fd), target, requested, mode, serves)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    # Skip the interpreter's shutdown: tearing down JAX's modules and threads takes
    # about 0.4 s and nothing of ours needs it (every reply has been sent).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
