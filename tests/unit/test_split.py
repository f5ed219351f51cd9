"""Where a shared check is split, and how its two parts are joined into one checker's result
(worker/split.py; real parts of real checks: tests/course/test_shared_checks.py)."""

from __future__ import annotations

import dataclasses

import pytest

from pallas_puzzles import environment
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CaseResult, CaseSpan, CheckResult, Finding
from pallas_puzzles.worker.split import Split, joined, needs_second, shares, split_plan, split_point


def _result(*passed: bool, start: int = 0, skipped: int = 0, findings: tuple[Finding, ...] = (),
            printed: str = "") -> CheckResult:
    cases = [CaseResult(label=f"case {start + i}", passed=p) for i, p in enumerate(passed)]
    return CheckResult(number=33, name="ring_all_gather", file="33.py", backend="interpret",
                       passed=all(passed) and not findings and bool(passed), cases=cases, findings=list(findings),
                       printed=printed, skipped_cases=skipped)


READ_SPEC = Finding(FindingKind.REACHES_CHECKER, "Line 3 reads the course's spec.")
TIMED_OUT = Finding(FindingKind.TIMEOUT, "Your kernel was still running after 60 s and was stopped.")


@pytest.mark.parametrize(("costs", "point"), [
    ([1.0, 1.0], 1), ([1.0, 1.0, 1.0], 2), ([0.05, 0.07, 0.12], 2), ([0.3, 0.1, 0.1], 1),
    ([0.1, 0.1, 0.1, 0.1], 2), ([0.07, 0.14, 0.3], 2), ([0.1, 0.1, 0.1, 0.5], 3),
])
def test_the_split_makes_the_longer_part_shortest(costs, point):
    assert split_point(costs) == point


def test_a_case_is_cut_in_two_where_its_lowering_evens_the_parts():
    """hopper_attention: three cases of 0.13 s, half of each the CUDA lowering. Whole cases split 2 + 1
    (0.26 s); case 1 cut (its lowering with case 0, the rest with case 2) splits 0.195 + 0.21."""
    assert split_plan([0.13, 0.13, 0.13], [0.065, 0.065, 0.065]) == Split(1, cut=True)
    assert split_plan([0.13, 0.13, 0.13]) == Split(2)  # lowerings unknown (a first check, or no GPU lowering)
    assert split_plan([0.13, 0.13, 0.13], [0.0, 0.0, 0.0]) == Split(2)
    assert split_plan([0.1, 0.1, 0.1], [0.01, 0.01, 0.01]) == Split(2)  # no better: no cut
    assert split_plan([0.3, 0.1], [0.2, 0.05]) == Split(0, cut=True)  # one slow lowering alone in the first
    first, second = Split(1, cut=True).spans(3)
    assert first == CaseSpan(0, 2, ends_at_lowering=True) and second == CaseSpan(1, 3, starts_after_lowering=True)
    assert Split(2).spans(3) == (CaseSpan(0, 2), CaseSpan(2, 3))


def test_a_case_cut_in_two_is_one_case_in_the_verdict():
    lowered, rest = _result(True, True), _result(True, False, start=1)  # case 1: lowered by one, run by the other
    assert needs_second(lowered, Split(1, cut=True).first_size)
    verdict = joined(lowered, rest, point=1, total=3, cut=True)
    assert [c.label for c in verdict.cases] == ["case 0", "case 1", "case 2"] and not verdict.passed
    lowered.cases[1] = dataclasses.replace(lowered.cases[1], seconds=0.08, lowering_seconds=0.07)
    rest.cases[0] = dataclasses.replace(rest.cases[0], seconds=0.06)
    timed = joined(lowered, rest, point=1, total=3, cut=True).cases[1]  # the next split counts both parts
    assert timed.seconds == pytest.approx(0.14) and timed.lowering_seconds == 0.07 and timed.passed
    refused = _result(True, False)  # case 1's lowering refused: the verdict, case 2 skipped
    assert not needs_second(refused, 2)
    verdict = joined(refused, None, point=1, total=3, cut=True)
    assert [c.passed for c in verdict.cases] == [True, False] and verdict.skipped_cases == 1
    early = joined(_result(False, skipped=1), None, point=1, total=3, cut=True)  # case 0 failed
    assert early.skipped_cases == 2


def test_a_failure_in_the_first_part_is_the_verdict_with_every_later_case_skipped():
    first = _result(True, False, skipped=0)  # cases 0-1 of 4; case 1 failed
    assert not needs_second(first, 2)
    verdict = joined(first, None, point=2, total=4)
    assert [c.passed for c in verdict.cases] == [True, False] and verdict.skipped_cases == 2 and not verdict.passed
    early = joined(_result(False, skipped=1), None, point=2, total=4)  # case 0 failed: 1 of its part, 2 after
    assert early.skipped_cases == 3


def test_a_checker_stopped_in_either_part_is_the_verdict_as_when_one_checker_stops():
    stopped = _result(findings=(TIMED_OUT,))
    assert not needs_second(stopped, 2)
    assert joined(stopped, None, point=2, total=3) == stopped
    second_stopped = _result(findings=(TIMED_OUT,))
    assert joined(_result(True, True), second_stopped, point=2, total=3) is second_stopped


def test_passing_first_cases_are_followed_by_the_seconds_and_the_prints_in_order():
    first, second = _result(True, True, printed="loaded\nD=2\nD=5\n"), _result(False, start=2, printed="D=8\n")
    assert needs_second(first, 2)
    verdict = joined(first, second, point=2, total=3)
    assert [c.label for c in verdict.cases] == ["case 0", "case 1", "case 2"]
    assert not verdict.passed and verdict.printed == "loaded\nD=2\nD=5\nD=8\n" and verdict.skipped_cases == 0
    assert joined(first, _result(True, start=2), point=2, total=3).passed


def test_a_finding_about_the_whole_file_does_not_stop_the_cases_and_comes_first():
    first = _result(True, True, findings=(READ_SPEC,))  # one checker runs every case, then reports the read
    assert needs_second(first, 2)
    verdict = joined(first, _result(True, start=2), point=2, total=3)
    assert not verdict.passed and verdict.findings == [READ_SPEC] and len(verdict.cases) == 3
    later = joined(_result(True, True), _result(True, start=2, findings=(READ_SPEC,)), point=2, total=3)
    assert not later.passed and later.findings == [READ_SPEC]


def test_checks_are_shared_only_where_cases_are_slow_on_two_cores_with_the_fast_path_on(monkeypatch):
    monkeypatch.delenv(environment.FAST.name, raising=False)
    assert shares("tpu-multichip", cores=2) and shares("mosaic-gpu", cores=8)
    assert not shares("tpu-multichip", cores=1) and not shares("tpu-interpret", cores=8)
    monkeypatch.setenv(environment.FAST.name, "0")
    assert not shares("tpu-multichip", cores=2)
