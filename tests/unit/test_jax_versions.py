"""The manual-DMA chapter's machinery: min_jax, stalled semaphores, the copy hooks."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from helpers import one_sentence

from pallas_puzzles import versions
from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.checking import support
from pallas_puzzles.cli import app
from pallas_puzzles.course import source as course_source
from pallas_puzzles.course.model import Course
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.errors import UserError
from pallas_puzzles.findings import FindingKind

REPO = Path(__file__).resolve().parents[2]


def test_versions_compare_as_numbers():
    assert versions.parse("0.12.0.1") == (0, 12, 0, 1)
    assert versions.parse("0.13.0rc1") == (0, 13, 0)
    assert versions.parse("0.10.2") < versions.parse("0.12") < versions.parse("0.12.0.1")
    assert versions.python_for("0.12") == "3.12" and versions.python_for("0.10.2") == "3.11"


def test_min_jax_sentence_names_jax_and_python():
    assert versions.missing_requirement(27, "", "0.1") is None
    assert versions.missing_requirement(27, "0.12", "0.12.0.1") is None
    sentence = versions.missing_requirement(27, "0.12", "0.10.2")
    assert sentence is not None and sentence.count(". ") == 0 and sentence.endswith(".")
    assert "jax 0.12 or newer" in sentence and "Python 3.12" in sentence and "jax 0.10.2" in sentence


def _course_with_min_jax(number: int, min_jax: str) -> Course:
    course = load_course()
    puzzles = tuple(dataclasses.replace(p, min_jax=min_jax) if p.number == number else p for p in course.puzzles)
    return dataclasses.replace(course, puzzles=puzzles)


def test_verify_on_too_old_jax_exits_2_with_one_sentence(workspace, cli, monkeypatch):
    monkeypatch.setattr(course_source, "course_of", lambda workspace: _course_with_min_jax(25, "99.0"))
    result = cli.invoke(app, ["verify", "dma_copy"])
    assert result.exit_code == 2, result.output
    message = one_sentence(result.output)
    assert "needs jax 99.0 or newer" in message and "Python" in message


def test_list_shows_min_jax(workspace, cli, monkeypatch):
    monkeypatch.setattr(course_source, "course_of", lambda workspace: _course_with_min_jax(25, "99.0"))
    monkeypatch.setenv("COLUMNS", "200")
    result = cli.invoke(app, ["list"])
    assert result.exit_code == 0, result.output
    assert "jax>=99.0" in result.output


def test_too_old_jax_in_the_checker_is_a_finding_not_a_crash():
    puzzle = dataclasses.replace(load_course().find("dma_copy"), min_jax="99.0")
    result = check_puzzle(puzzle, REPO / "solutions" / puzzle.file, INTERPRET)
    assert not result.passed and result.kind is FindingKind.JAX_TOO_OLD
    with pytest.raises(UserError):
        support.require(puzzle, INTERPRET)




def test_what_this_jax_cannot_run_names_the_jax_a_laptop_needs():
    """init, doctor and the progress count name the interpreter's jax for the Mosaic GPU chapter (0.12, on
    Python 3.12), not the older jax its compiled GPU target takes (0.11), which a laptop cannot use."""
    gpu_chapter = [p for p in load_course().counted if p.target == "mosaic-gpu"]
    assert gpu_chapter
    assert support.beyond_this_jax(gpu_chapter, "0.10.2") == {"0.12": gpu_chapter}
    assert support.beyond_this_jax(gpu_chapter, "0.11.0") == {}  # a GPU runs them with this jax
