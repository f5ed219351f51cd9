"""The Blackwell target beyond the course's mistakes.toml: hangs stopped in seconds and named by their
barrier, a clean check after a failure, findings no chapter mistake shows, and the chapter on an older jax.

Checks run in this process, as in test_mosaic_gpu.py; the chapter needs jax >= 0.12, so on the jax 0.10
leg only the refusal is checked.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers import COURSE, MISTAKES, build_mistake, skip_if_jax_too_old

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.checking import support
from pallas_puzzles.dev import examples
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.findings import FindingKind

CHAPTER = [p for p in COURSE.puzzles if p.chapter == "blackwell"]
TILE = COURSE.find("tcgen05_tile")


def _mistake(puzzle: str, kind: str) -> examples.Example:
    return next(m for m in MISTAKES if m.puzzle == puzzle and m.kind == kind)


def _variant(puzzle, edits: list[tuple[str, str]], tmp_path: Path):
    skip_if_jax_too_old(puzzle)
    example = examples.Example(name="variant", puzzle=puzzle.name, why="a variant written by this test",
                               edits=tuple(examples.Edit(old, new) for old, new in edits), must_pass=False)
    return check_puzzle(puzzle, build_mistake(example, tmp_path), INTERPRET)


def test_the_chapter_has_five_puzzles_with_three_hints_and_cases():
    assert len(CHAPTER) >= 5
    assert all(len(p.hints) >= 3 for p in CHAPTER)


def test_the_chapter_is_refused_in_one_sentence_on_an_older_jax():
    refused = support.refusal(TILE, INTERPRET, have_jax="0.10.2")
    assert refused is not None and refused.kind is FindingKind.JAX_TOO_OLD
    assert "0.12" in refused.sentence and refused.sentence.count(". ") == 0


@pytest.mark.parametrize(("puzzle", "barrier"), [("tcgen05_pipeline", "mma_done"),
                                                 ("blackwell_warp_specialized", "mma_done"),
                                                 ("multicast_pair", "tma_barrier")])
def test_a_hang_stops_within_seconds_named_by_its_barrier_and_line(puzzle: str, barrier: str, tmp_path: Path):
    mistake = _mistake(puzzle, "barrier-stall")
    found = COURSE.find(puzzle)
    skip_if_jax_too_old(found)
    path = build_mistake(mistake, tmp_path)
    check_puzzle(found, path, INTERPRET)  # warm: JAX has traced this kind of kernel once
    started = time.perf_counter()
    result = check_puzzle(found, path, INTERPRET)
    assert time.perf_counter() - started < 5.0
    finding = result.first_failure.finding
    assert result.kind is FindingKind.BARRIER_STALL
    assert finding.message.startswith(f"The wait on {barrier} at line {finding.where[0].line} never returns")
    assert mistake.line in finding.where[0].text
    # No call in the file arrives on mma_done: said so; the multicast's barrier has copies, one missing.
    assert (f"Nothing in the kernel arrives on {barrier}" in finding.message) == (barrier == "mma_done")


def test_after_a_race_a_hang_and_a_nan_the_next_check_runs_clean(tmp_path: Path):
    skip_if_jax_too_old(TILE)
    for kind in ("tmem-read-early", "tmem-uninitialised"):
        assert not check_puzzle(TILE, build_mistake(_mistake("tcgen05_tile", kind), tmp_path), INTERPRET).passed
        assert check_puzzle(TILE, TILE.solution_path, INTERPRET, fail_fast=False).passed
    pipeline = COURSE.find("tcgen05_pipeline")
    assert not check_puzzle(pipeline, build_mistake(_mistake("tcgen05_pipeline", "barrier-stall"), tmp_path),
                            INTERPRET).passed
    assert check_puzzle(TILE, TILE.solution_path, INTERPRET, fail_fast=False).passed


def test_an_mma_reading_uncommitted_stores_is_named_at_both_lines(tmp_path: Path):
    """Registers stored into an operand's SMEM, then the MMA without plgpu.commit_smem()."""
    result = _variant(TILE, [(
        "    plgpu.barrier_wait(tma_barrier)\n",
        "    plgpu.barrier_wait(tma_barrier)\n    a_smem[...] = a_smem[...] * 2\n")], tmp_path)
    assert result.kind is FindingKind.SMEM_UNCOMMITTED
    finding = result.first_failure.finding
    assert "commit_smem" in finding.message
    assert [w.text for w in finding.where] == [
        "a_smem[...] = a_smem[...] * 2",
        "plgpu.tcgen05_mma(acc_tmem, a_smem, b_smem, mma_barrier, accumulate=False)"]


def test_tmem_past_512_columns_is_refused_as_capacity(tmp_path: Path):
    result = _variant(TILE, [("TN = 128  #", "TN = 1024  #")], tmp_path)
    assert result.kind is FindingKind.TMEM_CAPACITY
    assert "1024 columns" in result.first_failure.finding.message
