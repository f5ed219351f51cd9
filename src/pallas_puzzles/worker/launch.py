"""Starting checker processes, the first one before the CLI has even parsed its arguments.

Importing JAX takes about a second. A command that is going to check something
starts its checker first thing (`start_early`, from `pallas_puzzles.__main__`),
so that import overlaps the CLI's own imports, argument parsing and workspace
reading. A checker starts for one target (and may serve the others of its
process group), so the early start reads just enough to guess it: the puzzle
named on the command line, else the workspace's current puzzle, else the
course's first (`planned_check`). The first Worker asking for the same target,
backend and mode takes that process over (`take`); a command that ends without
one ends it.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pallas_puzzles import environment
from pallas_puzzles.backends import AUTO, CHOICES, TPU, Mode
from pallas_puzzles.worker import cores

if TYPE_CHECKING:
    from pallas_puzzles.worker.forked import ForkedProcess
    from pallas_puzzles.worker.protocol import Channel

# The commands that check with a worker, and the mode each checks in; no command means watch.
CHECKING_COMMANDS = {"verify": Mode.RUN, "watch": Mode.RUN, "perf": Mode.RUN, "show": Mode.RUN, "lower": Mode.LOWER}
BACKEND_OPTIONS = ("--backend", "-b")


# glibc's malloc gives each of a checker's threads (XLA's, the interpreters') an arena of its own, and
# what a check frees there stays: after the TPU chapters' 31 puzzles and a clear of JAX's caches, a
# checker kept 44 MiB more than at start with one arena per thread, 30 with two; the whole course's peak
# fell 15 MiB (PSS), and no check was slower. The user's own setting wins. Other C libraries ignore it.
CHECKER_ARENAS = "2"  # environment.ALLOCATOR_ARENAS, where it is unset

# numpy's OpenBLAS starts a thread per core when numpy is imported, and by its design they wait for work
# by spinning. With one thread per checker the whole course cold took 6.4-6.9 s instead of 7.5-8.3 s
# (2 vCPUs, two checkers side by side, one sitting); a check's products are small. The user's own
# setting wins.
CHECKER_BLAS_THREADS = "1"  # environment.BLAS_THREADS, where it is unset


@dataclass
class Spawned:
    """A checker process just started: it is still importing JAX until it sends Ready."""

    target: str
    requested: str
    mode: Mode
    serves: tuple[str, ...]  # the targets it may check for, `target` first (one process group)
    process: subprocess.Popen[bytes] | ForkedProcess
    channel: Channel

    def suits(self, target: str, requested: str, mode: Mode, serves: tuple[str, ...]) -> bool:
        """Can it be the checker asked for? Started for that target, backend and mode, and serving
        every target asked of it (more cost nothing: a target starts on its first check)."""
        return ((self.target, self.requested, self.mode) == (target, requested, mode)
                and set(serves) <= set(self.serves))

    def end(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.channel.close()


def spawn(target: str, requested: str, mode: Mode, serves: tuple[str, ...] = ()) -> Spawned:
    """A checker process for `target` that can switch to the other targets of `serves` (its group): forked
    by the zygote where a checker runs JAX on the CPU only (worker/forked.py), else a program of its own."""
    from pallas_puzzles.worker import forked

    serves = (target, *(name for name in serves if name != target))
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    child_environment = environment.for_child({environment.ALLOCATOR_ARENAS.name: CHECKER_ARENAS,
                                               environment.BLAS_THREADS.name: CHECKER_BLAS_THREADS})
    process: subprocess.Popen[bytes] | forked.ForkedProcess | None
    try:
        process = forked.fork_checker(target, requested, mode, serves, to_child_r, from_child_w, child_environment)
        if process is None:
            # A plain subprocess with two pipes, not multiprocessing's spawn: spawn
            # re-runs the parent's main module in the child (slow, and it breaks
            # scripts without a __main__ guard).
            process = subprocess.Popen(
                [sys.executable, "-m", "pallas_puzzles.worker", str(to_child_r), str(from_child_w),
                 target, requested, mode.value, ",".join(serves)],
                pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, env=child_environment)
            cores.CHECKERS.started(process)
    except OSError:
        for fd in (to_child_w, from_child_r):
            os.close(fd)
        raise
    finally:
        os.close(to_child_r)
        os.close(from_child_w)
    from pallas_puzzles.worker.protocol import Channel  # 22 ms, once the checker is on its way

    return Spawned(target, requested, mode, serves, process, Channel(from_child_r, to_child_w))


def _likely_targets(key: str | None, every_puzzle: bool) -> tuple[str, ...]:
    """The targets the first checker will serve, the one it starts with first: the target of the puzzle
    named (or else the workspace's current one); for `--all`, the course's first process group
    (checking.service checks it first, in course order). A guess: any doubt gives the course's first
    puzzle's target, and a wrong guess only costs the time of a second start."""
    from pallas_puzzles.course.source import course_of
    from pallas_puzzles.workspace.folder import find_workspace

    workspace = find_workspace(Path.cwd())
    course = course_of(workspace)
    if every_puzzle:
        from pallas_puzzles.engine.targets import process_groups

        try:
            return process_groups([puzzle.target for puzzle in course.puzzles])[0]
        except Exception:  # a course target that cannot load: its checks will say so
            return (course.puzzles[0].target,)
    try:
        if key is None:
            state = json.loads(workspace.state_file.read_text(encoding="utf-8"))
            key = str(state["current"])
        return (course.find(key).target,)
    except Exception:
        return (course.puzzles[0].target,)


def planned_check(args: list[str]) -> tuple[str, str, Mode, tuple[str, ...]] | None:
    """(target, backend, mode, the targets it serves) of the checker this command line will want, or None
    when it wants none."""
    if "--help" in args or "-h" in args or "--version" in args:
        return None
    backend, command, key, index = AUTO, None, None, 0
    while index < len(args):
        arg = args[index]
        if arg in BACKEND_OPTIONS:
            if index + 1 >= len(args):
                return None
            backend, index = args[index + 1], index + 2
            continue
        if arg.startswith("--backend="):
            backend = arg.split("=", 1)[1]
        elif not arg.startswith("-") and command is None:
            command = arg
        elif not arg.startswith("-") and key is None:
            key = arg
        index += 1
    mode = CHECKING_COMMANDS.get(command or "watch")
    if mode is None:
        return None
    backend = TPU.name if mode is Mode.LOWER else backend.strip().lower()
    if backend not in CHOICES:
        return None
    try:
        serves = _likely_targets(key, "--all" in args)
    except Exception:  # no course to read: the command will say so itself
        return None
    return serves[0], backend, mode, serves


_early: Spawned | None = None


def start_early(args: list[str]) -> None:
    """Start the checker this command line will want, if any; a failure here only costs speed."""
    global _early
    plan = planned_check(args)
    if plan is None or _early is not None:
        return
    try:
        _early = spawn(*plan)
    except OSError:
        return
    atexit.register(discard)


def take(target: str, requested: str, mode: Mode, serves: tuple[str, ...] = ()) -> Spawned | None:
    """The early checker if it suits; one that does not is ended."""
    global _early
    early, _early = _early, None
    if early is None:
        return None
    if early.suits(target, requested, mode, serves):
        return early
    early.end()
    return None


def discard() -> None:
    """End an early checker that no command took (the command failed before checking)."""
    global _early
    early, _early = _early, None
    if early is not None:
        early.end()
