"""The checker process's own loop: start JAX once, then answer check requests."""

from __future__ import annotations

import os
import signal
import sys
import traceback
from pathlib import Path

from pallas_puzzles import backends
from pallas_puzzles.backends import Mode
from pallas_puzzles.errors import UserError
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CheckResult, Finding
from pallas_puzzles.worker.protocol import (
    Channel,
    CheckReply,
    CheckRequest,
    Ready,
    StartFailed,
    Stop,
)


def _start(requested: str, mode: Mode) -> Ready | StartFailed:
    try:
        backend, warning = backends.start_jax(requested, mode)
        from pallas_puzzles.engine.intercept import patch

        patch.install()
    except UserError as exc:
        return StartFailed(exc.message)
    except Exception as exc:  # a broken jax install: say so in one line
        return StartFailed(f"JAX failed to start ({type(exc).__name__}: {exc}); run `pallas-puzzles doctor`.")
    return Ready(backend.name, warning)


def forget_compiled() -> None:
    """Drop JAX's in-memory caches when the checker moves on to another puzzle.

    Programs compiled for one puzzle are never reused by the next (each check
    traces a fresh module), yet they pile up: over the whole course a checker
    grows from about 220 MiB to 450 MiB without this, and stays near 270 MiB
    with it. Checks of the same puzzle (watch mode's saves) keep the caches.
    """
    import gc

    import jax

    jax.clear_caches()
    gc.collect()


def serve(channel: Channel, requested: str, mode: Mode) -> None:
    started = _start(requested, mode)
    channel.send(started)
    if isinstance(started, StartFailed):
        return
    backend = backends.get(started.backend)

    from pallas_puzzles.engine.checker import check_puzzle
    from pallas_puzzles.metadata import load_course

    course = load_course()
    previous: int | None = None  # the puzzle checked last
    while True:
        try:
            message = channel.recv()
        except (EOFError, KeyboardInterrupt):
            return
        if isinstance(message, Stop) or not isinstance(message, CheckRequest):
            return
        puzzle = course.find(message.number)
        if previous is not None and previous != puzzle.number:
            forget_compiled()
        previous = puzzle.number
        try:
            result = check_puzzle(puzzle, Path(message.file), backend, mode, fail_fast=message.fail_fast)
        except Exception:  # a bug of ours: report it rather than die silently
            result = CheckResult(
                number=puzzle.number, name=puzzle.name, file=message.file, backend=backend.name,
                passed=False, mode=mode.value,
                findings=[Finding(FindingKind.INTERNAL, "The checker itself failed while checking your file.",
                                  detail=traceback.format_exc())],
            )
        channel.send(CheckReply(result))


def main(argv: list[str]) -> None:
    read_fd, write_fd, requested, mode = int(argv[1]), int(argv[2]), argv[3], Mode(argv[4])
    # A Ctrl-C in the terminal reaches this process too; the parent decides when it ends.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        serve(Channel(read_fd, write_fd), requested, mode)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    # Skip the interpreter's shutdown: tearing down JAX's modules and threads takes
    # about 0.4 s and nothing of ours needs it (every reply has been sent).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
