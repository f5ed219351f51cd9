"""`dev check --backend gpu`: the stubs, solutions and examples of the puzzles that declare the accelerator run
there too, and the hardware must agree with the interpreter on pass or fail; `--puzzle` picks the puzzles."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from helpers import COURSE, one_sentence

from pallas_puzzles import backends
from pallas_puzzles.backends import GPU, INTERPRET, TPU
from pallas_puzzles.cli import app
from pallas_puzzles.dev import examples
from pallas_puzzles.dev.check import CORRECT, HARDWARE_CASES, MISTAKE, SOLUTION, STUB, CourseJob, _jobs, judge
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.results import CaseResult, CheckResult, Finding

TMA_COPY = COURSE.find("tma_copy")
MISTAKES = examples.load(COURSE.folder, examples.MISTAKES)
CORRECTS = examples.load(COURSE.folder, examples.CORRECT)


def _result(passed: bool, kind: FindingKind | None = None) -> CheckResult:
    findings = [Finding(kind, "what happened")] if kind is not None else []
    return CheckResult(number=37, name="tma_copy", file="f.py", backend="gpu", passed=passed, findings=findings)


def _job(subject: str, backend: str = "gpu") -> CourseJob:
    example = next((e for e in MISTAKES + CORRECTS if e.puzzle == TMA_COPY.name and
                    e.must_pass == (subject == CORRECT)), None) if subject in (MISTAKE, CORRECT) else None
    return CourseJob(TMA_COPY, Path("f.py"), backend, subject=subject, example=example)


def test_the_accelerator_runs_every_kernel_of_the_chosen_puzzles_that_declare_it(tmp_path: Path):
    chosen = frozenset({"tma_copy", "dma_copy", "constant_add"})
    jobs = _jobs(COURSE, MISTAKES + CORRECTS, [], tmp_path, "gpu", chosen)
    assert {job.puzzle.name for job in jobs} == chosen
    on_gpu = [job for job in jobs if job.requested == "gpu"]
    assert {job.puzzle.name for job in on_gpu} == {"tma_copy", "constant_add"}  # dma_copy runs on no GPU
    for puzzle in ("tma_copy", "constant_add"):
        interpreted = sorted((j.subject, j.file.name) for j in jobs if j.puzzle.name == puzzle and
                             j.requested == "interpret" and not j.cases_of)
        assert sorted((j.subject, j.file.name) for j in on_gpu if j.puzzle.name == puzzle) == interpreted
    tma_examples = [e for e in MISTAKES + CORRECTS if e.puzzle == "tma_copy"]
    assert len([j for j in on_gpu if j.puzzle.name == "tma_copy" and j.example]) == len(tma_examples)
    assert {j.name for j in on_gpu if j.subject == STUB} == {"stub on gpu"}
    assert all(j.name.endswith(" on gpu") for j in on_gpu)


def test_without_an_accelerator_or_a_choice_nothing_changes(tmp_path: Path):
    jobs = _jobs(COURSE, MISTAKES + CORRECTS, [], tmp_path, None, frozenset())
    assert {job.requested for job in jobs} == {"interpret", "tpu"}  # tpu: the lowering check
    assert {job.puzzle.name for job in jobs} == {p.name for p in COURSE.puzzles}


@pytest.mark.parametrize("subject, on_gpu, interpreted", [
    (STUB, _result(False, FindingKind.TIMEOUT), _result(False)),  # fails there too, with another kind
    (MISTAKE, _result(False, FindingKind.MISMATCH_WRONG), _result(False, FindingKind.SMEM_UNCOMMITTED)),
    (SOLUTION, _result(True), _result(True)),
    (CORRECT, _result(True), None),  # the interpreter could not run it here (a jax too old for it)
])
def test_the_hardware_agrees_when_it_passes_and_fails_the_same_kernels(subject, on_gpu, interpreted):
    assert judge(_job(subject), on_gpu, interpreted) is None


def test_a_mistake_the_hardware_runs_right_is_a_disagreement():
    wrong = judge(_job(MISTAKE), _result(True), _result(False, FindingKind.SMEM_UNCOMMITTED))
    assert wrong == ("passes, while the interpreter fails with smem-uncommitted: "
                     "the hardware and the interpreter disagree")


def test_a_mistake_over_a_budget_the_interpreter_counts_may_run_right_on_the_hardware():
    over = CheckResult(number=41, name="pipeline_matmul", file="f.py", backend="interpret", passed=False, cases=[
        CaseResult("M=128", passed=False, findings=(Finding(FindingKind.COPY_NOT_OVERLAPPED, "0% overlapped"),))])
    assert over.numbers_right
    assert judge(_job(MISTAKE), _result(True), over) is None  # the GPU card is counted by the interpreter only


def test_an_alternative_the_hardware_gets_wrong_is_a_disagreement():
    wrong = judge(_job(CORRECT), _result(False, FindingKind.MISMATCH_NAN), _result(True))
    assert wrong is not None and "the interpreter passes" in wrong and "disagree" in wrong


def test_alone_on_the_hardware_a_verdict_is_held_to_what_the_job_wants():
    assert judge(_job(STUB), _result(True), None) == "passes, where it must fail"
    assert judge(_job(SOLUTION), _result(True), None) is None


def test_a_checker_error_on_the_hardware_is_a_problem_whatever_the_interpreter_said():
    wrong = judge(_job(MISTAKE), _result(False, FindingKind.INTERNAL), _result(False, FindingKind.RACE))
    assert wrong is not None and wrong.startswith("the checker itself failed")


def test_the_interpreters_own_rules_still_hold_on_the_interpreter():
    """On the interpreter a stub must fail on its numbers, not with a finding (unchanged)."""
    wrong = judge(_job(STUB, "interpret"), _result(False, FindingKind.ERROR))
    assert wrong is not None and "a stub must load and run" in wrong


def test_an_unknown_puzzle_is_refused_in_one_sentence(cli):
    result = cli.invoke(app, ["dev", "check", str(COURSE.folder), "--puzzle", "no_such_puzzle"])
    assert result.exit_code == 2, result.output
    assert "There is no puzzle 'no_such_puzzle'" in one_sentence(result.output)


def test_a_mistake_declared_to_run_right_on_the_hardware_may_pass_there_and_only_there():
    declared = next(e for e in MISTAKES if e.name == "p37_no_commit")
    assert "H100" in declared.hardware
    job = CourseJob(TMA_COPY, Path("f.py"), "gpu", subject=MISTAKE, example=declared)
    assert judge(job, _result(True), _result(False, FindingKind.SMEM_UNCOMMITTED)) is None
    on_interpret = CourseJob(TMA_COPY, Path("f.py"), "interpret", subject=MISTAKE, example=declared)
    assert judge(on_interpret, _result(True)) == "passes, but this mistake must fail with smem-uncommitted"


def test_only_a_mistake_may_declare_the_hardware_runs_it_right(tmp_path: Path):
    correct = next(e for e in CORRECTS if e.puzzle == "tma_copy")
    found = examples.problems([dataclasses.replace(correct, hardware="luck")], COURSE)
    assert found == [(correct.name, "declares `hardware`, which only a mistake may: a correct kernel must pass "
                                    "everywhere")]


@pytest.mark.parametrize("name, why", [
    ("p39_fetch_after_wait", "cost budget"),  # copy-not-overlapped: the numbers are right
    ("p39_predicated_fetch", "only JAX's interpreter cannot run it"),  # not-on-cpu
])
def test_without_the_interpreter_a_mistake_of_right_numbers_may_pass_on_the_hardware(name, why):
    mistake = next(e for e in MISTAKES if e.name == name)
    assert why in mistake.hardware_may_pass
    job = CourseJob(COURSE.find(mistake.puzzle), Path("f.py"), "gpu", subject=MISTAKE, example=mistake)
    assert judge(job, _result(True), None) is None


def test_a_mistake_of_wrong_numbers_must_fail_on_the_hardware_without_a_declaration():
    mistake = next(e for e in MISTAKES if e.name == "p37_never_copies_out")
    assert mistake.hardware_may_pass == ""
    job = CourseJob(TMA_COPY, Path("f.py"), "gpu", subject=MISTAKE, example=mistake)
    assert judge(job, _result(True), None) == "passes, where it must fail"


FLASH = COURSE.find("flash_attention")


def test_the_hardware_cases_run_in_the_interpreter_on_each_accelerators_own_cases(tmp_path: Path):
    """flash_attention has GPU and TPU cases of its own: its solution and every example run on each set,
    in the interpreter, compared at that accelerator's tolerance."""
    jobs = [j for j in _jobs(COURSE, MISTAKES + CORRECTS, [], tmp_path, None, frozenset({FLASH.name}))
            if j.subject == HARDWARE_CASES]
    flash_examples = [e for e in MISTAKES + CORRECTS if e.puzzle == FLASH.name]
    assert len(jobs) == 2 * (1 + len(flash_examples))
    for accelerator in (GPU, TPU):
        mine = [j for j in jobs if j.cases_of == accelerator.name]
        assert {j.requested for j in mine} == {INTERPRET.name}
        assert {j.example.name if j.example else None for j in mine} == {None} | {e.name for e in flash_examples}
        for job in mine:
            assert job.puzzle.cases_for(INTERPRET) == FLASH.cases_for(accelerator)
            assert job.puzzle.tolerance_on(INTERPRET) == FLASH.tolerance_on(accelerator)
        assert {j.name for j in mine if j.example is None} == {f"solution on the {accelerator.name} cases"}


def test_no_hardware_cases_where_an_accelerator_has_no_cases_of_its_own(tmp_path: Path):
    """tma_copy's GPU runs the interpreter's cases (nothing new to learn), dma_copy runs on no GPU."""
    chosen = frozenset({"tma_copy", "dma_copy"})
    jobs = [j for j in _jobs(COURSE, MISTAKES + CORRECTS, [], tmp_path, None, chosen) if j.subject == HARDWARE_CASES]
    assert not TMA_COPY.own_cases(GPU)
    assert {(j.puzzle.name, j.cases_of) for j in jobs} <= {("dma_copy", "tpu")}
    assert all(j.cases_of != "gpu" for j in jobs)


def _on_cases(example_name: str | None, accelerator: str = "gpu") -> CourseJob:
    example = next(e for e in MISTAKES + CORRECTS if e.name == example_name) if example_name else None
    return CourseJob(FLASH.on_cases_of(backends.get(accelerator)), Path("f.py"), "interpret",
                     subject=HARDWARE_CASES, example=example, cases_of=accelerator)


def test_a_mistake_that_passes_on_the_hardware_cases_is_a_problem():
    """What an H200 found: no GPU case of flash_attention had padded keys, so a kernel without the key mask
    passed there, while the interpreter's cases failed it."""
    wrong = judge(_on_cases("p17_no_key_mask"), _result(True))
    assert wrong == ("passes on the gpu shape cases (checked in the interpreter): none of them shows this "
                     "mistake, so a GPU would pass it; add a gpu case that shows it, or say in its `hardware` "
                     "key why the hardware may run it right")
    assert _on_cases("p17_no_key_mask").name == "p17_no_key_mask on the gpu cases"


@pytest.mark.parametrize("example, passed", [
    ("p17_no_key_mask", False),  # a mistake that fails, whatever the kind
    ("p17_kv_block_past_end", True),  # declared: the hardware may run it right
    (None, True),  # the solution passes
])
def test_the_hardware_cases_want_what_the_interpreters_cases_want(example, passed):
    assert judge(_on_cases(example), _result(passed, None if passed else FindingKind.MISMATCH_WRONG)) is None


def test_a_solution_that_fails_on_the_hardware_cases_is_a_problem():
    wrong = judge(_on_cases(None, "tpu"), _result(False, FindingKind.MISMATCH_WRONG))
    assert wrong is not None and wrong.startswith("fails on the tpu shape cases (checked in the interpreter): ")
    assert wrong.endswith("a TPU would fail it too")


@pytest.mark.parametrize("example, on_its_own_cases", [
    (None, _result(False, FindingKind.MISMATCH_WRONG)),  # a solution that already fails there
    ("p17_no_key_mask", _result(True)),  # a mistake that already passes there
])
def test_what_the_interpreters_own_cases_get_wrong_is_said_once(example, on_its_own_cases):
    """dev check reports it for the interpreter's cases; the hardware cases add nothing to say."""
    on_hardware_cases = _result(example is not None, None if example else FindingKind.MISMATCH_WRONG)
    assert judge(_on_cases(example), on_hardware_cases, on_its_own_cases) is None
    assert judge(_on_cases(example), on_hardware_cases, None) is not None


def test_a_hardware_cases_job_is_compared_with_the_same_file_on_the_interpreters_cases(tmp_path: Path):
    jobs = _jobs(COURSE, MISTAKES + CORRECTS, [], tmp_path, None, frozenset({FLASH.name}))
    plain = {j.plain: j for j in jobs if not j.cases_of}
    for job in (j for j in jobs if j.cases_of):
        twin = plain[job.plain]
        assert (twin.file, twin.example, twin.requested) == (job.file, job.example, "interpret")
        assert twin.subject == (SOLUTION if job.example is None else MISTAKE if not job.example.must_pass else CORRECT)
