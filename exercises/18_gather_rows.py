"""Puzzle 18: gather rows with scalar prefetch (data-dependent BlockSpecs).

So far every index_map was arithmetic on the program ids. Sometimes the
block a program needs depends on *data*: row ``indices[i]`` of a table, the
pages of a paged KV cache, the experts a token was routed to. Pallas on TPU
handles this with *scalar prefetch*: a few small integer arrays are copied
into the core's scalar memory (SMEM) before the grid starts, and every
index_map receives refs to them after the program ids. An index_map may
then read them: for a 2-D array, ``lambda i, idx_ref: (idx_ref[i], 0)``
means "program i gets the block whose row number is stored in indices[i]". Because the
pipeline knows the next block before the next program starts, the copy of
the looked-up row still overlaps with the work of the current one.

You ask for it with a grid spec instead of ``grid=``/``in_specs=``:

    pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, grid=..., in_specs=[...], out_specs=...)

and pass the prefetched arrays FIRST when you call the kernel. The kernel
receives them first too: ``kernel(idx_ref, table_ref, z_ref)``.

Blocks here are single rows. Mosaic TPU wants the last two dimensions of a
block to be multiples of (8, 128) or the whole array's, and one row of a
``(V, D)`` table is neither. So the launcher views the table as
``(V, 1, D)`` and the output as ``(N, 1, D)`` (a free reshape): a block
``(None, 1, D)`` is then one row whose last two dimensions match the
array's. ``None`` *squeezes* that dimension: the kernel's refs have shape
``(1, D)``, not ``(1, 1, D)``.

Task: ``z[i, :] = table[indices[i], :]`` for ``indices`` of length N (values
in ``[0, V)``) and a table of shape ``(V, D)``. One program per index. Fill
in the grid spec and the kernel.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float, Int


def spec(indices: Int[Array, "N"], table: Float[Array, "V D"]) -> Float[Array, "N D"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return table[indices, :]


def gather_rows_kernel(idx_ref, table_ref, z_ref):
    # idx_ref: all the indices (in SMEM); only the index_maps need them here.
    # table_ref: the one table row the index_map picked, shape (1, D).
    # TODO: copy the row into this program's output row.
    pass


def gather_rows(indices: Int[Array, "N"], table: Float[Array, "V D"]) -> Float[Array, "N D"]:
    n = indices.shape[0]
    v, d = table.shape
    rows = table.reshape(v, 1, d)  # one row per leading index: see the docstring
    z = pl.pallas_call(
        gather_rows_kernel,
        out_shape=jax.ShapeDtypeStruct((n, 1, d), table.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            # TODO: one program per index.
            grid=(1,),
            # TODO: program i should read table row indices[i].
            in_specs=[pl.BlockSpec((None, 1, d), lambda i, idx_ref: (0, 0, 0))],
            # TODO: program i should write output row i.
            out_specs=pl.BlockSpec((None, 1, d), lambda i, idx_ref: (0, 0, 0)),
        ),
    )(indices, rows)
    return z.reshape(n, d)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
