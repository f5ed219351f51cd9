"""The course's guardian: every stub fails, every solution passes, the metadata is whole.

The kernels are run once for the session by `dev check` (the `course_check` fixture, on pools of
real checkers), which also checks every mistake and correct alternative in course/; the tests
here add the built-in course's own stricter rules.
"""

from __future__ import annotations

import pytest
from helpers import COURSE

from pallas_puzzles.course.reader import FORMAT, CourseError, builtin_folder, parse


def test_tour_starts_solved():
    tours = [p for p in COURSE.puzzles if p.tour]
    assert [p.number for p in tours] == [0]


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
        parse(_minimal(rtoll=1e-6), builtin_folder())


def test_a_course_of_only_a_tour_is_refused():
    with pytest.raises(CourseError, match="no puzzle besides its tour"):
        parse(_minimal(tour=True), builtin_folder())


@pytest.mark.parametrize("version", [None, 1, FORMAT + 1])
def test_a_course_file_of_another_format_is_refused(version):
    data = _minimal()
    data.pop("format") if version is None else data.update(format=version)
    with pytest.raises(CourseError, match=f"reads format {FORMAT}"):
        parse(data, builtin_folder())




def test_launcher_ops_are_read_as_names_and_checked_by_dev_check():
    from pallas_puzzles.dev.static import launcher_ops

    puzzle = parse(_minimal(launcher_ops=["reduce_sum", "transpose", "sum_everything"]), builtin_folder()).puzzles[0]
    assert puzzle.launcher_ops == ("reduce_sum", "transpose", "sum_everything")
    problems = {p.message.split("'")[1]: p.message for p in launcher_ops(puzzle)}
    assert set(problems) == {"transpose", "sum_everything"}  # layout needs no leave; an unknown name is a typo
    assert "only arranges data" in problems["transpose"] and "not an operation" in problems["sum_everything"]
    assert launcher_ops(COURSE.find("two_core_sum")) == [] and COURSE.find("two_core_sum").launcher_ops


def test_launcher_ops_must_be_a_list_of_names():
    with pytest.raises(CourseError, match="`launcher_ops` must be a list"):
        parse(_minimal(launcher_ops="reduce_sum"), builtin_folder())


def test_a_backend_tolerance_replaces_rtol_and_atol_there_only():
    from pallas_puzzles.backends import GPU, INTERPRET, TPU
    from pallas_puzzles.course.model import Tolerance

    puzzle = parse(_minimal(rtol=1e-5, atol=1e-6, tolerance={"gpu": {"rtol": 1e-3}}), builtin_folder()).puzzles[0]
    assert puzzle.tolerance_on(GPU) == Tolerance(rtol=1e-3, atol=1e-6)  # atol left out: the puzzle's
    assert puzzle.tolerance_on(INTERPRET) == puzzle.tolerance_on(TPU) == Tolerance(rtol=1e-5, atol=1e-6)
    both = parse(_minimal(tolerance={"tpu": {"rtol": 0, "atol": 2e-3}}), builtin_folder()).puzzles[0]
    assert both.tolerance_on(TPU) == Tolerance(rtol=0.0, atol=2e-3)


@pytest.mark.parametrize("value, words", [
    (1e-3, "must be a table of backends"),
    ({"interpret": {"rtol": 1e-3}}, "names 'interpret', which has no tolerance of its own"),
    ({"cuda": {"rtol": 1e-3}}, "names 'cuda'"),
    ({"gpu": 1e-3}, "for gpu must give rtol, atol or both"),
    ({"gpu": {}}, "for gpu must give rtol, atol or both"),
    ({"gpu": {"rtoll": 1e-3}}, "for gpu must give rtol, atol or both"),
    ({"gpu": {"rtol": "1e-3"}}, "for gpu must give rtol, atol or both"),
    ({"gpu": {"atol": -1e-3}}, "for gpu must give rtol, atol or both"),
    ({"gpu": {"atol": True}}, "for gpu must give rtol, atol or both"),
])
def test_a_bad_tolerance_is_refused_in_one_sentence(value, words):
    with pytest.raises(CourseError) as caught:
        parse(_minimal(tolerance=value), builtin_folder())
    message = caught.value.message
    assert words in message and "puzzle x's `tolerance`" in message
    assert message.count("\n") == 0 and message.endswith(".")


def test_dev_check_reports_a_tolerance_for_a_backend_the_puzzle_does_not_run_on():
    from pallas_puzzles.dev.static import unused_tolerances

    puzzle = parse(_minimal(backends=["interpret", "tpu"], tolerance={"gpu": {"atol": 1e-3}}),
                   builtin_folder()).puzzles[0]
    [problem] = unused_tolerances(puzzle)
    assert problem.subject == "tolerance" and "for gpu, where the puzzle does not run" in problem.message
    assert all(unused_tolerances(p) == [] for p in COURSE.puzzles)


def test_the_builtin_gpu_tolerances_only_widen_the_interpreters():
    """A GPU rounds more than the CPU, never less: its tolerance widens both bounds, never tightens one."""
    from pallas_puzzles.backends import GPU, INTERPRET

    widened = [p for p in COURSE.puzzles if GPU.name in p.tolerance]
    assert {p.name for p in widened} >= {"quantized_matmul", "fused_layernorm", "flash_attention", "resident_weights"}
    for puzzle in widened:
        gpu, interpreted = puzzle.tolerance_on(GPU), puzzle.tolerance_on(INTERPRET)
        assert gpu.rtol >= interpreted.rtol and gpu.atol >= interpreted.atol and gpu != interpreted, puzzle.name
        assert puzzle.supports(GPU)
