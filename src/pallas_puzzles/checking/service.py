"""Checking a list of puzzles for `verify` and `lower`: stored verdicts first, then checkers.

A file whose verdict is in the result cache is not checked again, and when
every verdict is stored no checker (and no JAX) is started at all. The rest go
to a pool of checker processes; each verdict is handed to the caller in course
order, and stored.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.checking import support
from pallas_puzzles.checking.cache import ResultCache
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.report.live import RunProgress
from pallas_puzzles.results import CheckResult
from pallas_puzzles.workspace.folder import Workspace

Say = Callable[[str], None]
Verdict = Callable[[Puzzle, CheckResult], None]


@dataclass
class Run:
    """What a command asked for: these puzzles' files, on one backend, in one mode."""

    workspace: Workspace
    files: dict[str, Path]  # puzzle name -> the file to check, in course order
    requested: str
    mode: Mode = Mode.RUN
    # False for grades: a stored verdict is a file in the workspace, which whoever hands it in controls.
    use_stored: bool = True
    results: list[CheckResult] = field(default_factory=list)
    skipped: list[Puzzle] = field(default_factory=list)
    from_cache: int = 0


def _announce(run: Run, backend: Backend, say: Say) -> None:
    if run.mode is Mode.LOWER:
        say("Checking that kernels lower for a TPU (Mosaic's lowering, cross-compiled on this machine)…")
    else:
        say(f"Checking on the {backend.name} backend…")


def check_all(run: Run, puzzles: list[Puzzle], progress: RunProgress, say: Say, warn: Say,
              refuse: Callable[[Backend], None], verdict: Verdict) -> Backend:
    """Check `puzzles` (skipping those that cannot run here); returns the backend used.

    `refuse` may refuse the backend (a single puzzle that does not run on it);
    `verdict` is called with each result in course order, as soon as it is known.
    """
    from pallas_puzzles.worker.pool import WorkerPool, check_by_target, pool_size

    cache = ResultCache(run.workspace, run.requested, run.mode)
    with contextlib.ExitStack() as stack:
        started: list[WorkerPool] = []  # a pool started early, only to learn what `auto` is

        def start_pool(target: str, jobs: int) -> WorkerPool:
            pool = stack.enter_context(WorkerPool(run.requested, pool_size(jobs), run.mode, target))
            pool.start()
            if pool.warning:
                warn(pool.warning)
            return pool

        backend = cache.resolved
        if backend is None:
            started.append(start_pool(puzzles[0].target, len(puzzles)))
            backend = started[0].backend
        refuse(backend)
        run.skipped = [p for p in puzzles if support.refusal(p, backend, run.mode) is not None]
        todo = [p for p in puzzles if p not in run.skipped]
        keys = {p.name: cache.key(p, run.files[p.name]) for p in todo}
        stored = {p.name: r for p in todo if run.use_stored and (r := cache.get(keys[p.name], p)) is not None}
        unchecked = [(p, run.files[p.name]) for p in todo if p.name not in stored]
        _announce(run, backend, say)

        def open_pool(target: str, jobs: int) -> WorkerPool:
            early = next((p for p in started if p.target == target), None)
            if early is None:
                return start_pool(target, jobs)
            started.remove(early)
            return early

        results = check_by_target(unchecked, open_pool, on_start=progress.started, on_done=progress.finished)
        for puzzle in todo:
            result = stored.get(puzzle.name)
            if result is None:
                result = next(results)
                cache.put(keys[puzzle.name], puzzle, run.files[puzzle.name], result)
            else:
                run.from_cache += 1
                progress.finished(puzzle, result, cached=True)
            run.results.append(result)
            verdict(puzzle, result)
    return backend
