"""A live progress bar for long runs (`verify --all`, `lower --all`) in a terminal.

It shows the puzzles done of the total, the ones being checked now, the time
elapsed and a tally of passes and failures as verdicts land; the full result
views print above it. Piped, or with `--json`, it shows nothing at all: plain
output only. Worker threads call `started`/`finished`; rich's Progress locks.
"""

from __future__ import annotations

import threading
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.results import CheckResult


class RunProgress:
    """Progress of checking a list of puzzles; a no-op unless `enabled`."""

    def __init__(self, console: Console, total: int, verb: str = "Checking", enabled: bool = True) -> None:
        self.enabled = enabled and console.is_terminal and total > 1
        self._lock = threading.Lock()
        self._running: list[int] = []
        self._passed = self._failed = self._cached = 0
        self._bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("{task.fields[tally]}"), TextColumn("{task.fields[running]}", style="dim"),
            console=console, transient=True,
        )
        self._task: TaskID = self._bar.add_task(verb, total=total, tally="", running="")

    def __enter__(self) -> RunProgress:
        if self.enabled:
            self._bar.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.enabled:
            self._bar.stop()

    def started(self, puzzle: Puzzle) -> None:
        with self._lock:
            self._running.append(puzzle.number)
            self._refresh()

    def finished(self, puzzle: Puzzle, result: CheckResult, cached: bool = False) -> None:
        with self._lock:
            if puzzle.number in self._running:
                self._running.remove(puzzle.number)
            if result.passed:
                self._passed += 1
            else:
                self._failed += 1
            self._cached += cached
            self._refresh(advance=1)

    def _refresh(self, advance: int = 0) -> None:
        if not self.enabled:
            return
        tally = f"[green]{self._passed} ✓[/] [red]{self._failed} ✗[/]"
        if self._cached:
            tally += f" [dim]({self._cached} unchanged)[/]"
        running = f"checking {', '.join(map(str, sorted(self._running)))}" if self._running else ""
        self._bar.update(self._task, advance=advance, tally=tally, running=running)
