"""The course's guardian: every stub fails, every solution passes, the metadata is whole."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from pallas_puzzles import backends, versions
from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.engine import specs
from pallas_puzzles.engine.checker import check_puzzle, load_learner_module
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.metadata import load_course

REPO = Path(__file__).resolve().parents[1]
COURSE = load_course()
PUZZLES = [pytest.param(p, id=p.label) for p in COURSE.puzzles]
UNSOLVED = [pytest.param(p, id=p.label) for p in COURSE.puzzles if not p.tour]


# A stub must load and run, then fail on what its kernel does (or does not) compute.
STUB_FAILURES = {FindingKind.MISMATCH_UNWRITTEN, FindingKind.MISMATCH_WRONG, FindingKind.MISMATCH_NAN,
                 FindingKind.MISMATCH_GARBAGE, FindingKind.SHAPE}


def skip_if_jax_too_old(puzzle) -> None:
    """A puzzle with min_jax is checked on every leg whose jax has its APIs, and skipped on the others."""
    too_old = versions.missing_requirement(puzzle.number, puzzle.min_jax)
    if too_old:
        pytest.skip(too_old)


@pytest.mark.parametrize("puzzle", UNSOLVED)
def test_stub_fails(puzzle):
    skip_if_jax_too_old(puzzle)
    result = check_puzzle(puzzle, REPO / "exercises" / puzzle.file, INTERPRET)
    assert not result.passed
    assert result.finding is None, f"a stub must load and run, not fail with {result.finding}"
    assert result.cases, "the stub's first shape case ran"
    assert result.first_failure.kind in STUB_FAILURES, result.first_failure


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_solution_passes_every_case(puzzle):
    skip_if_jax_too_old(puzzle)
    result = check_puzzle(puzzle, REPO / "solutions" / puzzle.file, INTERPRET, fail_fast=False)
    failures = [(c.label, c.finding, c.mismatch) for c in result.cases if not c.passed]
    assert result.finding is None, result.finding
    assert result.passed, failures
    assert len(result.cases) == len(puzzle.cases_for(INTERPRET))


def test_tour_starts_solved():
    tours = [p for p in COURSE.puzzles if p.tour]
    assert [p.number for p in tours] == [0]
    tour = tours[0]
    assert (REPO / "exercises" / tour.file).read_text() == (REPO / "solutions" / tour.file).read_text()


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
    assert puzzle.reference_seconds > 0, "measure it with bench/reference_times.py --write"
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


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_exercise_spec_matches_canonical_spec(puzzle):
    """The spec shown to learners computes what the checker's own copy computes."""
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


def test_every_spec_module_is_used():
    used = {p.spec for p in COURSE.puzzles}
    modules = {f.stem for f in (REPO / "src" / "pallas_puzzles" / "engine" / "specs").glob("*.py") if f.stem != "__init__"}
    assert modules == used


def test_course_numbers_are_contiguous():
    numbers = [p.number for p in COURSE.puzzles]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    assert len({p.name for p in COURSE.puzzles}) == len(numbers)


def test_a_misspelt_metadata_key_is_refused():
    from pallas_puzzles.metadata import _parse_puzzle

    with pytest.raises(ValueError, match="unknown keys \\['rtoll'\\]"):
        _parse_puzzle({"number": 3, "name": "x", "rtoll": 1e-6})
