"""Watch mode: check the current puzzle on every save, with keys that always answer.

`events` holds the typed events and their sources (file watcher, keyboard,
debounce), `runner` runs checks in a background thread, and `loop` is the one
thread that decides what each event means; `run_watch` below wires the real
worker, file watcher and keyboard to it. Nothing here imports jax (checks run
in the worker process) or `commands` (which calls `run_watch`).
"""

from __future__ import annotations

import queue

from rich.console import Console

from pallas_puzzles.checking import support
from pallas_puzzles.checking.cache import ResultCache
from pallas_puzzles.errors import EXIT_INTERRUPTED
from pallas_puzzles.report import terminal
from pallas_puzzles.watch.events import (
    CheckFinished,
    Debouncer,
    Event,
    EventQueue,
    KeyEvent,
    PuzzleFileHandler,
    QuitEvent,
    SaveEvent,
    key_reader,
    start_observer,
)
from pallas_puzzles.watch.loop import GOODBYE, WatchLoop, say_goodbye
from pallas_puzzles.watch.runner import CachingChecker, Checker, CheckRunner
from pallas_puzzles.worker.by_target import WorkersByTarget
from pallas_puzzles.worker.limits import learner_limits
from pallas_puzzles.workspace.progress import Progress

__all__ = [
    "CachingChecker",
    "GOODBYE",
    "CheckFinished",
    "CheckRunner",
    "Checker",
    "Debouncer",
    "Event",
    "EventQueue",
    "KeyEvent",
    "PuzzleFileHandler",
    "QuitEvent",
    "SaveEvent",
    "WatchLoop",
    "key_reader",
    "run_watch",
    "say_goodbye",
    "start_observer",
]


def run_watch(console: Console, progress: Progress, requested_backend: str, poll: bool) -> int:
    """Watch mode with the real worker, file watcher and keyboard; returns the exit code."""
    events: EventQueue = queue.Queue()
    try:
        with WorkersByTarget(requested_backend, limits=learner_limits()) as workers:
            console.print("Starting JAX…", style="dim")
            runnable = [p for p in (progress.current, *progress.course.puzzles) if support.refusal(p, None) is None]
            backend = workers.start(runnable[0].target if runnable else progress.current.target)
            if workers.warning:
                terminal.warning(console, workers.warning)
            handler = PuzzleFileHandler({p.file for p in progress.course.puzzles}, events)
            observer, how = start_observer(progress.workspace.exercises, handler, poll)
            console.print(f"Backend: {backend.name} · watching {progress.workspace.exercises} · "
                          f"file watcher: {how}", style="dim")
            try:
                with key_reader(events) as keys:
                    checker = CachingChecker(workers, ResultCache(progress.workspace, backend.name))
                    return WatchLoop(console, progress, checker, events, keys=keys, backend=backend).run()
            finally:
                observer.stop()
                observer.join(timeout=2)
    except KeyboardInterrupt:  # Ctrl-C before the loop started (or while it shut down)
        say_goodbye(console)
        return EXIT_INTERRUPTED
