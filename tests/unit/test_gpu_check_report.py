"""The GPU check's summary (scripts/gpu_check_report.py) from the documents a GPU run would gather.

A dry run can only show the interpreter agreeing with itself, and a GPU is lent only now and then (an
H100 and an H200 have run the check: docs/backends.md); here the comparison is fed what the project's
commands print on a GPU machine whose jax cannot run the Mosaic GPU interpreter, with a dry run's
interpreter verdicts carried along.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_check_report.py"
_spec = importlib.util.spec_from_file_location("gpu_check_report", SCRIPT)
assert _spec is not None and _spec.loader is not None
report = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = report  # dataclasses look their module up while it runs
_spec.loader.exec_module(report)

H100 = "NVIDIA H100 80GB HBM3"
PUZZLES = [{"puzzle": 1, "name": "constant_add", "chapter": "basics", "backends": ["interpret", "gpu", "tpu"]},
           {"puzzle": 25, "name": "dma_copy", "chapter": "dma", "backends": ["interpret", "tpu"]},
           {"puzzle": 37, "name": "tma_copy", "chapter": "mosaic_gpu", "backends": ["interpret", "gpu"]}]
TOO_OLD = ("Puzzle 37 needs jax 0.12 or newer on the interpret backend (on Python 3.12 or newer); this environment "
           "has jax 0.11.2 on Python 3.12, though --backend gpu runs it with this jax.")


def _v(puzzle: str, subject: str, example: str | None, backend: str, status: str, kind: str | None = None) -> dict:
    return {"puzzle": puzzle, "number": 0, "subject": subject, "example": example, "backend": backend, "mode": "run",
            "status": status, "kind": kind, "seconds": 1.0}


def _step(name: str, exit: int = 0, expected: int = 0) -> dict:
    return {"name": name, "command": name, "exit": exit, "expected": expected, "seconds": 1.0, "timed_out": False,
            "note": ""}


def _gpu_run() -> tuple[dict, dict]:
    results = {
        "schema": 1, "backend": "gpu", "dry_run": False, "budget": 480.0, "started": "then", "seconds": 300.0,
        "environment": {"python": "3.12.3", "jax": "0.11.2", "jaxlib": "0.11.2", "gpus": [H100],
                        "cuda_plugins": ["jax-cuda13-plugin"], "devices": [f"gpu:{H100}"]},
        "course": {"chapters": [], "puzzles": PUZZLES},
        "verify": [{"checks": [{"name": "constant_add", "status": "pass", "kind": None},
                               {"name": "tma_copy", "status": "pass", "kind": None}], "skipped": [25]}],
        "dev_check": [
            {"problems": [{"puzzle": "tma_copy", "subject": "p37_no_commit on gpu", "message": "passes, ..."}],
             "skipped": [{"puzzle": "tma_copy", "message": TOO_OLD}],
             "verdicts": [_v("tma_copy", "stub", None, "gpu", "fail", "timeout"),
                          _v("tma_copy", "solution", None, "gpu", "pass"),
                          _v("tma_copy", "mistake", "p37_no_commit", "gpu", "pass"),
                          _v("tma_copy", "mistake", "p37_waits_twice", "gpu", "fail", "timeout"),
                          _v("tma_copy", "mistake", "p37_no_store_wait", "gpu", "fail", "tma-store-unwaited")]},
            {"problems": [], "skipped": [],
             "verdicts": [_v("constant_add", "stub", None, "interpret", "fail", "mismatch-unwritten"),
                          _v("constant_add", "stub", None, "gpu", "fail", "mismatch-wrong"),
                          _v("constant_add", "solution", None, "interpret", "pass"),
                          _v("constant_add", "solution", None, "gpu", "pass")]}],
        "hang": {"limit": 10, "stopped": {"status": "fail", "kind": "timeout"}, "stopped_seconds": 17.0,
                 "next": {"status": "pass", "kind": None}, "next_seconds": 6.0},
        "perf": [{"checks": [{"name": "constant_add", "status": "pass", "cases": [
            {"label": "N=32", "sizes": {"N": 32}, "measured_seconds": 1.5e-5},
            {"label": "N=128", "sizes": {"N": 128}, "measured_seconds": 2.0e-5}]}]}],
        "steps": [_step("verify"), _step("hang: a kernel that never ends", 1, 1)],
    }
    reference = {"started": "before", "environment": {"jax": "0.12.0.1"}, "dev_check": [{"verdicts": [
        _v("tma_copy", "stub", None, "interpret", "fail", "mismatch-unwritten"),
        _v("tma_copy", "solution", None, "interpret", "pass"),
        _v("tma_copy", "mistake", "p37_no_commit", "interpret", "fail", "smem-uncommitted"),
        _v("tma_copy", "mistake", "p37_waits_twice", "interpret", "fail", "barrier-stall"),
        _v("tma_copy", "mistake", "p37_no_store_wait", "interpret", "fail", "tma-store-unwaited")]}]}
    return results, reference


@pytest.mark.parametrize("interpreted, device, expected", [
    (report.Verdict("pass"), report.Verdict("pass"), "agree"),
    (report.Verdict("fail", "race"), report.Verdict("fail", "race"), "agree"),
    (report.Verdict("fail", "barrier-stall"), report.Verdict("fail", "timeout"), "both fail"),
    (report.Verdict("fail", "race"), report.Verdict("pass"), "DISAGREE"),
    (report.Verdict("pass"), report.Verdict("fail", "mismatch-nan"), "DISAGREE"),
    (report.Verdict("pass"), report.Verdict("error", "internal"), "checker error"),
    (None, report.Verdict("pass"), "n/a"),
])
def test_a_kernels_two_verdicts_agree_both_fail_or_disagree(interpreted, device, expected):
    assert report.agreement(interpreted, device) == expected


def test_the_hardware_running_a_mistake_right_is_the_one_disagreement():
    results, reference = _gpu_run()
    summary = report.Summary(results, reference)
    assert summary.disagreements() == [
        "37 tma_copy: p37_no_commit: interpreter fail (smem-uncommitted), gpu pass"]
    assert not summary.clean


def test_without_the_dry_runs_verdicts_the_gpu_chapters_interpreter_column_says_why():
    results, _ = _gpu_run()
    summary = report.Summary(results, None)
    text = summary.markdown()
    assert "| 37 | tma_copy | n/a (needs jax 0.12 or newer on the interpret backend) | pass |" in text
    assert summary.disagreements() == []  # nothing to compare with is not a disagreement


def test_a_line_per_puzzle_with_both_verdicts_and_the_measured_time():
    results, reference = _gpu_run()
    text = report.Summary(results, reference).markdown()
    assert text.startswith(f"# GPU check, on {H100}\n")
    assert "| 1 | constant_add | pass | pass | fail (mismatch-unwritten) / fail (mismatch-wrong) | — | " \
           "20.0 µs (N=128) |" in text
    assert "| 25 | dma_copy | n/a (not run) | n/a (runs on interpret, tpu) |" in text
    assert "| 37 | tma_copy | pass | pass | fail (mismatch-unwritten) / fail (timeout) | " \
           "1 DISAGREE, 1 agree, 1 both fail | — |" in text
    assert "| 37 tma_copy | p37_waits_twice | fail (barrier-stall) | fail (timeout) | both fail |" in text
    assert "the dry run of before (jax 0.12.0.1)" in text
    assert "fail (timeout) after 17.0 s" in text and "the next check: pass in 6.0 s" in text


def test_the_kernel_times_name_the_device_and_every_case():
    results, reference = _gpu_run()
    times = report.Summary(results, reference).kernel_times()
    assert times["device"] == H100 and times["jax"] == "0.11.2"
    assert times["puzzles"] == [{"puzzle": 1, "name": "constant_add", "cases": [
        {"label": "N=32", "sizes": {"N": 32}, "seconds": 1.5e-5},
        {"label": "N=128", "sizes": {"N": 128}, "seconds": 2.0e-5}]}]


def test_a_step_that_ran_out_of_time_or_exited_otherwise_is_not_clean():
    results, reference = _gpu_run()
    results["dev_check"][0]["problems"] = []
    results["dev_check"][0]["verdicts"][2]["status"] = "fail"  # no disagreement left
    assert report.Summary(results, reference).clean
    results["steps"].append({**_step("perf"), "timed_out": True, "exit": None})
    assert not report.Summary(results, reference).clean


def test_a_mistake_the_course_declares_the_hardware_may_run_right_is_no_disagreement():
    results, reference = _gpu_run()
    for verdict in results["dev_check"][0]["verdicts"]:
        if verdict["example"] == "p37_no_commit":
            verdict["hardware"] = "a race the GPU usually wins"
    summary = report.Summary(results, reference)
    assert summary.disagreements() == []
    assert report.agreement(report.Verdict("fail", "race"), report.Verdict("pass", None, "luck")) == report.HIDDEN
    assert report.agreement(report.Verdict("fail", "race"), report.Verdict("fail", "timeout", "luck")) == "both fail"
    text = summary.markdown()
    assert "- 37 tma_copy: p37_no_commit: a race the GPU usually wins" in text


@pytest.mark.parametrize("dry_run", [False, True])
def test_the_interpreter_on_a_gpus_cases_is_neither_side_of_a_comparison(dry_run: bool):
    """dev check's `hardware cases` run the interpreter on the GPU's shape cases: no kernel ran on a device, and
    the verdict is not the interpreter's on its own cases (a dry run's device is the interpreter itself)."""
    results, reference = _gpu_run()
    if dry_run:
        results.update(backend="interpret", dry_run=True)
    on_cases = {**_v("constant_add", "hardware cases", None, "interpret", "fail", "mismatch-wrong"), "cases": "gpu"}
    results["dev_check"][1]["verdicts"].append(on_cases)
    summary = report.Summary(results, reference)
    assert [row for row in summary.comparisons() if row[1] == "hardware cases"] == []
    assert summary.interpreted("constant_add", "hardware cases", None) is None
