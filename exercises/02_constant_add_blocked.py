"""Puzzle 2: constant add, one block at a time.

Real arrays are larger than one block. ``pallas_call`` runs the kernel once
per point of a *grid*; ``pl.program_id(0)`` tells a running program which
grid point it is. A ``pl.BlockSpec(block_shape, index_map)`` says which block
of an array each program sees: ``index_map`` takes the program ids and
returns a *block index* (block number), not an element offset. Program ``i``
with ``pl.BlockSpec((B,), lambda i: (i,))`` sees elements ``i*B .. i*B+B-1``.

The sizes here are not multiples of the block, so the last block hangs over
the end of the array. Pallas still hands the kernel a full block: what it
reads past the end is garbage (NaN in interpret mode), and what it writes
there is dropped. For an elementwise kernel that is harmless.

Task: ``z = x + 10`` for a vector of any length N, in blocks of B = 128.
Fill in the grid, the two BlockSpecs and the kernel.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

B = 128  # elements per block (TPUs want 1-D blocks of at least 128)


def spec(x: Float[Array, "N"]) -> Float[Array, "N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return x + 10.0


def constant_add_blocked_kernel(x_ref, z_ref):
    # Each program sees one block of B elements of x and of z.
    # TODO: write x + 10 into this program's block of z.
    pass


def constant_add_blocked(x: Float[Array, "N"]) -> Float[Array, "N"]:
    n = x.shape[0]
    return pl.pallas_call(
        constant_add_blocked_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        # TODO: how many programs cover n elements in blocks of B? (n is not a multiple of B)
        grid=(1,),
        # TODO: program i should see block i of x and of z.
        in_specs=[pl.BlockSpec((B,), lambda i: (0,))],
        out_specs=pl.BlockSpec((B,), lambda i: (0,)),
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
