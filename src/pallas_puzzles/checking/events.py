"""What a checking run tells its listeners as it goes, as pytest tells its reporters.

A listener (the progress bar, a command's output) overrides the hooks it cares about. Every hook
is called on the thread that asked for the run, one at a time, as things happen; a listener that
prints verdicts one after another sets `in_job_order`, and then gets `skipped`, `cached` and
`finished` in the order of the jobs, each as soon as every earlier job has had its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.checking.jobs import Job, Outcome, RunReport
from pallas_puzzles.checking.support import Refusal
from pallas_puzzles.results import CheckResult


class Listener:
    """The hooks of a checking run; each does nothing unless overridden."""

    in_job_order: ClassVar[bool] = False

    def resolved(self, backend: Backend, mode: Mode) -> None:
        """The backend of the jobs that follow is known (once per backend and mode asked for)."""

    def warned(self, message: str) -> None:
        """A checker started with a warning (a jax newer than any tested); said once per run."""

    def skipped(self, job: Job, refusal: Refusal) -> None:
        """The job cannot be checked here (support.refusal): no verdict, and why."""

    def cached(self, job: Job, result: CheckResult) -> None:
        """The job's verdict was stored by an earlier check of the same file: not checked again."""

    def started(self, job: Job) -> None:
        """A checker has taken the job."""

    def finished(self, job: Job, result: CheckResult) -> None:
        """The job's check is over. A result of status ERROR is the checker's failure, not a verdict."""

    def done(self, report: RunReport) -> None:
        """Every job has its outcome."""


class Dispatcher:
    """Hands a run's events to its listeners: as they happen, or in job order to those that ask."""

    def __init__(self, listeners: Sequence[Listener], jobs: Sequence[Job]) -> None:
        self.listeners = list(listeners)
        self.outcomes: list[Outcome | None] = [None] * len(jobs)
        self._jobs = jobs
        self._next = 0  # the first job whose outcome the in-order listeners have not had
        self._warnings: set[str] = set()

    def resolved(self, backend: Backend, mode: Mode) -> None:
        for listener in self.listeners:
            listener.resolved(backend, mode)

    def warned(self, message: str) -> None:
        if message not in self._warnings:
            self._warnings.add(message)
            for listener in self.listeners:
                listener.warned(message)

    def started(self, index: int) -> None:
        for listener in self.listeners:
            listener.started(self._jobs[index])

    def settled(self, index: int, outcome: Outcome) -> None:
        """A job has its outcome: tell those who listen as it happens, then release what is now in order."""
        self.outcomes[index] = outcome
        for listener in self.listeners:
            if not listener.in_job_order:
                _tell(listener, outcome)
        ordered = [listener for listener in self.listeners if listener.in_job_order]
        while self._next < len(self.outcomes) and (ready := self.outcomes[self._next]) is not None:
            for listener in ordered:
                _tell(listener, ready)
            self._next += 1

    def done(self, report: RunReport) -> None:
        for listener in self.listeners:
            listener.done(report)


def _tell(listener: Listener, outcome: Outcome) -> None:
    if outcome.refusal is not None:
        listener.skipped(outcome.job, outcome.refusal)
    elif outcome.result is not None and outcome.cached:
        listener.cached(outcome.job, outcome.result)
    elif outcome.result is not None:
        listener.finished(outcome.job, outcome.result)
