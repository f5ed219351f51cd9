"""Typed messages between the CLI (parent) and the checker process (child).

They travel pickled over two pipes; each is a small frozen dataclass, so both
sides agree on what a message holds and a wrong one fails loudly.
"""

from __future__ import annotations

from dataclasses import dataclass
from multiprocessing.connection import Connection

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.results import CaseSpan, CheckResult


@dataclass(frozen=True)
class Ready:
    """child -> parent: JAX is imported; checks run on `backend`."""

    backend: str
    warning: str | None = None


@dataclass(frozen=True)
class StartFailed:
    """child -> parent: the checker cannot start; `message` is one sentence for the learner."""

    message: str


@dataclass(frozen=True)
class CheckRequest:
    """parent -> child: check one puzzle's file (the puzzle travels whole: the child reads no course)."""

    puzzle: Puzzle
    file: str
    fail_fast: bool = True
    timed_runs: int = 0  # on an accelerator, time each passing case over this many calls (perf)
    cases: CaseSpan | None = None  # only these shape cases: a part of a check two checkers share


@dataclass(frozen=True)
class CheckReply:
    """child -> parent: the verdict."""

    result: CheckResult


@dataclass(frozen=True)
class Stop:
    """parent -> child: finish and exit."""


ToChild = CheckRequest | Stop
ToParent = Ready | StartFailed | CheckReply


class Channel:
    """One read and one write pipe end, used as a two-way connection."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.reader = Connection(read_fd, writable=False)
        self.writer = Connection(write_fd, readable=False)

    def send(self, message: ToChild | ToParent) -> None:
        self.writer.send(message)

    def recv(self) -> ToChild | ToParent:
        return self.reader.recv()

    def poll(self, timeout: float) -> bool:
        return self.reader.poll(timeout)

    def close(self) -> None:
        self.reader.close()
        self.writer.close()
