"""When the cores of one kernel wait for ever: the rule dma_watch applies to kernels on several cores.

On one core, a wait that no pending copy can end is stuck at once: nothing runs beside it. On
several, another core may still signal, so a wait is stuck only when every core still running is
waiting too, each for a count that nothing pending can bring. This is the multi-chip target's
deadlock rule (tpu_multichip/watch.py: every device stuck in such a wait or finished) for the
cores of one device: eager_cores.py says which cores still run, dma_watch which wait each is in.
The picture must be seen twice in a row (the interpreter's waits look about every 0.1 s), so that
a core signalled a moment ago has had time to leave its wait. No timer: a slow core that will
signal is never called stuck, and a stuck kernel stops within a few tenths of a second.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pallas_puzzles.engine.learner_lines import info_lines
from pallas_puzzles.source_line import SourceLine


@dataclass(frozen=True)
class CoreWait:
    """One core's wait, as seen at one look."""

    core: int  # the global core id
    wanted: int
    has: int
    pending: bool  # a copy is queued on the semaphore that could still add to it
    where: Any = None  # JAX's record of the line that waits (a SourceInfo), when known


def stuck(waits: Iterable[CoreWait], running: frozenset[int]) -> tuple[CoreWait, ...] | None:
    """The waits of the running cores, when each of them is stuck; None while any core can move."""
    by_core = {wait.core: wait for wait in waits}
    if not running or any(core not in by_core for core in running):
        return None
    found = tuple(by_core[core] for core in sorted(running))
    if any(wait.has >= wait.wanted or wait.pending for wait in found):
        return None
    return found


def picture(waits: tuple[CoreWait, ...]) -> tuple[tuple[int, int, int], ...]:
    """What must look the same twice in a row."""
    return tuple((wait.core, wait.wanted, wait.has) for wait in waits)


def sentence(waits: tuple[CoreWait, ...], cores: int, learner_file: str) -> str:
    """What each core is doing, in one sentence: who waits where for what, and who has finished."""
    parts = []
    for wait in waits:
        lines = info_lines(wait.where, learner_file)
        at = f" at line {lines[0].line}" if lines else ""
        parts.append(f"core {wait.core} waits{at} for a count of {wait.wanted} (it has {wait.has})")
    finished = [str(core) for core in range(cores) if core not in {wait.core for wait in waits}]
    if finished:
        parts.append(f"core{'s' if len(finished) > 1 else ''} {' and '.join(finished)} "
                     f"{'have' if len(finished) > 1 else 'has'} finished the kernel")
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + ": no core is left to signal, so the kernel would wait for ever."


def lines(waits: tuple[CoreWait, ...], learner_file: str) -> tuple[SourceLine, ...]:
    """The learner's lines of the waits, each once."""
    return tuple(dict.fromkeys(line for wait in waits for line in info_lines(wait.where, learner_file)[:1]))
