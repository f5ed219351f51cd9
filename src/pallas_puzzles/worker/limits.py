"""What a check may use: the puzzle's time limit, and the memory and seconds whoever runs it allows."""

from __future__ import annotations

import os
from dataclasses import dataclass

from pallas_puzzles import environment
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.errors import UserError


@dataclass(frozen=True)
class Limits:
    """What one check may use beyond the puzzle's own time limit (`grade` sets them; a learner's own
    checks have `learner_limits`)."""

    seconds: float = 0.0  # 0: the puzzle's time limit (time_limit below)
    memory_mib: int = 0  # the checker process's resident memory, JAX included; 0: no limit
    raise_memory: str = ""  # how whoever runs the check allows more memory, for the sentence when it is hit


STARTUP_TIMEOUT = 180.0  # seconds a checker may take to start (import JAX and start its target)
LEARNER_MEMORY_CAP_MIB = 4096  # a puzzle's check needs a few hundred MiB, JAX included


def default_memory_mib() -> int:
    """Half the machine's memory, at most LEARNER_MEMORY_CAP_MIB: a kernel that builds a huge temporary is
    stopped long before the machine swaps, and no puzzle comes near it."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows): the cap alone
        return LEARNER_MEMORY_CAP_MIB
    return int(max(1024, min(LEARNER_MEMORY_CAP_MIB, total / 2)))


def learner_limits() -> Limits:
    """The limits of a learner's own checks: each puzzle's time limit, and memory as
    PALLAS_PUZZLES_MEMORY_LIMIT says (MiB; 0: none), else `default_memory_mib`."""
    variable = environment.MEMORY_LIMIT
    given = variable.value().strip()
    if not given:
        return Limits(memory_mib=default_memory_mib(), raise_memory=f"set {variable.name} to more MiB")
    if not given.isdigit():
        raise UserError(f"{variable.name} must be a whole number of MiB (0 for no limit); it is '{given}'.")
    return Limits(memory_mib=int(given), raise_memory=f"set {variable.name} to more MiB")


def resident_mib(pid: int) -> float:
    """A process's resident memory in MiB (Linux's /proc); 0 where it cannot be read."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as handle:
            pages = int(handle.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def time_limit(puzzle: Puzzle) -> float:
    """Seconds a check of this puzzle may run: the puzzle's own limit unless overridden."""
    override = environment.TIME_LIMIT.value().strip()
    if not override:
        return puzzle.limit_seconds
    try:
        seconds = float(override)
    except ValueError:
        seconds = -1.0
    if seconds <= 0:
        raise UserError(f"{environment.TIME_LIMIT.name} must be a positive number of seconds; it is '{override}'.")
    return seconds
