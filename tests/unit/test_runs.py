"""`verify --all` never pays twice, and shows its progress in a terminal only.

A fake pool stands in for the checker processes, so these tests see exactly
which puzzles were sent to be checked.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import COURSE, checkable
from rich.console import Console

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.checking.jobs import Job
from pallas_puzzles.cli import app
from pallas_puzzles.report.live import RunProgress
from pallas_puzzles.results import CaseResult, CheckResult
from pallas_puzzles.worker import pool as pool_module
from pallas_puzzles.worker.launch import planned_check
from pallas_puzzles.worker.pool import pool_size


class FakePool:
    """Passes every file it is given and remembers which puzzles it was given."""

    checked: list[int] = []
    started = 0

    def __init__(self, requested: str, size: int, mode=None, target: str = "tpu-interpret", limits=None,
                 serves: tuple[str, ...] = ()) -> None:
        self.warning = None
        self.target = target
        self.serves = serves or (target,)
        self.backend = INTERPRET

    def start(self):
        FakePool.started += 1
        return INTERPRET

    def stop(self) -> None:
        pass

    def check_in_order(self, jobs, fail_fast=True, on_start=None, on_done=None,
                       timed_runs=0) -> Iterator[CheckResult]:
        for n, (puzzle, file) in enumerate(jobs):
            on_start(n)
            FakePool.checked.append(puzzle.number)
            result = CheckResult(number=puzzle.number, name=puzzle.name, file=str(file), backend="interpret",
                                 passed=True, cases=[CaseResult("N0=1", True)])
            on_done(n, result)
            yield result

    def __enter__(self) -> FakePool:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


@pytest.fixture()
def fake_pool(monkeypatch) -> type[FakePool]:
    monkeypatch.setattr(pool_module, "WorkerPool", FakePool)
    FakePool.checked, FakePool.started = [], 0
    return FakePool


def test_an_unchanged_rerun_starts_no_checker_and_an_edit_rechecks_only_that_puzzle(workspace, cli, fake_pool):
    first = cli.invoke(app, ["verify", "--all", "--backend", "interpret", "--json"])
    assert first.exit_code == 0, first.output
    assert fake_pool.checked == [p.number for p in checkable(COURSE.puzzles)]

    fake_pool.checked, fake_pool.started = [], 0
    again = cli.invoke(app, ["verify", "--all", "--backend", "interpret", "--json"])
    assert again.exit_code == 0
    assert fake_pool.started == 0 and fake_pool.checked == []
    document = json.loads(again.stdout)
    assert document["passed"] == len(checkable(COURSE.puzzles))
    assert [c["puzzle"] for c in document["checks"]] == [p.number for p in checkable(COURSE.puzzles)]

    edited = workspace / "exercises" / COURSE.find("fused_outer_mul_relu").file
    edited.write_text(edited.read_text() + "\n# an edit\n")
    third = cli.invoke(app, ["verify", "--all", "--backend", "interpret"])
    assert third.exit_code == 0
    assert fake_pool.checked == [5]
    assert f"{len(checkable(COURSE.puzzles)) - 1} unchanged file(s)" in " ".join(third.output.split())


def test_a_different_backend_request_does_not_reuse_interpret_verdicts(workspace, cli, fake_pool):
    assert cli.invoke(app, ["verify", "constant_add", "--backend", "interpret"]).exit_code == 0
    assert cli.invoke(app, ["lower", "constant_add"]).exit_code == 0
    assert fake_pool.checked == [1, 1]


def test_piped_output_has_no_progress_bar(workspace, cli, fake_pool):
    result = cli.invoke(app, ["verify", "--all", "--backend", "interpret"])
    assert result.exit_code == 0
    assert "━" not in result.output and "checking" not in result.output


def test_the_bar_counts_done_running_and_results_in_a_terminal():
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=True, width=120)
    puzzles = [Job(p, Path(p.file), "interpret") for p in COURSE.puzzles[1:4]]
    with RunProgress(console, len(puzzles)) as bar:
        assert bar.enabled
        bar.started(puzzles[0])
        bar.started(puzzles[1])
        bar._bar.refresh()
        bar.finished(puzzles[0], CheckResult(number=1, name="a", file="f", backend="interpret", passed=True))
        bar._bar.refresh()
    shown = stream.getvalue()
    assert "0/3" in shown and "1/3" in shown
    assert "checking 1, 2" in shown and "checking 2" in shown
    assert "1 ✓" in shown


def test_the_bar_is_silent_off_a_terminal():
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=False)
    job = Job(COURSE.find("constant_add"), Path("f"), "interpret")
    with RunProgress(console, 5) as bar:
        bar.started(job)
        result = CheckResult(number=1, name="a", file="f", backend="interpret", passed=True)
        bar.finished(job, result)
    assert not bar.enabled and stream.getvalue() == ""


@pytest.mark.parametrize(("args", "plan"), [
    ([], ("auto", "run")),
    (["verify", "outer_add"], ("auto", "run")),
    (["--backend", "interpret", "verify", "--all"], ("interpret", "run")),
    (["verify", "-b", "GPU"], ("gpu", "run")),
    (["watch", "--backend=tpu"], ("tpu", "run")),
    (["lower", "--all"], ("tpu", "lower")),
    (["perf", "matmul_grid_k", "--solution"], ("auto", "run")),
    (["show", "outer_add_blocked", "--backend", "interpret", "--html", "x.html"], ("interpret", "run")),
    (["list"], None),
    (["hint", "outer_add"], None),
    (["verify", "--help"], None),
    (["verify", "--backend", "cuda"], None),  # the CLI itself says what is wrong
    (["verify", "--backend"], None),
])
def test_the_early_checker_matches_what_the_command_will_ask_for(args, plan, workspace):
    found = planned_check(args)
    assert (found[0], found[1], found[2].value) == ("tpu-interpret", *plan) if plan else found is None


def test_the_early_checker_is_for_the_target_of_the_puzzle_it_will_check(workspace, monkeypatch):
    """A checker serves one target: the puzzle named on the command line, else the current one."""
    import dataclasses

    from pallas_puzzles.course import source as course_source

    other = tuple(dataclasses.replace(p, target="some.module:Other") if p.name == "outer_add" else p
                  for p in COURSE.puzzles)
    monkeypatch.setattr(course_source, "course_of", lambda workspace: dataclasses.replace(COURSE, puzzles=other))
    assert planned_check(["verify", "outer_add"])[0] == "some.module:Other"
    assert planned_check(["verify", "outer_add_blocked"])[0] == "tpu-interpret"
    state = workspace / ".pallas_puzzles" / "state.json"
    state.write_text(state.read_text().replace('"current": "tour"', '"current": "outer_add"'))
    assert planned_check([])[0] == "some.module:Other", "watch checks the current puzzle first"
    assert planned_check(["verify", "--all"])[0] == "tpu-interpret", "the course's first puzzle"


def test_the_early_checker_for_every_puzzle_serves_the_courses_first_process_group(workspace, monkeypatch):
    targets = tuple(dict.fromkeys(p.target for p in COURSE.puzzles))
    assert len(targets) > 2
    assert planned_check(["verify", "--all"])[3] == targets, "every built-in target shares a checker"
    monkeypatch.setenv("PALLAS_PUZZLES_FAST", "0")
    assert planned_check(["verify", "--all"])[3] == (COURSE.puzzles[0].target,)
    assert planned_check(["verify", "outer_add"])[3] == ("tpu-interpret",)


def test_the_worker_count_respects_jobs_cores_and_memory():
    assert pool_size(1, cores=16) == 1
    assert pool_size(21, cores=1) == 1
    assert pool_size(21, cores=16) * pool_module.WORKER_MIB + pool_module.CLI_MIB <= pool_module.MEMORY_BUDGET_MIB


def test_a_stored_pass_still_records_progress(workspace, cli, fake_pool):
    assert cli.invoke(app, ["verify", "constant_add_blocked", "--backend", "interpret"]).exit_code == 0
    state = Path(".pallas_puzzles") / "state.json"
    state.write_text(state.read_text().replace('"solved"', '"solved_before"'))  # forget the pass
    assert cli.invoke(app, ["verify", "constant_add_blocked", "--backend", "interpret"]).exit_code == 0
    assert fake_pool.checked == [2]
    listed = json.loads(cli.invoke(app, ["list", "--json"]).stdout)
    assert any(p["puzzle"] == 2 and p["status"] == "solved" for p in listed["puzzles"])


def test_a_checker_keeps_to_one_puzzle_and_another_takes_a_puzzle_no_one_is_on():
    """dev check and grade give a pool several jobs per puzzle: each checker then computes a puzzle's
    expected outputs once, instead of both checkers computing them for every puzzle."""
    pending = pool_module._Pending([(name, "t") for name in ["a", "a", "a", "b", "b", "c"]])
    first, second = 1, 2
    assert pending.take(first) == 0  # a
    assert pending.take(second) == 3  # b: the other checker is on a
    assert [pending.take(first), pending.take(first)] == [1, 2]  # the rest of a
    assert pending.take(first) == 5  # c: b is the other checker's
    assert pending.take(second) == 4  # the rest of b
    assert pending.take(first) is None and pending.take(second) is None
    alone = pool_module._Pending([("a", "t"), ("b", "t")])
    assert [alone.take(first), alone.take(first), alone.take(first)] == [0, 1, None]  # nothing is left waiting


def test_checkers_of_a_course_keep_to_their_target_and_start_on_one_no_other_is_on():
    """A checker pays a target's first checks (imports, first compiles) once: the whole course goes faster
    when each checker works through chapters of its own than when both visit every chapter."""
    pending = pool_module._Pending([("a", "tpu"), ("b", "tpu"), ("c", "tpu"), ("d", "gpu"), ("e", "gpu"),
                                    ("f", "chips")])
    first, second = 1, 2
    assert pending.take(first) == 0  # a, the first
    assert pending.take(second) == 3  # d: the first puzzle of a target the other checker is not on
    assert pending.take(first) == 1  # b: its own target's next
    assert pending.take(second) == 4  # e: likewise
    assert pending.take(second) == 5  # f: gpu is done and the other checker is on tpu
    assert pending.take(first) == 2  # c
    assert pending.take(first) is None and pending.take(second) is None
    crowded = pool_module._Pending([("a", "tpu"), ("b", "tpu")])
    assert [crowded.take(first), crowded.take(second)] == [0, 1]  # one target only: both share it
