"""What the checking service is asked (jobs, options) and what it answers (one run report).

A job is one file to check as one puzzle, on a backend, in a mode. Commands that carry more
about a job (grade's submission, dev check's subject, the mutation harness's mutant) subclass
`Job`; the report's core is the same for all of them: which job, its result or why it was
skipped, the backend, the timing.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.checking.support import Refusal
from pallas_puzzles.course.model import Course, Puzzle
from pallas_puzzles.results import CheckResult, Status

if TYPE_CHECKING:
    from pallas_puzzles.worker.limits import Limits
    from pallas_puzzles.workspace.folder import Workspace


@dataclass(frozen=True)
class Job:
    """Check `file` as `puzzle`'s."""

    puzzle: Puzzle
    file: Path
    requested: str  # the backend asked for: "auto", "interpret", "gpu", "tpu"
    mode: Mode = Mode.RUN


@dataclass(frozen=True)
class Options:
    """How a run may go about its jobs."""

    fail_fast: bool = True  # a check stops at its first failing shape case
    limits: Limits | None = None  # grade's time and memory limits; None: each puzzle's own time limit
    # Where fresh verdicts are stored (verify). None for grade and dev check: a stored verdict lives in
    # a file that whoever hands the work in controls, so it is never read nor written for them.
    workspace: Workspace | None = None
    use_stored: bool = True  # answer from the verdicts stored in `workspace` (an autograder's document: no)
    # `verify N`: the one puzzle named cannot run here. That is bad input (one sentence, exit 2), not a skip.
    refusal_is_bad_input: bool = False
    workers: int = 0  # the most checkers one pool may run at once; 0: as many as cores and memory allow
    # On an accelerator, time each passing case over this many compiled calls (perf); such a check is a
    # measurement of this run, so it is neither answered from nor kept in the stored verdicts.
    timed_runs: int = 0


@dataclass(frozen=True)
class Outcome:
    """One job's answer: a result (checked now or stored), or the refusal that skipped it."""

    job: Job
    result: CheckResult | None = None
    refusal: Refusal | None = None
    backend: Backend | None = None  # what the job's backend resolved to; None when refused before that
    cached: bool = False  # the result is a stored verdict, not a fresh check
    seconds: float = 0.0  # how long the check took, waited for by the caller (0 unless checked now)

    @property
    def puzzle(self) -> Puzzle:
        return self.job.puzzle

    @property
    def status(self) -> Status | None:
        """PASS, FAIL or ERROR (the checker failed: no verdict about the kernel); None when skipped."""
        return self.result.status if self.result is not None else None


@dataclass
class RunReport:
    """A finished run: every job's outcome, in job order."""

    outcomes: list[Outcome]
    started: datetime.datetime
    seconds: float
    # Added by the caller: the course the jobs come from (the autograders' documents name it), and
    # whether the run answers for many puzzles (`verify --all`: views summarise, not show one check).
    course: Course | None = None
    many: bool = False

    @property
    def verdicts(self) -> list[Outcome]:
        """The outcomes that have a result, in job order."""
        return [o for o in self.outcomes if o.result is not None]

    @property
    def results(self) -> list[CheckResult]:
        return [o.result for o in self.outcomes if o.result is not None]

    @property
    def refused(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.refusal is not None]

    @property
    def from_cache(self) -> int:
        return len([o for o in self.outcomes if o.cached])

    @property
    def backend(self) -> str:
        """The backend the run's checks ran on (the first resolved, for a run over several)."""
        return next((o.backend.name for o in self.outcomes if o.backend is not None), "")

    def count(self, status: Status) -> int:
        return len([o for o in self.outcomes if o.status is status])
