"""The course's guardian: every stub fails, every solution passes, the metadata is whole.

The kernels are run once for the session by `dev check` (the `course_check` fixture, on pools of
real checkers), which also checks every mistake and correct alternative in course/; the tests
here add the built-in course's own stricter rules.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import COURSE, checked_by_dev_check, skip_if_jax_too_old

from pallas_puzzles import backends
from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.checking import support
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.dev.check import ACCELERATORS, HARDWARE_CASES
from pallas_puzzles.engine import specs
from pallas_puzzles.engine.checker import check_puzzle, load_learner_module
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.workspace.folder import Workspace
from pallas_puzzles.workspace.state import State, load_state, save_state

REPO = Path(__file__).resolve().parents[2]
PUZZLES = [pytest.param(p, id=p.label) for p in COURSE.puzzles]
UNSOLVED = [pytest.param(p, id=p.label) for p in COURSE.puzzles if not p.tour]


# A stub must load and run, then fail on what its kernel does (or does not) compute.
STUB_FAILURES = {FindingKind.MISMATCH_UNWRITTEN, FindingKind.MISMATCH_WRONG, FindingKind.MISMATCH_NAN,
                 FindingKind.MISMATCH_GARBAGE, FindingKind.SHAPE}


def runnable(puzzles) -> set[str]:
    """The names of the puzzles this leg's jax can check (support's one answer: the puzzle's and its
    target's jax)."""
    return {p.name for p in puzzles if support.refusal(p, None) is None}


def test_the_builtin_course_passes_dev_check(course_check):
    """Every stub fails, every solution passes and lowers, every mistake and alternative behaves."""
    assert course_check.course is not None and course_check.course.name == COURSE.name
    assert [problem.line() for problem in course_check.problems] == []
    assert {p.puzzle for p in course_check.skipped} == {p.name for p in COURSE.puzzles} - runnable(COURSE.puzzles)


def test_each_accelerators_own_cases_are_checked_in_the_interpreter(course_check):
    """dev check runs each solution (and every example) on each accelerator's own shape cases too."""
    solutions = {(job.puzzle.name, job.cases_of) for job, _ in course_check.checked
                 if job.subject == HARDWARE_CASES and job.example is None}
    assert solutions == {(p.name, b.name) for p in COURSE.puzzles for b in ACCELERATORS
                         if p.supports(b) and p.own_cases(b) and p.name in runnable(COURSE.puzzles)}


def test_the_gpu_cases_fail_a_kernel_that_masks_no_padded_key(course_check):
    """An H200 passed flash_attention without the mask of padded keys: none of its GPU cases had any."""
    verdict = next(result for job, result in course_check.checked if job.subject == HARDWARE_CASES and
                   job.cases_of == "gpu" and job.example is not None and job.example.name == "p17_no_key_mask")
    assert not verdict.passed and verdict.kind is FindingKind.MISMATCH_WRONG


def test_every_stub_fails_on_what_its_kernel_computes(course_check):
    """Stricter than dev check asks of any course: a stub here fails on its numbers or shape."""
    stubs = checked_by_dev_check(course_check, "stub")
    assert set(stubs) == runnable(p for p in COURSE.puzzles if not p.tour)
    for name, result in stubs.items():
        assert not result.passed and result.finding is None, (name, result.finding)
        assert result.cases, "the stub's first shape case ran"
        assert result.first_failure.kind in STUB_FAILURES, (name, result.first_failure)


def test_every_solution_passes_every_case(course_check):
    solutions = checked_by_dev_check(course_check, "solution")
    assert set(solutions) == runnable(COURSE.puzzles)
    for name, result in solutions.items():
        assert result.passed, (name, result.findings, [(c.label, c.finding, c.mismatch) for c in result.cases])
        assert len(result.cases) == len(COURSE.find(name).cases_for(INTERPRET))


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_metadata_is_complete(puzzle):
    assert (REPO / "exercises" / puzzle.file).is_file()
    assert (REPO / "solutions" / puzzle.file).is_file()
    assert puzzle.file.startswith(f"{puzzle.number:02d}_")
    assert len(puzzle.hints) >= 2, "at least two progressive hint levels"
    assert len(set(puzzle.hints)) == len(puzzle.hints)
    assert len(puzzle.cases_for(INTERPRET)) >= 3, "at least three shape cases"
    assert set(puzzle.backends) <= set(backends.REGISTRY) and puzzle.supports(INTERPRET)
    assert puzzle.summary
    assert 0 < puzzle.rtol <= 0.05 and 0 < puzzle.atol <= 0.05
    assert puzzle.reference_seconds > 0, "measure it with `pallas-puzzles dev times ... --write`"
    assert 10 <= puzzle.limit_seconds <= 60, "a runaway kernel costs seconds, not minutes"


@pytest.mark.parametrize("puzzle", UNSOLVED)
def test_some_interpret_case_is_ragged_or_varied(puzzle):
    """Hard-coded shapes must fail: the cases may not all be the same size."""
    cases = puzzle.cases_for(INTERPRET)
    assert len({tuple(sorted(c.items())) for c in cases}) == len(cases)


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_some_case_leaves_the_small_default_range(puzzle):
    """A formula that breaks on large magnitudes, far from zero or on nearly constant rows must meet
    such inputs: some interpret case reshapes its inputs (`distributions`), and its label says how."""
    cases = puzzle.cases_for(INTERPRET)
    reshaped = [i for i in range(len(cases)) if any(r.describe() for r in puzzle.distribution(i))]
    assert reshaped, "give the puzzle a `distributions` entry that some shape case reaches"
    label = specs.case_label(cases[reshaped[0]], puzzle, reshaped[0])
    assert "scaled by" in label or "shifted by" in label


# The course's softmax and attention puzzles, and how their kernels' softmax scores come from the inputs.
SCORES = {
    "long_softmax": lambda x: x,
    "softmax_one_pass": lambda x: x,
    "flash_attention_scalar": lambda q, k, v: q[:, None] * k[None, :],
    "flash_attention": lambda q, k, v: q @ k.T / np.sqrt(q.shape[1]),
    "hopper_attention": lambda q, k, v: q @ k.T / np.sqrt(q.shape[1]),
}
UNDERFLOW = -110.0  # float32 exp of anything below is 0 (its smallest number above 0 is exp(-103.3))


def test_every_softmax_meets_a_case_of_rows_far_below_zero():
    """A running maximum started at 0 instead of -inf is right until every score of a row is far below
    zero: then every exp underflows and the sum is 0. Each softmax and attention puzzle has a case where
    every score is."""
    softmaxes = {p.name for p in COURSE.puzzles
                 if "softmax" in f"{p.title} {p.summary}".lower() or "attention" in p.name}
    assert softmaxes == set(SCORES), "say how the new puzzle's scores come from its inputs"
    for name, scores in SCORES.items():
        puzzle = COURSE.find(name)
        highest = [np.max(scores(*(a.astype(np.float64) for a in specs.make_inputs(puzzle, sizes, i))))
                   for i, sizes in enumerate(puzzle.cases_for(INTERPRET))]
        assert min(highest) < UNDERFLOW, f"{name}: the highest score of each case: {highest}"


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_exercise_spec_matches_canonical_spec(puzzle):
    """The spec shown to learners computes what the checker's own copy computes."""
    skip_if_jax_too_old(puzzle)  # the exercise imports that jax's Pallas APIs
    module = load_learner_module(REPO / "exercises" / puzzle.file)
    inputs = specs.make_inputs(puzzle, puzzle.cases_for(INTERPRET)[0], 0)
    shown = getattr(module, "spec", None)
    assert callable(shown), "every exercise shows its spec"
    np.testing.assert_allclose(
        np.asarray(shown(*inputs), dtype=np.float64),
        specs.expected_output(puzzle, inputs).astype(np.float64),
        rtol=1e-5, atol=1e-5,
    )


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_exercise_contract(puzzle):
    """Standalone file: a docstring, the entry point, a TODO, no interpret= argument."""
    source = (REPO / "exercises" / puzzle.file).read_text()
    tree = ast.parse(source)
    assert ast.get_docstring(tree), "the docstring teaches the idea"
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert puzzle.entry in names
    assert "interpret=" not in source, "the checker injects the backend"
    assert 'if __name__ == "__main__":' in source
    if not puzzle.tour:
        assert "TODO" in source


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_target_options_suit_the_puzzles_target(puzzle):
    """A puzzle's target_options are read by its target, which says in sentences what is wrong with them."""
    from pallas_puzzles.engine import targets

    assert targets.get(puzzle.target).option_problems(puzzle.target_options) == []


def test_inserting_a_puzzle_changes_no_other_puzzles_inputs_or_progress(tmp_path):
    """Names, not positions: a new puzzle in the middle re-numbers those after it, and nothing else."""
    copy = tmp_path / "course"
    shutil.copytree(COURSE.folder, copy, ignore=shutil.ignore_patterns("__pycache__"))
    text = (copy / "course.toml").read_text()
    inserted = text.replace('[[chapter.puzzle]]\nname = "long_sum"', '[[chapter.puzzle]]\nname = "inserted"\n'
                            'title = "Inserted"\nfile = "06b_inserted.py"\nentry = "inserted"\nspec = "long_sum"\n'
                            'inputs = [{ name = "x", shape = ["N0", "T"] }]\n'
                            '[chapter.puzzle.cases]\ninterpret = [{ N0 = 2, T = 3 }]\n\n'
                            '[[chapter.puzzle]]\nname = "long_sum"', 1)
    assert inserted != text
    (copy / "course.toml").write_text(inserted)
    grown = load_course(copy)
    assert grown.find("long_sum").number == COURSE.find("long_sum").number + 1
    for before in COURSE.puzzles:
        after = grown.find(before.name)
        for index, sizes in enumerate(before.cases_for(INTERPRET)):
            for a, b in zip(specs.make_inputs(before, sizes, index), specs.make_inputs(after, sizes, index)):
                np.testing.assert_array_equal(a, b)
    workspace = Workspace(tmp_path)
    save_state(workspace, State(current="long_softmax", solved={"long_sum", "bf16_matmul"},
                                hints_seen={"long_softmax": 2}, course=COURSE.name))
    state, warning = load_state(workspace, grown)
    assert warning is None
    assert (state.current, state.solved, state.hints_seen) == ("long_softmax", {"long_sum", "bf16_matmul"},
                                                               {"long_softmax": 2})


def test_the_tour_says_what_its_padding_prints():
    """The tour's text about padding matches what its own shape cases print: NaN in the first,
    then garbage the kernel cannot tell from data (here, stale numbers in its third case)."""
    from pallas_puzzles.engine.targets.pallas_call.intercept.poison import unwritten_memory

    tour = next(p for p in COURSE.puzzles if p.tour)
    path = tour.solution_path
    result = check_puzzle(tour, path, INTERPRET, fail_fast=False)
    assert result.passed
    stale, _ = unwritten_memory(2, specs.make_inputs(tour, tour.cases_for(INTERPRET)[2], 2))
    shown = str(np.float32(stale))  # the tour prints its block as float32 scalars, one by one
    assert "nan" in result.printed and shown in result.printed
    assert result.printed.count(shown) >= 3, "the padding, not one element of x"
    words = " ".join(ast.get_docstring(ast.parse(path.read_text())).split())
    assert "NaN in the first shape case" in words and "(1e6 or -1e6) or with stale numbers" in words
