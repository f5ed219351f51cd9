"""The messages between a command and its zygote (worker/forked.py, worker/zygote.py), over one Unix
SOCK_SEQPACKET socket: one pickled message per packet, in order, with file descriptors alongside
(SCM_RIGHTS). Kept apart from the zygote's code so that the command and the zygote's small successor
(the reaper) import them without the rest."""

from __future__ import annotations

import os
import pickle
import socket
from collections import namedtuple

# Named tuples, not dataclasses: the reaper imports this module, and with dataclasses (inspect, ast and
# the rest), subprocess and pathlib it held 7 MiB of its own memory instead of 5 through a whole course.

MESSAGE_BYTES = 1 << 16


class ForkRequest(namedtuple("ForkRequest", "number target requested mode serves cwd")):
    """command -> zygote: start a checker on the two pipe ends sent along (its read end, its write end).
    `number` is the command's name for the request, echoed in the reply; `mode` a backends.Mode;
    `serves` the targets it checks for; `cwd` the command's working folder, the checker's (the zygote
    keeps none busy)."""

    __slots__ = ()


class Retire(namedtuple("Retire", "")):
    """command -> zygote: fork no more; end once the checkers forked so far have ended (the command's
    environment changed, or its pool has every checker it will ask for). Until then only their ends are
    left to report, and a small process takes the zygote's place to do that (zygote.py, the reaper)."""

    __slots__ = ()


class Idle(namedtuple("Idle", "")):
    """zygote -> command: no checker of mine has run for IDLE_SECONDS; retire me unless one is on its way."""

    __slots__ = ()


class Forked(namedtuple("Forked", "number pid")):
    """zygote -> command: request `number`'s checker is process `pid` (forked, or started fresh)."""

    __slots__ = ()


class Ended(namedtuple("Ended", "pid returncode")):
    """zygote -> command: checker `pid` ended; `returncode` as subprocess gives it (-N: killed by signal N)."""

    __slots__ = ()


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
