"""The course's guardian: every stub fails, every solution passes, the metadata is whole."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import skip_if_jax_too_old

from pallas_puzzles import backends
from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.course_file import FORMAT, CourseError, load_course, parse
from pallas_puzzles.engine import specs
from pallas_puzzles.engine.checker import check_puzzle, load_learner_module
from pallas_puzzles.findings import FindingKind
from pallas_puzzles.state import State, load_state, save_state
from pallas_puzzles.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
COURSE = load_course()
PUZZLES = [pytest.param(p, id=p.label) for p in COURSE.puzzles]
UNSOLVED = [pytest.param(p, id=p.label) for p in COURSE.puzzles if not p.tour]


# A stub must load and run, then fail on what its kernel does (or does not) compute.
STUB_FAILURES = {FindingKind.MISMATCH_UNWRITTEN, FindingKind.MISMATCH_WRONG, FindingKind.MISMATCH_NAN,
                 FindingKind.MISMATCH_GARBAGE, FindingKind.SHAPE}


@pytest.mark.parametrize("puzzle", UNSOLVED)
def test_stub_fails(puzzle):
    skip_if_jax_too_old(puzzle)
    result = check_puzzle(puzzle, REPO / "course" / "exercises" / puzzle.file, INTERPRET)
    assert not result.passed
    assert result.finding is None, f"a stub must load and run, not fail with {result.finding}"
    assert result.cases, "the stub's first shape case ran"
    assert result.first_failure.kind in STUB_FAILURES, result.first_failure


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_solution_passes_every_case(puzzle):
    skip_if_jax_too_old(puzzle)
    result = check_puzzle(puzzle, REPO / "course" / "solutions" / puzzle.file, INTERPRET, fail_fast=False)
    failures = [(c.label, c.finding, c.mismatch) for c in result.cases if not c.passed]
    assert result.finding is None, result.finding
    assert result.passed, failures
    assert len(result.cases) == len(puzzle.cases_for(INTERPRET))


def test_tour_starts_solved():
    tours = [p for p in COURSE.puzzles if p.tour]
    assert [p.number for p in tours] == [0]
    tour = tours[0]
    assert (REPO / "course" / "exercises" / tour.file).read_text() == (REPO / "course" / "solutions" / tour.file).read_text()


@pytest.mark.parametrize("puzzle", PUZZLES)
def test_metadata_is_complete(puzzle):
    assert (REPO / "course" / "exercises" / puzzle.file).is_file()
    assert (REPO / "course" / "solutions" / puzzle.file).is_file()
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
def test_exercise_spec_matches_canonical_spec(puzzle):
    """The spec shown to learners computes what the checker's own copy computes."""
    skip_if_jax_too_old(puzzle)  # the exercise imports that jax's Pallas APIs
    module = load_learner_module(REPO / "course" / "exercises" / puzzle.file)
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
    source = (REPO / "course" / "exercises" / puzzle.file).read_text()
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
    modules = {f.stem for f in (COURSE.folder / "specs").glob("*.py")}
    assert modules == used


def test_chapters_hold_the_course_in_order():
    assert [p.number for p in COURSE.puzzles] == list(range(len(COURSE.puzzles)))
    in_order = [p for chapter in COURSE.chapters for p in COURSE.in_chapter(chapter)]
    assert in_order == list(COURSE.puzzles), "a chapter's puzzles are contiguous"
    assert all(chapter.title and chapter.intro for chapter in COURSE.chapters)


def test_a_chapter_default_is_inherited_and_a_puzzle_may_override_it():
    dma = [p for p in COURSE.puzzles if p.chapter == "manual_dma"]
    assert all(p.backends == ("interpret", "tpu") for p in dma)
    assert {p.name for p in dma if not p.detect_races} == {"grouped_matmul"}


def _minimal(**puzzle_keys) -> dict:
    puzzle = {"name": "x", "title": "X", "file": "01_x.py", "entry": "x", "cases": {"interpret": [{"N": 1}]},
              **puzzle_keys}
    return {"format": FORMAT, "chapter": [{"name": "c", "title": "C", "puzzle": [puzzle]}]}


def test_a_misspelt_metadata_key_is_refused():
    with pytest.raises(CourseError, match="unknown keys \\['rtoll'\\]"):
        parse(_minimal(rtoll=1e-6), REPO / "course")


@pytest.mark.parametrize("version", [None, 1, FORMAT + 1])
def test_a_course_file_of_another_format_is_refused(version):
    data = _minimal()
    data.pop("format") if version is None else data.update(format=version)
    with pytest.raises(CourseError, match=f"reads format {FORMAT}"):
        parse(data, REPO / "course")


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
