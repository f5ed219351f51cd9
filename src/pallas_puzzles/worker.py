"""A long-lived child process that keeps JAX imported and runs checks.

The CLI never imports jax itself. Watch mode reuses one worker for every save;
a check that crashes the worker or outlives its time limit gets the worker
replaced, and the learner is told so.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from pallas_puzzles.errors import UserError
from pallas_puzzles.metadata import Puzzle
from pallas_puzzles.results import CheckResult, Finding

STARTUP_TIMEOUT = 180.0


def serve(conn: Any, requested: str) -> None:
    """The worker's main loop (runs in the child); `conn` has send() and recv()."""
    from pallas_puzzles import backends

    backends.prepare_environment(requested)
    try:
        import jax

        error, warning = backends.jax_version_verdict(jax.__version__)
        if error:
            raise UserError(error)
        backends.configure_jax()
        backend = backends.resolve(requested)
        from pallas_puzzles import strict

        strict.install()
    except UserError as exc:
        conn.send(("error", exc.message))
        return
    except Exception as exc:  # a broken jax install: say so in one line
        conn.send(("error", f"JAX failed to start ({type(exc).__name__}: {exc}); run `pallas-puzzles doctor`."))
        return
    conn.send(("ready", backend, warning))

    from pallas_puzzles.checker import check_puzzle
    from pallas_puzzles.metadata import load_course

    course = load_course()
    while True:
        try:
            message = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        if message[0] == "stop":
            return
        _, number, file, fail_fast = message
        try:
            result = check_puzzle(course.find(number), Path(file), backend, fail_fast=fail_fast)
        except Exception:  # a bug of ours: report it rather than die silently
            result = CheckResult(
                number=number, name=course.find(number).name, file=file, backend=backend, passed=False,
                finding=Finding(kind="crash", title="The checker itself failed; this is a pallas-puzzles bug.",
                                detail=traceback.format_exc()),
            )
        conn.send(("result", result))


class _Duplex:
    """One read and one write pipe end, used like a two-way Connection."""

    def __init__(self, reader: Connection, writer: Connection) -> None:
        self.reader, self.writer = reader, writer

    def send(self, message: Any) -> None:
        self.writer.send(message)

    def recv(self) -> Any:
        return self.reader.recv()

    def poll(self, timeout: float) -> bool:
        return self.reader.poll(timeout)

    def close(self) -> None:
        self.reader.close()
        self.writer.close()


class Worker:
    """Parent-side handle on the worker process."""

    def __init__(self, requested: str) -> None:
        self.requested = requested
        self.backend = ""
        self.warning: str | None = None
        self.restarts = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._conn: _Duplex | None = None

    def start(self) -> str:
        # A plain subprocess with two pipes, not multiprocessing's spawn: spawn
        # re-runs the parent's main module in the child (slow, and it breaks
        # scripts without a __main__ guard).
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        self._process = subprocess.Popen(
            [sys.executable, "-m", "pallas_puzzles.worker", str(to_child_r), str(from_child_w), self.requested],
            pass_fds=(to_child_r, from_child_w),
            stdin=subprocess.DEVNULL,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._conn = _Duplex(Connection(from_child_r, writable=False), Connection(to_child_w, readable=False))
        conn = self._conn
        if not conn.poll(STARTUP_TIMEOUT):
            self.stop()
            raise UserError("The checker process did not start within three minutes; run `pallas-puzzles doctor`.")
        try:
            kind, value, *rest = conn.recv()
        except EOFError:
            self.stop()
            raise UserError("The checker process died while starting JAX; run `pallas-puzzles doctor`.") from None
        if kind == "error":
            self.stop()
            raise UserError(value)
        self.backend = value
        self.warning = rest[0] if rest else None
        return value

    def ensure_started(self) -> None:
        if self._process is None or self._process.poll() is not None:
            self.start()

    def check(self, puzzle: Puzzle, file: Path, fail_fast: bool = True) -> CheckResult:
        self.ensure_started()
        assert self._conn is not None
        started = time.perf_counter()
        self._conn.send(("check", puzzle.number, str(file), fail_fast))
        limit = float(os.environ.get("PALLAS_PUZZLES_TIME_LIMIT") or puzzle.time_limit)
        if self._conn.poll(limit):
            try:
                _, result = self._conn.recv()
                return result
            except EOFError:
                pass
            finding = Finding(
                kind="crash",
                title="The checker process crashed while running your kernel; a fresh one was started.",
                explanation="A hard crash usually comes from an enormous grid or block; check the sizes in your launcher.",
            )
        else:
            finding = Finding(
                kind="timeout",
                title=f"Your kernel ran for more than {limit:.0f} s and was stopped; a fresh checker was started.",
                explanation=(
                    "A kernel that never finishes usually has a loop whose end is never reached "
                    "(a lax.fori_loop or while_loop bound that is far too large) or a grid with far more "
                    "programs than intended (the element count instead of pl.cdiv(n, block))."
                ),
            )
        self.restart()
        return CheckResult(
            number=puzzle.number, name=puzzle.name, file=str(file), backend=self.backend, passed=False,
            finding=finding, seconds=time.perf_counter() - started,
        )

    def restart(self) -> None:
        self.stop()
        self.restarts += 1
        self.start()

    def stop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.send(("stop",))
            except (OSError, BrokenPipeError):
                pass
        if self._process is not None:
            try:
                self._process.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=5)
        if self._conn is not None:
            self._conn.close()
        self._process, self._conn = None, None

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class WorkerPool:
    """Several workers checking a list of puzzles at once; results come back in order."""

    def __init__(self, requested: str, size: int) -> None:
        self.workers = [Worker(requested) for _ in range(max(1, size))]

    @property
    def warning(self) -> str | None:
        return self.workers[0].warning

    def start(self) -> str:
        errors: list[UserError] = []

        def start_one(worker: Worker) -> None:
            try:
                worker.start()
            except UserError as exc:
                errors.append(exc)

        threads = [threading.Thread(target=start_one, args=(w,)) for w in self.workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            self.stop()
            raise errors[0]
        return self.workers[0].backend

    def check_in_order(self, jobs: list[tuple[Puzzle, Path]], fail_fast: bool = True) -> Iterator[CheckResult]:
        """Yield each job's result in the order given, as soon as it and those before it are done."""
        results: list[CheckResult | None] = [None] * len(jobs)
        done = [threading.Event() for _ in jobs]
        pending: queue.Queue[int] = queue.Queue()
        for index in range(len(jobs)):
            pending.put(index)

        def drain(worker: Worker) -> None:
            while True:
                try:
                    index = pending.get_nowait()
                except queue.Empty:
                    return
                puzzle, file = jobs[index]
                results[index] = worker.check(puzzle, file, fail_fast=fail_fast)
                done[index].set()

        threads = [threading.Thread(target=drain, args=(w,), daemon=True) for w in self.workers]
        for thread in threads:
            thread.start()
        for index in range(len(jobs)):
            done[index].wait()
            result = results[index]
            assert result is not None
            yield result

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str]) -> None:
    """Entry point of the child: `python -m pallas_puzzles.worker READ_FD WRITE_FD BACKEND`."""
    read_fd, write_fd, requested = int(argv[1]), int(argv[2]), argv[3]
    conn = _Duplex(Connection(read_fd, writable=False), Connection(write_fd, readable=False))
    try:
        serve(conn, requested)
    except (BrokenPipeError, KeyboardInterrupt):
        pass


if __name__ == "__main__":
    main(sys.argv)
