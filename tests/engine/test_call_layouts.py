"""The call layout a check records: what each grid step of each pallas_call moves."""

from __future__ import annotations

import pickle
from pathlib import Path

from pallas_puzzles.backends import INTERPRET
from pallas_puzzles.engine.checker import check_puzzle

REPO = Path(__file__).resolve().parents[2]


def _first_case(course, name: str):
    puzzle = course.find(name)
    result = check_puzzle(puzzle, REPO / "solutions" / puzzle.file, INTERPRET)
    assert result.passed
    return result.cases[0]


def test_blocked_call_records_every_steps_block(course):
    # N0=200, N1=300, blocks of 128, grid (cdiv(300,128), cdiv(200,128))
    case = _first_case(course, "outer_add_blocked")
    (call,) = case.calls
    assert call.grid == (3, 2)
    x, y, z = call.operands
    assert (x.role, x.shape, x.block, x.dtype) == ("input", (200,), (128,), "float32")
    assert z.role == "output" and z.block == (128, 128)
    points = call.grid_points()
    assert points[:3] == [(0, 0), (0, 1), (1, 0)]
    assert z.block_indices == tuple(points)  # every step its own output block
    assert x.block_indices == tuple((j,) for _, j in points)
    assert y.block_indices == tuple((i,) for i, _ in points)
    assert pickle.loads(pickle.dumps(case)) == case  # it crosses the worker boundary


def test_scratch_semantics_and_whole_array_operands(course):
    (call,) = _first_case(course, "matmul_grid_k").calls
    assert call.semantics == ("parallel", "parallel", "arbitrary")
    (scratch,) = call.role("scratch")
    assert (scratch.shape, scratch.memory_space, scratch.block) == ((64, 128), "vmem", None)
    (gridless,) = _first_case(course, "constant_add").calls
    x, z = gridless.operands
    assert x.block == x.shape and x.block_indices == ((0,),)


def test_scalar_prefetch_operand_lives_in_smem(course):
    (call,) = _first_case(course, "gather_rows").calls
    prefetch, table, _ = call.operands
    assert (prefetch.role, prefetch.memory_space, prefetch.block) == ("prefetch", "smem", None)
    assert len(table.block_indices) == call.grid[0]
