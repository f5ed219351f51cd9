"""What a checker process keeps of its checks in memory, and when it lets go.

JAX keeps every program a check traced, lowered and compiled, and a learner's save is new code, so
nothing a check leaves behind is reused by the next save; yet it piles up. Measured per save of one
puzzle's reference solution (jax 0.12.0.1): tma_copy 5 MiB, wgmma_matmul 7, a Blackwell warp-specialised
matmul 24, pipeline_cores 1.3, a pallas_call puzzle nothing; across puzzles, the whole course in one
checker grew from 220 MiB to 450. A watch session of a hundred saves in the GPU chapters would reach
the learner's memory limit and stop a correct kernel.

So after every check, once its reply is on its way (the learner waits for nothing), a checker whose own
memory would pass MEMORY_CEILING_MIB if the next check added what this one did clears JAX's caches and
hands the freed heap back to the system. Below the ceiling the caches stay: the TPU chapters' small
programs are reused from puzzle to puzzle. With the fast path off (PALLAS_PUZZLES_FAST=0) they go after
every check. The notebook API checks in the learner's own process, which grew the same way with every
re-run cell: there the ceiling bounds what the checks added (NOTEBOOK_GROWTH_MIB since the first check
or the last clear).
Nothing here imports JAX at module level.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field

from pallas_puzzles import environment

# Anonymous memory (heap, JAX's caches) a checker may reach before it lets go: about 60 MiB once JAX is
# imported, 85 with Pallas's interpreters, 120 after a dozen TPU puzzles, 250 after the whole course if
# never cleared; a clear brings 175 back to 115. The JAX libraries' own pages (120-130 MiB) come on top.
# First chosen when the caches were cleared only between puzzles: the whole course in one checker peaked
# at 355 MiB with 150 (jax 0.10.2; 347 on 0.12.0.1) and 401 with 200, as fast. Looking ahead (`keeps`), two
# checkers' whole course peaked at 336-348 MiB with 150 and 316-333 with 140, as fast (6.04 and 6.06 s
# cold; jax 0.12.0.1, two cores, one sitting).
MEMORY_CEILING_MIB = 140.0
# In a notebook the checks run in the learner's own process (notebook/api.py), whose memory is theirs:
# there the caches go once the checks have added this much since the first check (or the last clear).
NOTEBOOK_GROWTH_MIB = 150.0
# Where a process's memory cannot be read (not Linux): the caches go after this many checks.
CHECKS_PER_CLEAR = 10


def private_memory_mib() -> float | None:
    """This process's anonymous resident memory in MiB (Linux's /proc); None where it cannot be read."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def trim_heap() -> None:
    """Hand the heap's free memory back to the system (glibc's malloc_trim; elsewhere nothing)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        ctypes.CDLL(name).malloc_trim(0)
    except (OSError, AttributeError, TypeError):
        pass  # not glibc: its allocator decides


def forget_compiled() -> None:
    """Drop JAX's in-memory caches (traced, lowered and compiled programs) and collect what they held."""
    import jax

    jax.clear_caches()
    gc.collect()


@dataclass
class CacheRelease:
    """One process's rule: keep JAX's caches while under `ceiling_mib`, else clear them (0: clear after
    every check), and then trim the heap (`trim`; glibc keeps freed memory otherwise). `relative`: the
    ceiling bounds what the checks added since the first check or the last clear, not the whole process.
    `looks_ahead`: clear already when the next check, adding what the last one did, would pass the ceiling.
    """

    ceiling_mib: float = MEMORY_CEILING_MIB
    trim: bool = True
    relative: bool = False
    looks_ahead: bool = True
    checks_kept: int = field(default=0, init=False)  # checks since the caches were last cleared
    baseline_mib: float | None = field(default=None, init=False)  # where `relative` counts from
    last_mib: float | None = field(default=None, init=False)  # the memory the last check left

    @classmethod
    def from_environment(cls) -> CacheRelease:
        """A checker process's rule (worker/child.py)."""
        return cls(ceiling_mib=0.0, trim=False) if environment.FAST.turned_off() else cls()

    @classmethod
    def for_notebook(cls) -> CacheRelease:
        """The rule in a notebook's kernel, the learner's own process (notebook/api.py). A clear there also
        drops the learner's own compiled functions (JAX recompiles them on their next call)."""
        if environment.FAST.turned_off():
            return cls(ceiling_mib=0.0, trim=False, relative=True)
        # Not looking ahead: what the process grew by since the last check is the learner's cells' as much as
        # the check's, and a clear costs them their own compiled functions.
        return cls(ceiling_mib=NOTEBOOK_GROWTH_MIB, relative=True, looks_ahead=False)

    def keeps(self) -> bool:
        """May the caches stay after this check? While the process is under the ceiling, and (looking ahead)
        would stay under it if the next check added what this one did; where its memory cannot be read, for
        a few checks. (Clearing only once past the ceiling let each checker end one check's growth above
        it: the whole course peaked with both checkers there.)"""
        if self.ceiling_mib <= 0:
            return False
        used = private_memory_mib()
        if used is None:
            return self.checks_kept < CHECKS_PER_CLEAR
        if self.relative and self.baseline_mib is None:
            self.baseline_mib = used
        growth = max(0.0, used - self.last_mib) if self.looks_ahead and self.last_mib is not None else 0.0
        self.last_mib = used
        return used + growth - (self.baseline_mib or 0.0) < self.ceiling_mib

    def after_check(self) -> bool:
        """Called once a check's reply has been sent; True when the caches were cleared."""
        self.checks_kept += 1
        if self.keeps():
            return False
        self.checks_kept = 0
        forget_compiled()
        if self.trim:
            trim_heap()
        self.last_mib = private_memory_mib()
        if self.relative:
            self.baseline_mib = self.last_mib
        return True
