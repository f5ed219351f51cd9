"""On puzzles whose only hardware is a TPU, `verify` applies Mosaic's block rules (issue 18, class 4).

The rules live in engine/targets/pallas_call/intercept/tpu_blocks.py; these tests hold them to Mosaic's own
lowering (run on this machine's CPU), and check that `verify` and `lower` agree on the
wrong kernels of the course's mistakes.toml that break them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import COURSE, MISTAKES, build_mistake

from pallas_puzzles.backends import INTERPRET, Mode
from pallas_puzzles.engine.checker import check_puzzle
from pallas_puzzles.engine.targets.pallas_call.intercept.records import BlockInfo
from pallas_puzzles.engine.targets.pallas_call.intercept.tpu_blocks import problem
from pallas_puzzles.findings import FindingKind

# (array shape, block shape, dtype): a spread of legal and illegal blocks of rank 1 to 3.
BLOCKS = [
    ((16, 256), (8, 128), "float32"),
    ((16, 256), (4, 128), "float32"),
    ((16, 256), (8, 100), "float32"),
    ((13, 100), (13, 100), "float32"),
    ((24, 384), (24, 128), "float32"),
    ((4, 16, 256), (None, 8, 128), "float32"),
    ((4, 16, 256), (None, 12, 256), "float32"),
    ((1000,), (100,), "float32"),
    ((1000,), (1000,), "float32"),
    ((4096,), (1024,), "float32"),
    ((4096,), (128,), "float32"),
    ((4096,), (128,), "bfloat16"),
    ((4096,), (256,), "bfloat16"),
    ((3000,), (1536,), "float32"),
]


def _mosaic_refuses(array: tuple[int, ...], block: tuple[int | None, ...], dtype: str) -> bool:
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    from pallas_puzzles.engine.targets.pallas_call.explain.lowering import target_tpu

    grid = tuple(-(-a // (b or 1)) for a, b in zip(array, block))

    def index_map(*ids: object) -> tuple[object, ...]:
        return ids

    def kernel(x_ref: object, z_ref: object) -> None:
        z_ref[...] = x_ref[...]  # type: ignore[index]

    def launcher(x: jax.Array) -> jax.Array:
        spec = pl.BlockSpec(block, index_map)
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=grid,
                              in_specs=[spec], out_specs=spec)(x)

    try:
        with target_tpu():
            jax.jit(launcher).trace(jax.ShapeDtypeStruct(array, jnp.dtype(dtype))).lower(lowering_platforms=("tpu",))
    except ValueError as exc:
        assert "block shape" in str(exc) or "block" in str(exc), exc
        return True
    return False


@pytest.mark.parametrize(("array", "block", "dtype"), BLOCKS, ids=[f"{a}-{b}-{d}" for a, b, d in BLOCKS])
def test_the_rule_agrees_with_mosaic(array, block, dtype):
    dims = [1 if b is None else b for b in block]
    info = BlockInfo(name="x_ref", role="input", array_shape=array, block_shape=block, index_map=None,
                     index_map_line=None, block_dims=dims, dtype=dtype)
    assert (problem(info) is not None) == _mosaic_refuses(array, block, dtype)


def _mosaic_refuses_buffering(count: int, lookahead: bool) -> bool:
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    from pallas_puzzles.engine.targets.pallas_call.explain.lowering import target_tpu

    def kernel(x_ref: object, z_ref: object) -> None:
        z_ref[...] = x_ref[...]  # type: ignore[index]

    def launcher(x: jax.Array) -> jax.Array:
        mode = pl.Buffered(count, use_lookahead=lookahead)
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(4,),
                              in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0), pipeline_mode=mode)],
                              out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x)

    try:
        with target_tpu():
            jax.jit(launcher).trace(jax.ShapeDtypeStruct((32, 128), jnp.float32)).lower(lowering_platforms=("tpu",))
    except Exception as exc:  # Mosaic's LoweringException, or NotImplementedError for a lookahead
        assert "buffering" in str(exc) or "Lookahead" in str(exc), exc
        return True
    return False


@pytest.mark.parametrize(("count", "lookahead"), [(1, False), (2, False), (3, False), (2, True)])
def test_the_buffer_count_rule_agrees_with_mosaic(count, lookahead):
    """A pallas_call's pipeline takes pl.Buffered(1) or (2) and no lookahead; the interpreter runs any."""
    from jax.experimental import pallas as pl

    info = BlockInfo(name="x_ref", role="input", array_shape=(32, 128), block_shape=(8, 128), index_map=None,
                     index_map_line=None, block_dims=[8, 128], dtype="float32",
                     pipeline_mode=pl.Buffered(count, use_lookahead=lookahead))
    assert (problem(info) is not None) == _mosaic_refuses_buffering(count, lookahead)


TPU_RULE_MISTAKES = [m for m in MISTAKES if m.kind == "tpu-lowering"]


@pytest.mark.parametrize("mistake", TPU_RULE_MISTAKES, ids=[m.name for m in TPU_RULE_MISTAKES])
def test_verify_and_lower_agree(mistake, tmp_path: Path):
    puzzle = COURSE.find(mistake.puzzle)
    assert puzzle.tpu_only
    path = build_mistake(mistake, tmp_path)
    lowered = check_puzzle(puzzle, path, INTERPRET, Mode.LOWER)
    assert not lowered.passed and lowered.kind is FindingKind.TPU_LOWERING


def test_puzzles_that_also_run_on_a_gpu_keep_their_freedom(tmp_path: Path):
    """Block rules are the TPU's: where a GPU may run the puzzle, the interpreter does not apply them."""
    puzzle = COURSE.find("constant_add_blocked")
    assert not puzzle.tpu_only
    source = (tmp_path / "solution.py")
    source.write_text(puzzle.solution_path.read_text()
                      .replace("B = 128  #", "B = 100  #"))
    assert check_puzzle(puzzle, source, INTERPRET).passed
