"""The manual-DMA chapter's machinery: min_jax, stalled semaphores, the copy hooks."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import one_sentence

from pallas_puzzles import versions
from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.checking import support
from pallas_puzzles.cli import app
from pallas_puzzles.course import source as course_source
from pallas_puzzles.course.model import Course
from pallas_puzzles.course.reader import load_course
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.engine.targets.pallas_call.intercept.dma_watch import STALL_SECONDS
from pallas_puzzles.errors import UserError
from pallas_puzzles.findings import FindingKind

REPO = Path(__file__).resolve().parents[1]


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
    result = cli.invoke(app, ["verify", "25"])
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
    puzzle = dataclasses.replace(load_course().find(25), min_jax="99.0")
    result = check_puzzle(puzzle, REPO / "solutions" / puzzle.file, INTERPRET)
    assert not result.passed and result.kind is FindingKind.JAX_TOO_OLD
    with pytest.raises(UserError):
        support.require(puzzle, INTERPRET)


def test_a_never_signalled_wait_stops_fast_and_names_the_wait(tmp_path):
    puzzle = load_course().find(25)
    source = (REPO / "solutions" / puzzle.file).read_text()
    learner = tmp_path / puzzle.file
    learner.write_text(source.replace("    copy_in.start()\n", "", 1))
    result = check_puzzle(puzzle, learner, INTERPRET)
    finding = result.first_failure.finding
    assert finding.kind is FindingKind.SEMAPHORE_STALL
    assert [line.text for line in finding.where] == ["copy_in.wait()"]
    assert result.seconds < STALL_SECONDS + 10 < puzzle.limit_seconds
    # The checker is usable again at once: the next check of the same process passes.
    assert check_puzzle(puzzle, REPO / "solutions" / puzzle.file, INTERPRET).passed


def test_copy_hooks_are_transparent_outside_a_check():
    import jax.numpy as jnp
    from jax.experimental.pallas import tpu as pltpu

    from pallas_puzzles.engine.targets.pallas_call.intercept import dma_watch

    dma_watch.install()
    dma_watch.install()  # idempotent: wrappers are not stacked
    assert pltpu.make_async_copy.__wrapped__.__name__ == "make_async_copy"
    # No session active: a shape mismatch is left to JAX (here: descriptors are built lazily).
    assert pltpu.make_async_copy(jnp.zeros((2, 8)), jnp.zeros((4, 8)), None) is not None


def test_a_stalled_wait_in_the_worker_is_a_finding_and_the_worker_carries_on(tmp_path):
    """What watch mode sees: a semaphore-stall finding well inside the time limit, the same worker reused."""
    from pallas_puzzles.worker.client import Worker

    puzzle = load_course().find(30)
    learner = tmp_path / puzzle.file
    learner.write_text((REPO / "solutions" / puzzle.file).read_text()
                       .replace("copy(s).wait()", "copy(0).wait()"))
    with Worker("interpret") as worker:
        worker.start()
        first = worker._process.pid
        stalled = worker.check(puzzle, learner)
        assert stalled.first_failure.kind is FindingKind.SEMAPHORE_STALL
        assert stalled.seconds < puzzle.limit_seconds
        assert worker.check(puzzle, REPO / "solutions" / puzzle.file).passed
        assert worker._process.pid == first and worker.restarts == 0


def test_a_copy_overrun_names_the_copy_before_the_launcher(tmp_path):
    from test_mistakes import MISTAKES, build_mistake

    mistake = next(m for m in MISTAKES if m.name == "p25_copy_overruns")
    result = check_puzzle(load_course().find(25), build_mistake(mistake, tmp_path), INTERPRET)
    finding = result.first_failure.finding
    assert finding.kind is FindingKind.DMA_OVERRUN
    assert mistake.line in finding.where[0].text  # the copy's line leads, not the pallas_call it was traced from
