"""Two checkers share one check: the first runs the shape cases up to a split point, the second the
rest, at the same time.

A case of the multi-chip and GPU chapters takes 0.05-0.3 s on a CPU (a program lowered, devices or
warpgroups taking turns through the interpreter's callbacks), one after another on one core. On a
machine with two cores or more, watch keeps two warm checkers for such a chapter (targets that set
`shares_cases`) and gives each a part of every check.

A case of the GPU chapters is about half a lowering for CUDA (the rules only a GPU enforces) and half a
run in the interpreter. With three cases, two checkers splitting between cases take two cases and one;
where the cases' lowering times are known from the puzzle's last check, a case may be cut in two instead
(split_plan): the first checker lowers it after its own cases, the second runs the rest of it before its
own, tracing the launcher again without printing twice. hopper_attention's parts went from 2 and 1 cases
to 1.5 each.

The verdict is the one a single checker gives. A case's result depends only on the file and the case
(its own data, seeds and session), and `joined` puts the parts together as one checker runs the
cases: in order, stopping at the first case that fails, the second part's cases then counted as
skipped; a case cut in two is the first's where its lowering failed, else the second's. So a failure
in the first part is reported as soon as it is known, while the second part finishes unseen.
tests/course/test_shared_checks.py compares both ways (and with a case cut) over the chapters'
solutions, mistakes and correct alternatives; PALLAS_PUZZLES_FAST=0 turns the sharing off with the
rest of the fast path.
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


# Cut in two, a case costs the second checker a little more than its part: it traces the launcher again.
CUT_OVERHEAD = 0.1  # of the case's seconds (hopper_attention: a trace of 0.01 s in a case of 0.13)


@dataclasses.dataclass(frozen=True)
class Split:
    """Where a shared check is split: the second part starts at case `point`. `cut`: that case is cut in
    two, the first part running it up to and with its lowering for a GPU, the second all the rest of it
    (Target.lowers_apart: the lowering is about half of a case)."""

    point: int
    cut: bool = False

    @property
    def first_size(self) -> int:
        """The cases the first part runs, the one cut included."""
        return self.point + self.cut

    def spans(self, total: int) -> tuple[CaseSpan, CaseSpan]:
        return (CaseSpan(0, self.first_size, ends_at_lowering=self.cut),
                CaseSpan(self.point, total, starts_after_lowering=self.cut))


def split_plan(costs: list[float], lowerings: list[float] | None = None) -> Split:
    """The split that makes the longer part shortest: between two cases (split_point), or, where each
    case's lowering seconds are known (`lowerings`, 0 where not), across a case. With three cases of
    equal cost, half of each a lowering, the parts take 1.5 cases each instead of 2 and 1."""
    whole = split_point(costs)
    best = (max(sum(costs[:whole]), sum(costs[whole:])), Split(whole))
    for point, lowering in enumerate(lowerings or ()):
        if 0 < lowering < costs[point]:
            rest = costs[point] - lowering + CUT_OVERHEAD * costs[point]
            longer = max(sum(costs[:point]) + lowering, rest + sum(costs[point + 1:]))
            best = min(best, (longer, Split(point, cut=True)), key=lambda option: option[0])
    return best[1]


def needs_second(first: CheckResult, size: int) -> bool:
    """Did the first part run every one of its `size` cases, each passing? Only then does one checker go
    on to the second part's cases (a finding about the whole file alone, such as a read of the course's
    files, does not stop the cases)."""
    return not _stopped(first) and len(first.cases) == size and all(case.passed for case in first.cases)


def joined(first: CheckResult, second: CheckResult | None, point: int, total: int, cut: bool = False) -> CheckResult:
    """One check's result from its parts (cases [0, point) and [point, total); with `cut`, case `point`
    lowered by the first and run by the second), as one checker would have given it. `second` may be
    None where the first part did not pass its cases: it is not needed then."""
    size = point + cut
    if not needs_second(first, size):
        failed = bool(first.cases) and not first.cases[-1].passed
        return dataclasses.replace(first, skipped_cases=first.skipped_cases + (total - size if failed else 0))
    assert second is not None, "the second part is needed once the first has passed its cases"
    if _stopped(second) and not second.cases:
        return second  # its checker was stopped: as one checker stopped during the check
    later = second.cases
    if cut and later:  # the case cut: the second's verdict, the seconds of both parts and the first's lowering
        lowered = first.cases[point]
        later = [dataclasses.replace(later[0], seconds=lowered.seconds + later[0].seconds,
                                     lowering_seconds=lowered.lowering_seconds), *later[1:]]
    return dataclasses.replace(
        first, passed=first.passed and second.passed, cases=[*first.cases[:point], *later],
        findings=first.findings or second.findings, printed=first.printed + second.printed,
        seconds=max(first.seconds, second.seconds), skipped_cases=second.skipped_cases)


def _stopped(part: CheckResult) -> bool:
    """Was the part's checker stopped (time, memory, crash) rather than a case failed?"""
    return any(f.kind in STOPPED for f in part.findings)


class SharedChecker:
    """Two checkers for one target that share each check (WorkersByTarget uses it as one Worker)."""

    def __init__(self, requested: str, mode: Mode, target: str, limits: Limits = Limits()) -> None:
        from pallas_puzzles.engine import targets

        self.target = target
        self.lowers_apart = targets.get(target).lowers_apart  # a check may cut a case in two (split_plan)
        self.first = Worker(requested, mode, target, limits)
        self.second = Worker(requested, mode, target, limits)
        self._costs: dict[str, list[float]] = {}  # puzzle -> each case's seconds, from its last check
        self._lowerings: dict[str, list[float]] = {}  # puzzle -> each case's lowering seconds, where known
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
        costs, lowerings = self._case_costs(puzzle, total)
        split = split_plan(costs, lowerings if self.lowers_apart else None)
        first_span, second_span = split.spans(total)
        parts: list[CheckResult | BaseException] = []

        def run_second() -> None:
            try:
                parts.append(self.second.check(puzzle, file, cases=second_span))
            except BaseException as exc:  # raised below if its part is needed; else nobody waits for it
                parts.append(exc)

        thread = threading.Thread(target=run_second, daemon=True, name="second-checker")
        self._second_in_check = True
        thread.start()
        try:
            first = self.first.check(puzzle, file, cases=first_span)
            if not needs_second(first, split.first_size):  # the verdict: the second part finishes unseen
                return self._remember(puzzle, total, joined(first, None, split.point, total, split.cut))
            thread.join()
        except CheckCancelled:
            self.second.cancel()
            raise
        finally:
            self._second_in_check = False
        second = parts[0]
        if isinstance(second, BaseException):
            raise second
        return self._remember(puzzle, total, joined(first, second, split.point, total, split.cut))

    def _remember(self, puzzle: Puzzle, total: int, result: CheckResult) -> CheckResult:
        """Keep the seconds of each case that ran, and of its lowering, for where the next check of the
        puzzle is split."""
        costs, lowerings = self._case_costs(puzzle, total)
        for index, case in enumerate(result.cases[:total]):
            if case.seconds > 0:
                costs[index] = case.seconds
            if case.lowering_seconds > 0:
                lowerings[index] = case.lowering_seconds
        return result

    def _case_costs(self, puzzle: Puzzle, total: int) -> tuple[list[float], list[float]]:
        """Each case's seconds at the puzzle's last check (1 s for a case not run yet), and its lowering's
        (0 where unknown)."""
        costs = self._costs.setdefault(puzzle.name, [1.0] * total)
        return costs, self._lowerings.setdefault(puzzle.name, [0.0] * total)

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
