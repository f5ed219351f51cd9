"""The messages between a command and its zygote (worker/forked.py, worker/zygote.py), over one Unix
SOCK_SEQPACKET socket: one pickled message per packet, in order, with file descriptors alongside
(SCM_RIGHTS). Kept apart from the zygote's code so that the command and the zygote's small successor
(the reaper) import them without the rest."""

from __future__ import annotations

import os
import pickle
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the reaper, which reads no ForkRequest, goes without it
    from pallas_puzzles.backends import Mode

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
    environment changed, or its pool has every checker it will ask for). Until then only their ends are
    left to report, and a small process takes the zygote's place to do that (zygote.py, the reaper)."""


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
