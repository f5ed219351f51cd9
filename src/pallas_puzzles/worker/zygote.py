"""The zygote: one process that imports JAX and the checker once, and forks every checker from itself.

A checker started as a program of its own imports JAX and Pallas first: 0.5 s before it can check, on
the 2 vCPUs measured, and a private copy of all that the imports build. Forked from a process that has
imported them, a checker is ready in 0.02-0.05 s (a check stopped because the learner saved again is
followed by a fresh checker at once), and checkers share those pages for as long as they do not write
them: two checkers side by side take 15-24 MiB less (PSS), one alone 24-40 MiB more, as the zygote
keeps its copies of the pages its checker rewrote. Once it has forked, it lets go of the native code it
ran only to import JAX (worker/import_pages.py): 60 MiB of its 120.

Forking is safe because this process never starts JAX: it imports modules and nothing else, so it has
one thread (checked before every fork) and no runtime, device or lock to copy half-way. Each checker
starts JAX's backends itself, after the fork, with its own XLA flags (the host device count, which JAX
reads when its backends start). Where this process has more than one thread (a user's own
OPENBLAS_NUM_THREADS) or could not import JAX, it starts each checker as a fresh program instead, and
that one reports what went wrong in the usual way.

`python -m pallas_puzzles.worker zygote SOCKET_FD BACKEND MODE`. Over the socket (worker/forked.py is
the other end) come fork requests, each with the checker's two pipe ends; back go the pid of each
checker and, when it ends, its exit status. Once it has had no checker for IDLE_SECONDS it says so,
and the command retires it: it then ends with its last checker. It also ends when the socket closes
or its parent dies, and takes its checkers with it.
"""

from __future__ import annotations

import importlib
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass

from pallas_puzzles.backends import Mode
from pallas_puzzles.worker import import_pages

# How often the zygote looks whether its parent (the command) is still there, when nothing else wakes it.
PARENT_POLL_SECONDS = 0.5
# A zygote with no checker for this long says so (Idle), and the command retires it: a library user
# (a benchmark, a test) that has stopped its checkers keeps no JAX process. Long enough for a restart
# (a checker stopped and the next one asked for within milliseconds) to find it still there.
IDLE_SECONDS = 2.0
MESSAGE_BYTES = 1 << 16


@dataclass(frozen=True)
class ForkRequest:
    """command -> zygote: start a checker on the two pipe ends sent along (its read end, its write end)."""

    number: int  # the command's name for this request, echoed in the reply
    target: str
    requested: str
    mode: Mode
    serves: tuple[str, ...]
    cwd: str  # the command's working folder, the checker's (the zygote keeps none busy)


@dataclass(frozen=True)
class Retire:
    """command -> zygote: fork no more; end once the checkers forked so far have ended (the command's
    environment changed, and a zygote started with the new one takes over)."""


@dataclass(frozen=True)
class Idle:
    """zygote -> command: no checker of mine has run for IDLE_SECONDS; retire me unless one is on its way."""


@dataclass(frozen=True)
class Forked:
    """zygote -> command: request `number`'s checker is process `pid` (forked, or started fresh)."""

    number: int
    pid: int


@dataclass(frozen=True)
class Ended:
    """zygote -> command: checker `pid` ended; `returncode` as subprocess gives it (-N: killed by signal N)."""

    pid: int
    returncode: int


def send(sock: socket.socket, message: object, fds: tuple[int, ...] = ()) -> None:
    socket.send_fds(sock, [pickle.dumps(message)], list(fds))


def receive(sock: socket.socket) -> tuple[object, list[int]] | None:
    """The next message and the file descriptors that came with it; None once the other end closed."""
    data, fds, _, _ = socket.recv_fds(sock, MESSAGE_BYTES, 2)
    if not data:
        for fd in fds:
            os.close(fd)
        return None
    return pickle.loads(data), fds


# What every checker imports: JAX, Pallas and the checker itself.
EVERY_CHECKER_IMPORTS = ("jax", "jax.numpy", "jax.experimental.pallas", "pallas_puzzles.engine.case",
                         "pallas_puzzles.engine.checker", "pallas_puzzles.worker.child")


def _import_the_checker() -> bool:
    """Import what every checker imports, out of the collector's sight as a checker's own start does; False
    where JAX cannot be imported (each checker, started fresh, then says why)."""
    from pallas_puzzles.engine.targets.pallas_call.fast_path import start_up_out_of_collectors_sight

    try:
        with start_up_out_of_collectors_sight():
            for name in EVERY_CHECKER_IMPORTS:
                importlib.import_module(name)
    except Exception:
        return False
    return True


def _preload(targets: tuple[str, ...]) -> None:
    """Import the JAX modules the checks of `targets` import (their ProcessSetup.preload), where they
    import: one the installed JAX lacks is left for the checks to report."""
    from pallas_puzzles.engine.targets import BUILTIN
    from pallas_puzzles.engine.targets.pallas_call.fast_path import start_up_out_of_collectors_sight

    names = dict.fromkeys(name for target in targets if target in BUILTIN for name in BUILTIN[target].setup.preload)
    with start_up_out_of_collectors_sight():
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:
                continue


def _one_thread() -> bool:
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


class Zygote:
    """The zygote's own loop: fork requests in, pids and exit statuses out, until it may end."""

    def __init__(self, sock: socket.socket, can_fork: bool) -> None:
        self.sock, self.can_fork = sock, can_fork
        self.parent = os.getppid()
        self.preloaded = False  # the first request's targets' modules, imported before its fork
        self.imported_pages_gone = False  # import_pages.let_go() has run
        self.checkers: dict[int, subprocess.Popen[bytes] | None] = {}  # pid -> the Popen of a fresh one
        self.woken_r, self.woken_w = os.pipe()  # SIGCHLD's wake-up: an ended checker is reported at once
        os.set_blocking(self.woken_w, False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.woken_w)

    def serve(self) -> None:
        try:
            self._serve()
        finally:  # the command is gone, or this loop failed: nobody will read these checkers' verdicts
            for pid in self.checkers:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def _serve(self) -> None:
        retiring = False
        idle_since: float | None = None  # when its last checker ended; None while one runs, or once told
        while os.getppid() == self.parent and not (retiring and not self.checkers):
            ready, _, _ = select.select([self.sock, self.woken_r], [], [], PARENT_POLL_SECONDS)
            if self.woken_r in ready:
                os.read(self.woken_r, 512)
            had_checkers = bool(self.checkers)
            self.report_ended()
            if had_checkers and not self.checkers:
                idle_since = time.monotonic()
            if idle_since is not None and not retiring and time.monotonic() - idle_since >= IDLE_SECONDS:
                send(self.sock, Idle())
                idle_since = None
            if self.sock in ready:
                received = receive(self.sock)
                if received is None:
                    break
                request, fds = received
                if isinstance(request, Retire):
                    retiring = True
                    continue
                assert isinstance(request, ForkRequest), request
                idle_since = None
                try:
                    pid = self.start(request, fds)
                finally:
                    for fd in fds:
                        os.close(fd)
                send(self.sock, Forked(request.number, pid))
                if not self.imported_pages_gone and not select.select([self.sock], [], [], 0)[0]:
                    # After the first fork, with no other request waiting: nothing runs that code again.
                    import_pages.let_go()
                    self.imported_pages_gone = True

    def start(self, request: ForkRequest, fds: list[int]) -> int:
        """The pid of a checker for `request`: forked where that is safe, else a program of its own."""
        read_fd, write_fd = fds
        if self.can_fork and not self.preloaded:
            # Only before the first fork: imported later, the modules would be this process's alone.
            _preload(request.serves)
            self.preloaded = True
        if self.can_fork and _one_thread():
            pid = os.fork()
            if pid == 0:
                self.become_checker(request, read_fd, write_fd)
            self.checkers[pid] = None
            return pid
        fresh = subprocess.Popen(
            [sys.executable, "-m", "pallas_puzzles.worker", str(read_fd), str(write_fd), request.target,
             request.requested, request.mode.value, ",".join(request.serves)],
            pass_fds=(read_fd, write_fd), stdin=subprocess.DEVNULL, cwd=request.cwd)
        self.checkers[fresh.pid] = fresh
        return fresh.pid

    def become_checker(self, request: ForkRequest, read_fd: int, write_fd: int) -> None:
        """In the forked process: drop the zygote's ends and handlers, then check until told to stop."""
        try:
            try:
                os.chdir(request.cwd)
            except OSError:  # gone since: the checker reads no file by a relative path
                pass
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for fd in (self.woken_r, self.woken_w):
                os.close(fd)
            self.sock.close()
            from pallas_puzzles.worker import child

            child.run(read_fd, write_fd, request.target, request.requested, request.mode, request.serves)
        finally:
            os._exit(1)  # never back into the zygote's loop

    def report_ended(self) -> None:
        while self.checkers:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            fresh = self.checkers.pop(pid, None)
            if fresh is not None:
                fresh.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
            send(self.sock, Ended(pid, os.waitstatus_to_exitcode(status)))


def main(argv: list[str]) -> None:
    sock = socket.socket(fileno=int(argv[1]))
    requested, mode = argv[2], Mode(argv[3])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the command's to handle
    os.chdir("/")  # it may outlive the command by moments: it keeps no folder of the learner's in use
    from pallas_puzzles import backends

    backends.prepare_environment(requested, mode)  # what JAX reads when it is imported
    zygote = Zygote(sock, can_fork=_import_the_checker())
    try:
        zygote.serve()
    except (BrokenPipeError, ConnectionResetError, EOFError):
        pass
    os._exit(0)
