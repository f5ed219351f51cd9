"""The checking service (checking/service.py) with fake pools: no checker process, no JAX.

What every command that checks many files relies on: the order of its events, refusals reported as
skipped, stored verdicts as cached, a checker error never a verdict, results in job order whatever
order the checks end in, and never two pools of checkers at once.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from rich.console import Console

from pallas_puzzles.backends import GPU, INTERPRET, TPU, Backend, Mode
from pallas_puzzles.checking import service
from pallas_puzzles.checking.events import Listener
from pallas_puzzles.checking.jobs import Job, Options, RunReport
from pallas_puzzles.checking.support import Refusal
from pallas_puzzles.commands.verify import exit_code
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.errors import UserError
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.report import json_view, sentences
from pallas_puzzles.report.live import RunProgress
from pallas_puzzles.results import CheckResult, Finding, Status
from pallas_puzzles.worker import pool as pool_module
from pallas_puzzles.workspace.folder import Workspace

COURSE = load_course()
ADD, ADD_BLOCKED, CONV = COURSE.find(1), COURSE.find(2), COURSE.find(10)  # tpu-interpret; conv has no GPU
REMOTE = COURSE.find(31)  # tpu-multichip


class FakePool:
    """A pool that checks nothing: each file's verdict is `verdicts[file name]` (a pass by default).
    It works through its jobs last first, as a second checker that ends sooner would."""

    verdicts: ClassVar[dict[str, CheckResult]] = {}
    opened: ClassVar[list[tuple[str, str, str]]] = []  # (requested, mode, its targets joined by +) of each pool started
    checked: ClassVar[list[str]] = []  # file names, as checked
    timed_runs: ClassVar[list[int]] = []  # the timed runs asked of each check_in_order
    running: ClassVar[int] = 0  # pools started and not yet stopped
    most: ClassVar[int] = 0  # the most that ever were at once

    def __init__(self, requested: str, size: int, mode: Mode = Mode.RUN, target: str = "", limits=None,
                 serves: tuple[str, ...] = ()) -> None:
        self.requested, self.mode, self.target = requested, mode, target
        self.serves = serves or (target,)
        self.backend: Backend = TPU if mode is Mode.LOWER else {"gpu": GPU}.get(requested, INTERPRET)
        self.warning: str | None = "jax is newer than any tested"
        self.live = False

    def start(self) -> Backend:
        FakePool.opened.append((self.requested, self.mode.value, "+".join(self.serves)))
        FakePool.running += 1
        FakePool.most = max(FakePool.most, FakePool.running)
        self.live = True
        return self.backend

    def stop(self) -> None:
        if self.live:
            FakePool.running -= 1
            self.live = False

    def check_in_order(self, jobs, fail_fast=True, on_start=None, on_done=None,
                       timed_runs=0) -> Iterator[CheckResult]:
        assert self.live, "checks only run on a started pool"
        FakePool.timed_runs.append(timed_runs)
        results = {}
        for n in reversed(range(len(jobs))):
            puzzle, file = jobs[n]
            assert puzzle.target in self.serves, "a pool checks its own targets' puzzles only"
            on_start(n)
            FakePool.checked.append(file.name)
            results[n] = FakePool.verdicts.get(file.name) or verdict(puzzle, file, passed=True)
            on_done(n, results[n])
        for n in range(len(jobs)):
            yield results[n]


def verdict(puzzle, file: Path, passed: bool, *findings: Finding) -> CheckResult:
    return CheckResult(number=puzzle.number, name=puzzle.name, file=str(file), backend="interpret", passed=passed,
                       findings=list(findings))


@pytest.fixture()
def pools(monkeypatch) -> type[FakePool]:
    monkeypatch.setattr(pool_module, "WorkerPool", FakePool)
    FakePool.verdicts, FakePool.opened, FakePool.checked, FakePool.timed_runs = {}, [], [], []
    FakePool.running = FakePool.most = 0
    return FakePool


class Recorder(Listener):
    """Every event, as (hook, file name or detail)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.report: RunReport | None = None

    def resolved(self, backend: Backend, mode: Mode) -> None:
        self.events.append(("resolved", backend.name))

    def warned(self, message: str) -> None:
        self.events.append(("warned", message))

    def skipped(self, job: Job, refusal: Refusal) -> None:
        self.events.append(("skipped", job.file.name))

    def cached(self, job: Job, result: CheckResult) -> None:
        self.events.append(("cached", job.file.name))

    def started(self, job: Job) -> None:
        self.events.append(("started", job.file.name))

    def finished(self, job: Job, result: CheckResult) -> None:
        self.events.append(("finished", job.file.name))

    def done(self, report: RunReport) -> None:
        self.events.append(("done", str(len(report.outcomes))))
        self.report = report

    def of(self, *hooks: str) -> list[tuple[str, str]]:
        return [event for event in self.events if event[0] in hooks]


class InOrder(Recorder):
    in_job_order = True


def job(puzzle, name: str, requested: str = "interpret", mode: Mode = Mode.RUN) -> Job:
    return Job(puzzle, Path(name), requested, mode)


def test_events_come_as_pytests_do_started_before_finished_and_done_last(pools):
    jobs = [job(ADD, "a.py"), job(ADD_BLOCKED, "b.py"), job(ADD, "c.py")]
    heard = Recorder()
    report = service.run(jobs, listeners=[heard])
    assert heard.events[0] == ("resolved", "interpret")
    assert heard.events[1] == ("warned", "jax is newer than any tested")
    for name in ("a.py", "b.py", "c.py"):
        assert heard.events.index(("started", name)) < heard.events.index(("finished", name))
    assert heard.events[-1] == ("done", "3") and heard.report is report
    assert len(heard.of("started")) == len(heard.of("finished")) == 3
    assert heard.of("warned") == [("warned", "jax is newer than any tested")], "said once per run"


def test_a_refused_job_is_skipped_with_the_refusals_sentence_and_never_checked(pools):
    jobs = [job(CONV, "conv.py", "gpu"), job(ADD, "add.py", "gpu")]
    heard = Recorder()
    report = service.run(jobs, listeners=[heard])
    assert heard.of("skipped") == [("skipped", "conv.py")] and pools.checked == ["add.py"]
    skipped = report.outcomes[0]
    assert skipped.result is None and skipped.status is None and skipped.refusal is not None
    sentence = skipped.refusal.sentence
    assert skipped.refusal.kind is FindingKind.UNSUPPORTED
    assert sentence.startswith("Puzzle 10 uses an idiom") and "runs on: interpret" in sentence
    assert report.refused == [skipped] and report.count(Status.PASS) == 1


def test_a_refusal_of_the_one_puzzle_named_is_bad_input_before_any_checker_starts(pools):
    with pytest.raises(UserError) as refused:
        service.run([job(CONV, "conv.py", "gpu")], Options(refusal_is_bad_input=True))
    assert refused.value.message.startswith("Puzzle 10 uses an idiom")
    assert pools.opened == [] and pools.checked == []


def test_a_stored_verdict_is_cached_and_a_caller_that_may_not_use_it_checks_again(pools, tmp_path):
    file = tmp_path / "01_constant_add.py"
    file.write_text("# a learner's file\n")
    workspace = Workspace(tmp_path)
    jobs = [Job(ADD, file, "interpret")]
    assert service.run(jobs, Options(workspace=workspace)).from_cache == 0
    assert pools.checked == [file.name]

    pools.checked, pools.opened = [], []
    heard = Recorder()
    again = service.run(jobs, Options(workspace=workspace), [heard])
    assert heard.of("cached", "started", "finished") == [("cached", file.name)]
    assert again.from_cache == 1 and again.outcomes[0].cached and again.outcomes[0].result.passed
    assert pools.opened == [], "nothing to check: no checker is started"

    fresh = service.run(jobs, Options(workspace=workspace, use_stored=False))
    assert fresh.from_cache == 0 and pools.checked == [file.name]
    assert service.run(jobs).from_cache == 0, "without a workspace nothing is stored or read (grade, dev check)"


def test_a_timed_check_on_an_accelerator_is_a_measurement_neither_stored_nor_answered_from_the_store(pools, tmp_path):
    file = tmp_path / "01_constant_add.py"
    file.write_text("# a learner's file\n")
    workspace = Workspace(tmp_path)
    for requested in ("gpu", "gpu", "interpret", "interpret"):
        service.run([Job(ADD, file, requested)], Options(workspace=workspace, timed_runs=10))
    assert pools.timed_runs == [10, 10, 10], "the interpreter's second check is answered from the store"
    assert service.run([Job(ADD, file, "gpu")], Options(workspace=workspace)).from_cache == 0, \
        "a timed check on the gpu stored nothing"


def test_a_checker_error_is_an_error_never_a_pass_or_a_fail(pools, tmp_path):
    pools.verdicts["broken.py"] = verdict(ADD, Path("broken.py"), False,
                                          Finding(FindingKind.INTERNAL, "the checker itself failed"))
    file = tmp_path / "broken.py"
    file.write_text("# any file\n")
    bar = RunProgress(Console(file=io.StringIO(), force_terminal=True), 2)
    report = service.run([Job(ADD, file, "interpret"), job(ADD, "fine.py")], Options(workspace=Workspace(tmp_path)),
                         [bar])
    broken = report.outcomes[0]
    assert broken.status is Status.ERROR and not broken.result.passed
    assert (report.count(Status.PASS), report.count(Status.FAIL), report.count(Status.ERROR)) == (1, 0, 1)
    assert (bar._passed, bar._failed, bar._errors) == (1, 0, 1)
    assert exit_code(report.results) == 3, "verify's exit code for a checker error"
    assert sentences.run_tally(report.results) == "1 passed, 1 checker error"
    summary = json_view.summary_document(report.results, [])
    assert (summary["status"], summary["passed"], summary["failed"], summary["errors"]) == ("error", 1, 0, 1)
    assert service.run([Job(ADD, file, "interpret")], Options(workspace=Workspace(tmp_path))).from_cache == 0, \
        "an error is never stored as the file's verdict"


@pytest.mark.parametrize("fast", ["1", "0"])
def test_results_come_in_job_order_across_targets_with_one_pool_per_process_group(pools, monkeypatch, fast):
    monkeypatch.setenv("PALLAS_PUZZLES_FAST", fast)
    names = ["1.py", "31.py", "2.py", "31b.py", "1b.py"]
    jobs = [job(p, name) for p, name in zip((ADD, REMOTE, ADD_BLOCKED, REMOTE, ADD), names)]
    now, ordered = Recorder(), InOrder()
    report = service.run(jobs, listeners=[now, ordered])
    assert [o.job.file.name for o in report.outcomes] == names
    assert [name for _, name in ordered.of("finished")] == names
    assert [name for _, name in now.of("finished")] != names, "the fake checks end last first"
    if fast == "1":  # every built-in target can share a checker: one pool switches between them
        assert pools.opened == [("interpret", "run", "tpu-interpret+tpu-multichip")]
    else:  # the fast path off: a pool of checkers per target, as before checkers were shared
        assert pools.opened == [("interpret", "run", "tpu-interpret"), ("interpret", "run", "tpu-multichip")]


def test_one_pool_at_a_time_accelerators_first_and_lowering_last(pools):
    jobs = [job(ADD, "1.py"), job(ADD, "1-lower.py", "tpu", Mode.LOWER), job(REMOTE, "31.py"),
            job(ADD, "1-gpu.py", "gpu"), job(ADD_BLOCKED, "2.py")]
    report = service.run(jobs)
    assert pools.most == 1 and pools.running == 0
    assert [targets for _, _, targets in pools.opened] == ["tpu-interpret", "tpu-interpret+tpu-multichip",
                                                           "tpu-interpret"]
    assert [(requested, mode) for requested, mode, _ in pools.opened] == [
        ("gpu", "run"), ("interpret", "run"), ("tpu", "lower")]
    assert [o.backend for o in report.outcomes] == [INTERPRET, TPU, INTERPRET, GPU, INTERPRET]


def test_a_failing_pool_reaches_the_caller_and_leaves_no_pool_running(pools, monkeypatch):
    def broken(self, jobs, fail_fast=True, on_start=None, on_done=None, timed_runs=0):
        on_start(0)
        raise RuntimeError("a checker process failed while checking puzzle 1")
        yield  # a generator, as the real one is

    monkeypatch.setattr(FakePool, "check_in_order", broken)
    heard = Recorder()
    with pytest.raises(RuntimeError, match="checker process failed"):
        service.run([job(ADD, "a.py"), job(REMOTE, "b.py")], listeners=[heard])
    assert pools.running == 0 and heard.of("finished", "done") == []
