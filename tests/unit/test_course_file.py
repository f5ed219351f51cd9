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
