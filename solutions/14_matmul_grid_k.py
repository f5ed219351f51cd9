"""Puzzle 14: matmul with K on the grid and a scratch accumulator.

In puzzle 11 each program looped over K itself. The Pallas TPU way is to put
K on the grid as well and let the pipeline do the loop: with
``grid=(M blocks, N blocks, K blocks)`` program ``(i, j, k)`` gets block
``(i, k)`` of ``x`` and block ``(k, j)`` of ``y``, while the pipeline fetches
the next pair of blocks in the background.

Every ``k`` for one ``(i, j)`` adds into the same output block, so three
things are new:

* **Order.** The grid runs in row-major order (last axis fastest), so with K
  as the *last* axis the programs for one output block run one after another.
  Tell the compiler so with ``dimension_semantics``: the first two axes are
  ``"parallel"`` (independent), the K axis is ``"arbitrary"`` (it must run in
  order on one core). The output index_map ignores ``k``, so the output block
  stays put, and is written back only when its index changes.
* **A scratch buffer.** ``scratch_shapes=[pltpu.VMEM((BM, BN), jnp.float32)]``
  gives the kernel one more ref after the outputs: a float32 block in VMEM
  (the TPU's on-chip memory) that keeps its contents from one grid step to
  the next. It is the running sum for the current output block.
* **``pl.when``.** ``@pl.when(cond)`` runs a small function only when ``cond``
  is true. Zero the accumulator when ``k == 0`` (scratch starts out as
  garbage: NaN in interpret mode), add one block product every step, and copy
  the sum to the output when ``k == pl.num_programs(2) - 1``.

M and N may be ragged: padding rows of ``x`` or padding columns of ``y`` only
produce output rows or columns that hang over the edge, and those writes are
dropped. K, however, is a multiple of BK in every case. A ragged last K block
would bring padding columns of ``x`` and padding rows of ``y`` into the
product, and every one of them would be added into *valid* outputs (NaN in
interpret mode, arbitrary garbage on hardware). You would have to mask both
blocks first; here you need not.

Task: write the grid, the BlockSpecs and the kernel for ``z = x @ y``.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float

BM = 64  # rows of x and z per block
BN = 128  # columns of y and z per block
BK = 128  # the shared dimension K per block (K is a multiple of BK)


def spec(x: Float[Array, "M K"], y: Float[Array, "K N"]) -> Float[Array, "M N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return x @ y


def matmul_grid_k_kernel(x_ref, y_ref, z_ref, acc_ref):
    # x_ref: (BM, BK), y_ref: (BK, BN), z_ref: (BM, BN); acc_ref: float32 (BM, BN) scratch.
    k = pl.program_id(2)

    @pl.when(k == 0)
    def _start():
        acc_ref[...] = jnp.zeros(acc_ref.shape, jnp.float32)

    acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)

    @pl.when(k == pl.num_programs(2) - 1)
    def _finish():
        z_ref[...] = acc_ref[...].astype(z_ref.dtype)


def matmul_grid_k(x: Float[Array, "M K"], y: Float[Array, "K N"]) -> Float[Array, "M N"]:
    m, kdim = x.shape
    n = y.shape[1]
    return pl.pallas_call(
        matmul_grid_k_kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        # Output blocks on the first two axes, the reduction over K last.
        grid=(pl.cdiv(m, BM), pl.cdiv(n, BN), kdim // BK),
        in_specs=[
            pl.BlockSpec((BM, BK), lambda i, j, k: (i, k)),
            pl.BlockSpec((BK, BN), lambda i, j, k: (k, j)),
        ],
        out_specs=pl.BlockSpec((BM, BN), lambda i, j, k: (i, j)),
        scratch_shapes=[pltpu.VMEM((BM, BN), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "arbitrary")
        ),
    )(x, y)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
