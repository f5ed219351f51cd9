"""A live progress bar for long runs (`verify --all`, `grade`, `dev check`) in a terminal.

It listens to the checking run's events and shows the jobs done of the total, the puzzles being
checked now, the time elapsed and a tally of passes, failures and checker errors as outcomes land;
the full result views print above it. Piped, or with `--json`, it shows nothing at all: plain
output only.
"""

from __future__ import annotations

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

from pallas_puzzles.checking.events import Listener
from pallas_puzzles.checking.jobs import Job
from pallas_puzzles.checking.support import Refusal
from pallas_puzzles.results import CheckResult, Status


class RunProgress(Listener):
    """Progress of a checking run of `total` jobs; a no-op unless `enabled`."""

    def __init__(self, console: Console, total: int, verb: str = "Checking", enabled: bool = True) -> None:
        self.enabled = enabled and console.is_terminal and total > 1
        self._running: list[int] = []
        self._passed = self._failed = self._errors = self._cached = 0
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

    def started(self, job: Job) -> None:
        self._running.append(job.puzzle.number)
        self._refresh()

    def finished(self, job: Job, result: CheckResult) -> None:
        if job.puzzle.number in self._running:
            self._running.remove(job.puzzle.number)
        self._count(result)

    def cached(self, job: Job, result: CheckResult) -> None:
        self._cached += 1
        self._count(result)

    def skipped(self, job: Job, refusal: Refusal) -> None:
        self._refresh(advance=1)

    def _count(self, result: CheckResult) -> None:
        if result.status is Status.ERROR:  # the checker failed: neither a pass nor a fail
            self._errors += 1
        elif result.passed:
            self._passed += 1
        else:
            self._failed += 1
        self._refresh(advance=1)

    def _refresh(self, advance: int = 0) -> None:
        if not self.enabled:
            return
        tally = f"[green]{self._passed} ✓[/] [red]{self._failed} ✗[/]"
        if self._errors:
            tally += f" [yellow]{self._errors} checker error{'s' if self._errors != 1 else ''}[/]"
        if self._cached:
            tally += f" [dim]({self._cached} unchanged)[/]"
        running = f"checking {', '.join(map(str, sorted(self._running)))}" if self._running else ""
        self._bar.update(self._task, advance=advance, tally=tally, running=running)
