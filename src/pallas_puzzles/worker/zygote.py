"""The zygote: one process that imports JAX and the checker once, and forks every checker from itself.

A checker started as a program of its own imports JAX and Pallas first: 0.5 s before it can check, on
the 2 vCPUs measured, and a private copy of all that the imports build. Forked from a process that has
imported them, a checker is ready in 0.02-0.05 s (a check stopped because the learner saved again is
followed by a fresh checker at once), and checkers share those pages for as long as they do not write
them. Once it has forked, the zygote lets go of the native code it ran only to import JAX
(worker/import_pages.py): 60 MiB of its 120.

Forking is safe because this process never starts JAX: it imports modules and nothing else, so it has
one thread (checked before every fork) and no runtime, device or lock to copy half-way. Each checker
starts JAX's backends itself, after the fork, with its own XLA flags (the host device count, which JAX
reads when its backends start). Where this process has more than one thread (a user's own
OPENBLAS_NUM_THREADS) or could not import JAX, it starts each checker as a fresh program instead, and
that one reports what went wrong in the usual way.

`python -m pallas_puzzles.worker zygote SOCKET_FD BACKEND MODE`. Over the socket (worker/forked.py is
the other end) come fork requests, each with the checker's two pipe ends; back go the pid of each
checker and, when it ends, its exit status. Once it has had no checker for IDLE_SECONDS it says so,
and the command retires it: it then ends with its last checker. A zygote retired with checkers left
(a pool has launched all of its) execs a reaper (`python -c ... reaper SOCKET_FD PARENT PIDS`): this
module's loop in a small Python without JAX, still the checkers' parent, which reports their ends.
Either ends when the socket closes or its parent dies, and takes its checkers with it.
"""

from __future__ import annotations

import importlib
import os
import select
import signal
import socket
import sys
import time
from typing import TYPE_CHECKING

from pallas_puzzles.worker.zygote_messages import Ended, Forked, ForkRequest, Idle, Retire, receive, send

if TYPE_CHECKING:  # imported only where a checker starts fresh: the reaper runs this loop without it
    import subprocess

# How often the zygote looks whether its parent (the command) is still there, when nothing else wakes it.
PARENT_POLL_SECONDS = 0.5
# A zygote with no checker for this long says so (Idle), and the command retires it: a library user
# (a benchmark, a test) that has stopped its checkers keeps no JAX process. Long enough for a restart
# (a checker stopped and the next one asked for within milliseconds) to find it still there.
IDLE_SECONDS = 2.0
# A retired zygote with checkers left becomes a reaper this long after it was retired: the exec costs
# 40 ms of CPU, which at a pool's start would be taken from its checkers' first checks, and a run
# shorter than this gains nothing from the memory it frees.
REAPER_AFTER_SECONDS = 1.0


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

    def __init__(self, sock: socket.socket, can_fork: bool, parent: int | None = None,
                 checkers: tuple[int, ...] = (), retiring: bool = False) -> None:
        self.sock, self.can_fork, self.retiring = sock, can_fork, retiring
        self.parent = os.getppid() if parent is None else parent
        self.preloaded = False  # the first request's targets' modules, imported before its fork
        self.forked_once = False
        self.imported_pages_gone = False  # import_pages.let_go() has run
        self.reaper_at: float | None = None  # when this retired zygote becomes a reaper (become_reaper)
        # pid -> the Popen of one started fresh (None: forked, or started before this process's exec)
        self.checkers: dict[int, subprocess.Popen[bytes] | None] = dict.fromkeys(checkers)
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
        idle_since: float | None = None  # when its last checker ended; None while one runs, or once told
        self.report_ended()  # a reaper's checker may have ended during its exec
        while os.getppid() == self.parent and not (self.retiring and not self.checkers):
            ready, _, _ = select.select([self.sock, self.woken_r], [], [], self.between_messages())
            if self.woken_r in ready:
                os.read(self.woken_r, 512)
            had_checkers = bool(self.checkers)
            self.report_ended()
            if had_checkers and not self.checkers:
                idle_since = time.monotonic()
            if idle_since is not None and not self.retiring and time.monotonic() - idle_since >= IDLE_SECONDS:
                send(self.sock, Idle())
                idle_since = None
            if self.sock in ready:
                received = receive(self.sock)
                if received is None:
                    break
                request, fds = received
                if isinstance(request, Retire):
                    self.retiring = True
                    if self.can_fork and self.reaper_at is None:
                        self.reaper_at = time.monotonic() + REAPER_AFTER_SECONDS
                    continue
                assert isinstance(request, ForkRequest), request
                idle_since = None
                try:
                    pid = self.start(request, fds)
                finally:
                    for fd in fds:
                        os.close(fd)
                send(self.sock, Forked(request.number, pid))
                self.forked_once = True

    def between_messages(self) -> float:
        """What the loop does before it waits, and how long it may wait: once it has forked, with no
        request waiting, it lets go of the import's code (nothing runs it again); when its hand-over is
        due, it becomes a reaper."""
        if self.forked_once and not self.imported_pages_gone and not select.select([self.sock], [], [], 0)[0]:
            from pallas_puzzles.worker import import_pages

            import_pages.let_go()
            self.imported_pages_gone = True
        if self.reaper_at is None:
            return PARENT_POLL_SECONDS
        if time.monotonic() >= self.reaper_at:
            self.reaper_at = None
            if self.checkers:
                self.become_reaper()  # returns only where the exec failed
            return PARENT_POLL_SECONDS
        return min(PARENT_POLL_SECONDS, self.reaper_at - time.monotonic())

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
        import subprocess

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

    def become_reaper(self) -> None:
        """Retired, with checkers still running: all that is left is to report their ends, and for that
        this process need not hold JAX (54 MiB once its checkers have rewritten their copies of its pages).
        It execs a small Python that goes on with the same socket and the same loop: the pid stays, and
        with it the checkers, still its children. Where the exec fails, it goes on as it is."""
        os.set_inheritable(self.sock.fileno(), True)
        # this very copy of the package, from any cwd
        package_home = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
        program = (f"import sys; sys.path.insert(0, {package_home!r}); "
                   "from pallas_puzzles.worker.zygote import main; main(sys.argv[1:])")
        command = [sys.executable, "-c", program, "reaper", str(self.sock.fileno()), str(self.parent),
                   ",".join(map(str, self.checkers))]
        signal.set_wakeup_fd(-1)
        try:
            os.execv(sys.executable, command)
        except OSError:
            signal.set_wakeup_fd(self.woken_w)

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
    """`zygote SOCKET_FD BACKEND MODE`, or what a retired zygote execs: `reaper SOCKET_FD PARENT PIDS`."""
    sock = socket.socket(fileno=int(argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the command's to handle
    os.chdir("/")  # it may outlive the command by moments: it keeps no folder of the learner's in use
    if argv[0] == "reaper":
        pids = tuple(int(pid) for pid in argv[3].split(",") if pid)
        zygote = Zygote(sock, can_fork=False, parent=int(argv[2]), checkers=pids, retiring=True)
    else:
        from pallas_puzzles import backends

        backends.prepare_environment(argv[2], backends.Mode(argv[3]))  # what JAX reads when it is imported
        zygote = Zygote(sock, can_fork=_import_the_checker())
    try:
        zygote.serve()
    except (BrokenPipeError, ConnectionResetError, EOFError):
        pass
    os._exit(0)
