"""Puzzle 29: a grouped (ragged) matmul driven by a table in SMEM.

In a mixture-of-experts layer every token is sent to one expert, and every
expert has its own weight matrix. Sort the tokens by expert and the work is
a *grouped* matmul: rows ``[start_g, end_g)`` of ``x`` are multiplied by
weight ``w[g]``. The groups have different sizes (ragged), and some may be
empty.

With scalar prefetch (puzzle 18) that becomes a data-dependent BlockSpec.
Here the groups are padded to whole tiles of ``TM = 8`` rows, and
``tile_group[t]`` says which expert tile ``t`` belongs to. Program ``(j, t)``
multiplies row tile ``t`` of ``x`` by column block ``j`` of
``w[tile_group[t]]``: the weight's index_map *reads the table*, so the
pipeline fetches the right expert's weights before the program starts.
The pipeline copies a block only when its index changes from one step to
the next, so with the tiles on the inner (last) grid axis, consecutive
tiles of one expert reuse its weight block without copying it again.

Task: ``z[r, :] = x[r, :] @ w[tile_group[r // TM]]`` for ``x`` of shape
``(M, K)`` (M a multiple of TM), ``w`` of shape ``(G, K, N)`` and
``tile_group`` of length ``M // TM`` (sorted, values in ``[0, G)``). Write the
grid spec (``pltpu.PrefetchScalarGridSpec``) and the kernel.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float, Int

TM = 8  # rows per tile; every tile belongs to one group
BN = 128  # columns of w and z per block


def spec(tile_group: Int[Array, "T"], x: Float[Array, "M K"], w: Float[Array, "G K N"]) -> Float[Array, "M N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    row_group = jnp.repeat(tile_group, TM)
    return jnp.einsum("mk,mkn->mn", x, w[row_group])


def grouped_matmul_kernel(group_ref, x_ref, w_ref, z_ref):
    # group_ref: the whole table (SMEM). x_ref: (TM, K). w_ref: (K, BN) of this tile's expert. z_ref: (TM, BN).
    # TODO: this tile's product with its expert's weights.
    pass


def grouped_matmul(tile_group: Int[Array, "T"], x: Float[Array, "M K"], w: Float[Array, "G K N"]) -> Float[Array, "M N"]:
    m, k = x.shape
    n = w.shape[2]
    return pl.pallas_call(
        grouped_matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            # TODO: one program per (column block j, row tile t), the tiles on the inner axis.
            grid=(1, 1),
            in_specs=[
                # TODO: row tile t of x.
                pl.BlockSpec((TM, k), lambda j, t, groups: (0, 0)),
                # TODO: column block j of the weights of tile t's expert (look it up in groups).
                pl.BlockSpec((None, k, BN), lambda j, t, groups: (0, 0, 0)),
            ],
            # TODO: block (t, j) of z.
            out_specs=pl.BlockSpec((TM, BN), lambda j, t, groups: (0, 0)),
        ),
    )(tile_group, x, w)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
