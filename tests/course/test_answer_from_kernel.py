"""The answer comes from the kernel, on every puzzle of the course (issue 31).

Two cheats are built from each puzzle's reference solution and must fail with `outside-kernel`, naming
the launcher line: the launcher replaced by the exercise's own `spec`, and a kernel that only copies an
answer XLA computed (on the multi-chip chapter, where a launcher sees only its own block, an answer
gathered from every device with lax.all_gather). The reference solutions themselves pass in the course
check (`dev check`, tests/course/test_course.py); here they must also carry no such finding.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import COURSE, checked_by_dev_check, skip_if_jax_too_old

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.course.model import Puzzle
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.findings import FindingKind

PUZZLES = [p for p in COURSE.puzzles if not p.tour]

SPEC = '''

def {entry}(*args):
    return spec(*args)
'''
PALLAS_COPY = '''

def _copy_answer(a_ref, o_ref):
    o_ref[...] = a_ref[...]


def {entry}(*args):
    answer = spec(*args)
    return pl.pallas_call(_copy_answer, out_shape=jax.ShapeDtypeStruct(answer.shape, answer.dtype))(answer)
'''
GPU_COPY = '''

def _copy_answer(a_gmem, o_gmem, smem, barrier):
    plgpu.copy_gmem_to_smem(a_gmem, smem, barrier)
    plgpu.barrier_wait(barrier)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(smem, o_gmem)
    plgpu.wait_smem_to_gmem(0)


def {entry}(*args):
    answer = spec(*args)
    return plgpu.kernel(_copy_answer, out_type=jax.ShapeDtypeStruct(answer.shape, answer.dtype),
                        scratch_types=[plgpu.SMEM(answer.shape, answer.dtype), plgpu.Barrier(num_arrivals=1)])(answer)
'''
GATHERED_COPY = '''

def _copy_answer(a_ref, o_ref):
    o_ref[...] = a_ref[...]


def {entry}(*args):
    me, n = jax.lax.axis_index("x"), jax.lax.axis_size("x")
    answer = spec(*(jax.lax.all_gather(a, "x", tiled=True) for a in args))
    mine = jax.lax.dynamic_slice_in_dim(answer, me * (answer.shape[0] // n), answer.shape[0] // n)
    return pl.pallas_call(_copy_answer, out_shape=jax.ShapeDtypeStruct(mine.shape, mine.dtype))(mine)
'''
COPIES = {"tpu-multichip": (GATHERED_COPY, "answer = spec(*(jax.lax.all_gather("), "mosaic-gpu": (GPU_COPY, None),
          "blackwell": (GPU_COPY, None)}


def _cheat(puzzle: Puzzle, launcher: str, folder: Path) -> Path:
    """The reference solution with its launcher redefined at the end of the file."""
    file = folder / puzzle.file
    file.write_text(puzzle.solution_path.read_text() + launcher.format(entry=puzzle.entry))
    return file


def _refused(puzzle: Puzzle, file: Path, line: str) -> None:
    result = check_puzzle(puzzle, file, INTERPRET)
    assert not result.passed and result.kind is FindingKind.OUTSIDE_KERNEL, (puzzle.name, result.kind)
    finding = result.finding or result.first_failure.finding
    assert any(where.text.startswith(line) for where in finding.where), (puzzle.name, finding.where)
    assert "pallas_puzzles" not in finding.message, finding.message


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.name)
def test_a_launcher_that_returns_the_spec_is_refused_at_its_line(puzzle: Puzzle, tmp_path: Path):
    skip_if_jax_too_old(puzzle)
    _refused(puzzle, _cheat(puzzle, SPEC, tmp_path), "return spec(*args)")


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.name)
def test_a_kernel_that_copies_an_answer_xla_computed_is_refused(puzzle: Puzzle, tmp_path: Path):
    skip_if_jax_too_old(puzzle)
    template, line = COPIES.get(puzzle.target, (PALLAS_COPY, None))
    _refused(puzzle, _cheat(puzzle, template, tmp_path), line or "answer = spec(*args)")


def test_no_reference_solution_computes_outside_its_kernel(course_check):
    solutions = checked_by_dev_check(course_check, "solution")
    assert solutions, "the course check ran the reference solutions"
    for name, result in solutions.items():
        assert result.passed, name
        assert all(f.kind is not FindingKind.OUTSIDE_KERNEL for case in result.cases for f in case.findings), name
