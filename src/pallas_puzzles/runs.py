"""Checking a list of puzzles for `verify` and `lower`: stored verdicts first, then checkers.

A file whose verdict is in the result cache is not checked again, and when
every verdict is stored no checker (and no JAX) is started at all. The rest go
to a pool of checker processes; each verdict is handed to the caller in course
order, and stored.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pallas_puzzles import versions
from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.cache import ResultCache
from pallas_puzzles.metadata import Puzzle
from pallas_puzzles.report.live import RunProgress
from pallas_puzzles.results import CheckResult
from pallas_puzzles.workspace import Workspace

Say = Callable[[str], None]
Verdict = Callable[[Puzzle, CheckResult], None]


@dataclass
class Run:
    """What a command asked for: these puzzles' files, on one backend, in one mode."""

    workspace: Workspace
    files: dict[int, Path]  # puzzle number -> the file to check, in course order
    requested: str
    mode: Mode = Mode.RUN
    results: list[CheckResult] = field(default_factory=list)
    skipped: list[Puzzle] = field(default_factory=list)
    from_cache: int = 0


def _announce(run: Run, backend: Backend, say: Say) -> None:
    if run.mode is Mode.LOWER:
        say("Checking that kernels lower for a TPU (Mosaic's lowering, cross-compiled on this machine)…")
    else:
        say(f"Checking on the {backend.name} backend…")


def check_all(run: Run, puzzles: list[Puzzle], progress: RunProgress, say: Say, warn: Say,
              support: Callable[[Backend], None], verdict: Verdict) -> Backend:
    """Check `puzzles` (skipping those the backend does not run); returns the backend used.

    `support` may refuse the backend (a single puzzle that does not run on it);
    `verdict` is called with each result in course order, as soon as it is known.
    """
    from pallas_puzzles.worker.pool import WorkerPool, pool_size

    cache = ResultCache(run.workspace, run.requested, run.mode)
    pools: list[WorkerPool] = []
    with contextlib.ExitStack() as stack:

        def start_pool(jobs: int) -> Backend:
            pool = stack.enter_context(WorkerPool(run.requested, pool_size(jobs), run.mode))
            backend = pool.start()
            if pool.warning:
                warn(pool.warning)
            pools.append(pool)
            return backend

        backend = cache.resolved or start_pool(len(puzzles))  # only a checker can tell what `auto` is
        support(backend)
        run.skipped = [p for p in puzzles if not p.supports(backend)
                       or versions.missing_requirement(p.number, p.min_jax)]
        todo = [p for p in puzzles if p not in run.skipped]
        keys = {p.number: cache.key(p, run.files[p.number]) for p in todo}
        stored = {p.number: r for p in todo if (r := cache.get(keys[p.number], p)) is not None}
        unchecked = [(p, run.files[p.number]) for p in todo if p.number not in stored]
        if unchecked and not pools:
            backend = start_pool(len(unchecked))
        _announce(run, backend, say)
        fresh: Iterator[CheckResult] = iter(())
        if unchecked:
            fresh = pools[0].check_in_order(unchecked, on_start=progress.started, on_done=progress.finished)
        for puzzle in todo:
            result = stored.get(puzzle.number)
            if result is None:
                result = next(fresh)
                cache.put(keys[puzzle.number], puzzle, run.files[puzzle.number], result)
            else:
                run.from_cache += 1
                progress.finished(puzzle, result, cached=True)
            run.results.append(result)
            verdict(puzzle, result)
    return backend
