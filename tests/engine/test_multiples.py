"""Every blocked puzzle is checked at sizes that are exact multiples of its blocks (issue 18, class 1).

On a ragged size `n // B + 1` equals `pl.cdiv(n, B)`; engine/multiples.py evaluates the index maps
on the puzzle's first TPU case, without running a kernel, once the shape cases have passed.
"""

from __future__ import annotations

import time

import pytest
from helpers import COURSE

from pallas_puzzles.backends import INTERPRET, TPU
from pallas_puzzles.engine import specs
from pallas_puzzles.engine.checker import check_puzzle, load_learner_module
from pallas_puzzles.engine.targets.pallas_call import multiples
from pallas_puzzles.engine.targets.pallas_call.intercept import dma_watch, patch
from pallas_puzzles.engine.targets.pallas_call.intercept.session import StrictSession, session_scope


def _calls_at(puzzle, sizes):
    """The reference solution's pallas_calls at these sizes, recorded with no kernel run."""
    patch.install()
    dma_watch.install()
    file = puzzle.solution_path
    entry = getattr(load_learner_module(file), puzzle.entry)
    session = StrictSession(backend=INTERPRET, learner_file=str(file), allow_revisits=puzzle.sequential_grid,
                            cores=puzzle.cores, run_kernels=False)  # as multiples.check makes it
    with session_scope(session):
        entry(*specs.on_device(specs.make_inputs(puzzle, sizes, 0)))
    return session


@pytest.mark.parametrize("puzzle", [p for p in COURSE.puzzles if not p.tour and TPU.cases in p.cases],
                         ids=lambda p: p.label)
def test_the_multiple_sizes_are_whole_blocks_of_the_reference_solution(puzzle):
    sizes = puzzle.cases[TPU.cases][0]
    assert multiples.multiple_sizes(puzzle) in (sizes, None), "the first TPU case, unless the interpreter runs it"
    session = _calls_at(puzzle, sizes)
    assert not session.grid_points, "no kernel ran"
    for record in session.calls:
        for info in record.inputs + record.outputs:
            if info.block_dims is None or info.memory_space is not None or info.block_shape is None:
                continue
            ragged = [(n, b) for n, b in zip(info.array_shape, info.block_dims) if n % b]
            assert not ragged, f"{info.name}: {info.array_shape} in blocks of {info.block_dims}"


def test_a_passing_check_pays_milliseconds_for_it():
    puzzle = COURSE.find("tiled_transpose")
    file = puzzle.solution_path
    check_puzzle(puzzle, file, INTERPRET)  # warm: jax and the puzzle's shapes
    entry = getattr(load_learner_module(file), puzzle.entry)
    started = time.perf_counter()
    assert multiples.check(puzzle, entry, file, INTERPRET) is None
    assert time.perf_counter() - started < 0.5
