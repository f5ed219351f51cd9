"""Two checkers share one check: the first runs the shape cases up to a split point, the second the
rest, at the same time.

A case of the multi-chip and GPU chapters takes 0.05-0.3 s on a CPU (a program lowered, devices or
warpgroups taking turns through the interpreter's callbacks), one after another on one core. On a
machine with two cores or more, watch keeps two warm checkers for such a chapter (targets that set
`shares_cases`) and gives each a part of every check.

The verdict is the one a single checker gives. A case's result depends only on the file and the case
(its own data, seeds and session), and `joined` puts the parts together as one checker runs the
cases: in order, stopping at the first case that fails, the second part's cases then counted as
skipped. So a failure in the first part is reported as soon as it is known, while the second part
finishes unseen. tests/course/test_shared_checks.py compares both ways over the chapters' solutions,
mistakes and correct alternatives; PALLAS_PUZZLES_FAST=0 turns the sharing off with the rest of the
fast path.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path

from pallas_puzzles import environment
from pallas_puzzles.backends import Backend, Mode
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CaseSpan, CheckResult
from pallas_puzzles.worker.client import CheckCancelled, Worker
from pallas_puzzles.worker.limits import Limits

# What stops a checker rather than a case: the checker's reply holds this finding and no case.
STOPPED = frozenset({FindingKind.TIMEOUT, FindingKind.MEMORY, FindingKind.CRASH})


def shares(target: str, cores: int | None = None) -> bool:
    """Does watch give `target`'s checks to two checkers? Where its cases are slow, there are two
    cores or more, and the fast path is on."""
    from pallas_puzzles.engine import targets

    return (targets.get(target).shares_cases and (cores or os.cpu_count() or 1) >= 2
            and not environment.FAST.turned_off())


def split_point(costs: list[float]) -> int:
    """Where the second part starts: the point that makes the longer part shortest (the later point
    of two equal ones: a course's later cases are seldom the cheaper)."""
    return min(range(1, len(costs)), key=lambda point: (max(sum(costs[:point]), sum(costs[point:])), -point))


def needs_second(first: CheckResult, point: int) -> bool:
    """Did the first part run every one of its `point` cases, each passing? Only then does one checker go
    on to the second part's cases (a finding about the whole file alone, such as a read of the course's
    files, does not stop the cases)."""
    return not _stopped(first) and len(first.cases) == point and all(case.passed for case in first.cases)


def joined(first: CheckResult, second: CheckResult | None, point: int, total: int) -> CheckResult:
    """One check's result from its parts (cases [0, point) and [point, total)), as one checker would have
    given it. `second` may be None where the first part did not pass its cases: it is not needed then."""
    if not needs_second(first, point):
        failed = bool(first.cases) and not first.cases[-1].passed
        return dataclasses.replace(first, skipped_cases=first.skipped_cases + (total - point if failed else 0))
    assert second is not None, "the second part is needed once the first has passed its cases"
    if _stopped(second) and not second.cases:
        return second  # its checker was stopped: as one checker stopped during the check
    return dataclasses.replace(
        first, passed=first.passed and second.passed, cases=[*first.cases, *second.cases],
        findings=first.findings or second.findings, printed=first.printed + second.printed,
        seconds=max(first.seconds, second.seconds), skipped_cases=second.skipped_cases)


def _stopped(part: CheckResult) -> bool:
    """Was the part's checker stopped (time, memory, crash) rather than a case failed?"""
    return any(f.kind in STOPPED for f in part.findings)


class SharedChecker:
    """Two checkers for one target that share each check (WorkersByTarget uses it as one Worker)."""

    def __init__(self, requested: str, mode: Mode, target: str, limits: Limits = Limits()) -> None:
        self.target = target
        self.first = Worker(requested, mode, target, limits)
        self.second = Worker(requested, mode, target, limits)
        self._costs: dict[str, list[float]] = {}  # puzzle -> each case's seconds, from its last check
        self._second_ready = threading.Event()
        self._stopped = False  # set by stop(): a second checker that finishes starting after it is stopped
        self._second_in_check = False  # the second checker runs a part of the check the first runs now
        self._lock = threading.Lock()

    @property
    def backend(self) -> Backend | None:
        return self.first.backend

    @property
    def warning(self) -> str | None:
        return self.first.warning

    @property
    def busy(self) -> bool:
        return self.first.busy or self.second.busy

    @property
    def alive(self) -> bool:
        return self.first.alive

    @property
    def restarts(self) -> int:
        return self.first.restarts + self.second.restarts

    @property
    def processes(self) -> list[object]:
        """The checker processes running now (tests look at them)."""
        return [w._process for w in (self.first, self.second) if w._process is not None]

    def start(self) -> Backend:
        """Start the first checker now, and the second behind it where checks run in the interpreters:
        until the second is ready, checks are the first's alone."""
        self._stopped = False
        backend = self.first.start()
        if backend.name == "interpret" and not self._second_ready.is_set():
            self._start_second_behind()
        return backend

    def wait_until_shared(self, timeout: float) -> bool:
        """Wait until the second checker is ready to take parts of checks (False: not within `timeout`)."""
        return self._second_ready.wait(timeout)

    def _second_free(self) -> bool:
        """Is the second checker ready for a part now? One still finishing a part nobody needed (its first
        part failed) is left to it; one that is gone (cancelled with a check) is started again behind
        this check, which the first checker runs alone."""
        if not self._second_ready.is_set() or self.second.busy:
            return False
        if not self.second.alive:
            self._second_ready.clear()
            self._start_second_behind()
            return False
        return True

    def _start_second_behind(self) -> None:
        threading.Thread(target=self._start_second, daemon=True, name="second-checker-start").start()

    def _start_second(self) -> None:
        try:
            self.second.start()
        except Exception:  # the first checker goes on alone; it says what fails, if anything does
            return
        with self._lock:
            if self._stopped:
                self.second.stop()
            else:
                self._second_ready.set()

    def check(self, puzzle: Puzzle, file: Path) -> CheckResult:
        backend = self.first.backend
        total = len(puzzle.cases_for(backend)) if backend is not None else 0
        if total < 2 or not self._second_free():
            return self._remember(puzzle, total, self.first.check(puzzle, file))
        point = split_point(self._case_costs(puzzle, total))
        parts: list[CheckResult | BaseException] = []

        def run_second() -> None:
            try:
                parts.append(self.second.check(puzzle, file, cases=CaseSpan(point, total)))
            except BaseException as exc:  # raised below if its part is needed; else nobody waits for it
                parts.append(exc)

        thread = threading.Thread(target=run_second, daemon=True, name="second-checker")
        self._second_in_check = True
        thread.start()
        try:
            first = self.first.check(puzzle, file, cases=CaseSpan(0, point))
            if not needs_second(first, point):  # the verdict: the second part finishes unseen
                return self._remember(puzzle, total, joined(first, None, point, total))
            thread.join()
        except CheckCancelled:
            self.second.cancel()
            raise
        finally:
            self._second_in_check = False
        second = parts[0]
        if isinstance(second, BaseException):
            raise second
        return self._remember(puzzle, total, joined(first, second, point, total))

    def _remember(self, puzzle: Puzzle, total: int, result: CheckResult) -> CheckResult:
        """Keep the seconds of each case that ran, for where the next check of the puzzle is split."""
        costs = self._case_costs(puzzle, total)
        for index, case in enumerate(result.cases[:total]):
            if case.seconds > 0:
                costs[index] = case.seconds
        return result

    def _case_costs(self, puzzle: Puzzle, total: int) -> list[float]:
        """Each case's seconds at the puzzle's last check (1 s for a case not run yet)."""
        return self._costs.setdefault(puzzle.name, [1.0] * total)

    def prepare(self, puzzle: Puzzle) -> None:
        """Nothing to get ready: both checkers serve one target, started already."""

    def cancel(self) -> None:
        """Stop the running check: the first checker's part, and the second's while the first runs (a
        part nobody needs any more is left to finish: stopping it would cost a fresh checker)."""
        self.first.cancel()
        if self._second_in_check:
            self.second.cancel()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._second_ready.clear()
        self.ask_to_stop()  # both told, then both waited for: they end together
        self.first.stop()
        self.second.stop()

    def ask_to_stop(self) -> None:
        self.first.ask_to_stop()
        self.second.ask_to_stop()
