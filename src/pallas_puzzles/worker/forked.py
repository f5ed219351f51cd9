"""The command's side of the zygote (worker/zygote.py): asking it for checkers, and a handle on each.

The zygote is the command's child and the checkers are the zygote's, so the command cannot wait for a
checker itself: the zygote tells it each checker's pid and, when it ends, its exit status, and a
`ForkedProcess` answers from those as a `subprocess.Popen` would (the part of it a Worker uses). One
zygote per backend, mode and environment, started on the first request and kept while it has
checkers (and a moment more, for a restart); the command ends it at exit. A pool, which asks for all
its checkers at once, retires its zygote (`retire`): it then hands over to a reaper without JAX, and
a later checker comes from a new zygote.

Used where a checker runs JAX on the CPU only (`--backend interpret`, `lower`, or `auto` with no
accelerator package installed), on Linux (forking a process that has loaded macOS's system
frameworks is not safe); off with PALLAS_PUZZLES_FAST=0. A checker on a GPU or TPU is started fresh
as before: forking before a GPU runtime starts is safe in principle, but it has not been tried on one.
"""

from __future__ import annotations

import atexit
import itertools
import os
import signal
import socket
import subprocess
import sys
import threading
from types import ModuleType

from pallas_puzzles import backends, environment
from pallas_puzzles.backends import Mode
from pallas_puzzles.worker import cores
from pallas_puzzles.worker.limits import STARTUP_TIMEOUT


class ForkedProcess:
    """A checker the zygote started: pid, poll, wait and kill, as `subprocess.Popen` has them."""

    def __init__(self) -> None:
        self._pid: int | None = None
        self.returncode: int | None = None
        self._killed = False
        self._reaped = False  # the zygote reported its end: its pid may be another process's now
        self._changed = threading.Condition()

    @property
    def pid(self) -> int:
        """The checker's pid; waits for the zygote's answer (it answers once it has imported JAX)."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._pid is not None or self.returncode is not None,
                                          STARTUP_TIMEOUT):
                raise OSError("the zygote did not start a checker")
            return self._pid if self._pid is not None else -1

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        with self._changed:
            if not self._changed.wait_for(lambda: self.returncode is not None, timeout):
                raise subprocess.TimeoutExpired("checker", timeout or 0)
            assert self.returncode is not None
            return self.returncode

    def kill(self) -> None:
        with self._changed:
            self._killed = True
            pid = None if self._reaped else self._pid
            if self._pid is None and self.returncode is None:
                # Not forked yet (the zygote may still be importing JAX): it counts as ended now, so that
                # nobody waits for it, and it is killed the moment it exists.
                self.returncode = -signal.SIGKILL
                self._changed.notify_all()
        if pid is not None:
            _kill(pid)

    def _started(self, pid: int) -> None:
        with self._changed:
            self._pid = pid
            self._changed.notify_all()
            killed = self._killed
        if killed:
            _kill(pid)

    def _ended(self, returncode: int) -> None:
        with self._changed:
            self._reaped = True
            if self.returncode is None:
                self.returncode = returncode
            self._changed.notify_all()


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class ZygoteHandle:
    """The command's handle on one zygote process."""

    def __init__(self, requested: str, mode: Mode, child_environment: dict[str, str]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "pallas_puzzles.worker", "zygote", str(theirs.fileno()), requested, mode.value],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, env=child_environment)
        except OSError:
            ours.close()
            raise
        finally:
            theirs.close()
        from pallas_puzzles.worker import zygote_messages  # imported once the zygote is on its way

        self._messages: ModuleType = zygote_messages
        self._sock = ours
        self._numbers = itertools.count()
        self._lock = threading.Lock()
        self._asked: dict[int, ForkedProcess] = {}  # request number -> its process, until the pid comes
        self._running: dict[int, ForkedProcess] = {}  # pid -> process, until it ends
        self.retired = False  # it forks no more: a new zygote takes new checkers
        threading.Thread(target=self._listen, name="zygote", daemon=True).start()

    @property
    def usable(self) -> bool:
        return not self.retired and self.process.poll() is None

    def end(self) -> None:
        """End the zygote and any checker of its still running, now: a command leaves no process behind
        when it returns, and waits for none (a zygote may still be importing JAX)."""
        with self._lock:
            running = list(self._running.values())
        for process in running:
            process.kill()
        self.process.kill()
        self.process.wait()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # a close alone would wait for our listener's read to end
        except OSError:
            pass
        self._sock.close()

    def retire(self, only_if_idle: bool = False) -> None:
        """Fork no more: the zygote ends once its checkers have (their Ended still come here).
        `only_if_idle`: unless a checker of its own runs or was asked for meanwhile."""
        with self._lock:
            if self.retired or (only_if_idle and (self._asked or self._running)):
                return
            self.retired = True
            try:
                self._messages.send(self._sock, self._messages.Retire())
            except OSError:
                pass

    def fork(self, target: str, requested: str, mode: Mode, serves: tuple[str, ...],
             read_fd: int, write_fd: int) -> ForkedProcess:
        """A checker on the pipe ends given (the zygote gets copies; ours stay open)."""
        process = ForkedProcess()
        with self._lock:
            if self.retired:  # retired since zygote_for gave it: the caller asks the next one
                raise OSError("this zygote is retired")
            number = next(self._numbers)
            self._asked[number] = process
            request = self._messages.ForkRequest(number, target, requested, mode, serves, os.getcwd())
            self._messages.send(self._sock, request, (read_fd, write_fd))
        return process

    def _listen(self) -> None:
        while True:
            try:
                received = self._messages.receive(self._sock)
            except OSError:
                received = None
            if received is None:
                break
            message, _ = received
            if isinstance(message, self._messages.Forked):
                with self._lock:
                    process = self._asked.pop(message.number)
                    self._running[message.pid] = process
                process._started(message.pid)
                try:
                    cores.CHECKERS.started(process)
                except Exception:  # placing it is only for speed: this thread must go on listening
                    pass
            elif isinstance(message, self._messages.Idle):
                self.retire(only_if_idle=True)
            elif isinstance(message, self._messages.Ended):
                with self._lock:
                    ended = self._running.pop(message.pid, None)
                if ended is not None:
                    ended._ended(message.returncode)
        # The zygote is gone, and its checkers with it: what was asked of it never comes.
        with self._lock:
            left = [*self._asked.values(), *self._running.values()]
            self._asked.clear()
            self._running.clear()
        for process in left:
            process._ended(-signal.SIGKILL)


# One zygote per backend and mode, for the environment it was started with: everything JAX reads on
# import is fixed in it. A command whose environment changed (a test's, mostly) retires the old one.
_zygotes: dict[tuple[str, Mode], tuple[tuple[tuple[str, str], ...], ZygoteHandle]] = {}
_started: list[ZygoteHandle] = []  # every zygote this command started, retired ones too
_zygotes_lock = threading.Lock()


def end_all() -> None:
    """End this command's zygotes (at its exit)."""
    with _zygotes_lock:
        zygotes = list(_started)
        _zygotes.clear()
        _started.clear()
    for zygote in zygotes:
        zygote.end()


def fork_checker(target: str, requested: str, mode: Mode, serves: tuple[str, ...], read_fd: int, write_fd: int,
                 child_environment: dict[str, str]) -> ForkedProcess | None:
    """A checker forked by this command's zygote, on the pipe ends given; None where checkers are not
    forked (see above), or where no zygote would fork it (the caller then starts one of its own)."""
    if not (sys.platform.startswith("linux") and hasattr(socket, "send_fds")) or environment.FAST.turned_off() \
            or not backends.cpu_only(requested, mode):
        return None
    for _ in range(2):  # a zygote may retire between being found and forking: then the next one
        try:
            return zygote_for(requested, mode, child_environment).fork(target, requested, mode, serves,
                                                                      read_fd, write_fd)
        except OSError:
            continue
    return None


def retire(requested: str, mode: Mode) -> None:
    """No more checkers of `requested` and `mode` will be asked for (a pool has launched all of its): the
    zygote hands over to a reaper, and a checker asked for later (a restart) comes from a new zygote."""
    with _zygotes_lock:
        _, zygote = _zygotes.get((requested, mode), ((), None))
    if zygote is not None:
        zygote.retire()


def zygote_for(requested: str, mode: Mode, child_environment: dict[str, str]) -> ZygoteHandle:
    """This command's zygote for checkers of `requested` and `mode`, started with `child_environment`."""
    key, environment_now = (requested, mode), tuple(sorted(child_environment.items()))
    with _zygotes_lock:
        environment_then, zygote = _zygotes.get(key, ((), None))
        if zygote is None or not zygote.usable or environment_then != environment_now:
            if zygote is not None:
                zygote.retire()
            zygote = ZygoteHandle(requested, mode, child_environment)
            if not _started:
                atexit.register(end_all)
            _started.append(zygote)
            _zygotes[key] = (environment_now, zygote)
        return zygote
