"""Puzzle 0: a guided tour of Pallas (already solved: read it, run it, poke it).

Read this file from top to bottom. Every idea the later puzzles use is shown
once here on a kernel that already works: ``z = 2 * x`` over a vector whose
length is not a multiple of the block size. Then run

    pallas-puzzles verify 0

and read what the kernel printed. After that, change things and verify again:
make ``B`` 16, print something else, break the index_map on purpose (try
``lambda i: (i + 1,)``) and see how the checker explains it. When you are
done, move on to puzzle 1.

The pieces, in the order the code below uses them:

* A *kernel* is a Python function that Pallas traces once and runs once per
  grid point. It receives *refs*, not arrays: a ref is a handle to a buffer
  in fast on-chip memory. You read a ref with ``x_ref[...]`` (the whole
  buffer, as an array) or ``x_ref[pl.ds(start, size)]`` (a slice), and you
  write with ``z_ref[...] = value``. The kernel returns nothing; its results
  are whatever it wrote into the output refs.
* The *grid* is how many times the kernel runs: ``grid=(3,)`` runs three
  programs. Inside, ``pl.program_id(0)`` is the running program's position
  along grid axis 0 (here 0, 1 or 2).
* A ``pl.BlockSpec(block_shape, index_map)`` tells Pallas which piece of an
  array each program gets in its ref. ``index_map`` takes the program ids
  and returns a block number per dimension (not an element offset): with a
  block of 8, block ``i`` is elements ``8*i .. 8*i + 7``. Pallas copies that
  block into the ref before the program runs and copies output blocks back
  afterwards; the kernel never sees the whole array.
* When the length is not a multiple of the block, the last block hangs over
  the end. The kernel still gets a full block. Whatever lies past the end is
  garbage: the CPU checker fills it with NaN in the first shape case and, in
  the others, with a huge value (1e6 or -1e6) or with stale numbers of an
  ordinary size, as a real chip leaves whatever was in memory. Writes past the end are
  dropped. An elementwise kernel does not care; a kernel that sums a block
  must mask the padding first (puzzle 7).
* ``pl.debug_print("text", value, ...)`` works inside a kernel and prints
  once per program the text, then the values that program sees. Keep the
  text free of ``{}`` placeholders and pass scalars: that one form works in
  the interpreter, on a TPU and on a GPU (Triton refuses placeholders, and a
  TPU prints a whole array only after a trailing ``{}``), so a block is
  printed element by element, as ``x_ref[j]``. (A GPU prints from every
  thread of a program, so there each line comes many times over.)
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float

B = 8  # elements per block: small, so the printed blocks stay readable


def spec(x: Float[Array, "N"]) -> Float[Array, "N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return 2.0 * x


def tour_kernel(x_ref, z_ref):
    # x_ref and z_ref are refs to this program's block of B elements.
    i = pl.program_id(0)  # which block this program owns
    x = x_ref[...]  # read the whole block: an array of shape (B,)
    # Printed once per program: the text, then the values. In the last program
    # the entries past the end of x show up as nan (in later shape cases: 1e6,
    # -1e6 or stale numbers): that is the padding of the overhanging block.
    pl.debug_print("program, its first and last element:", i, i * B, i * B + B - 1)
    pl.debug_print("  x block =", *(x_ref[j] for j in range(B)))  # its B values, one by one
    # Writing the whole block is fine even where it overhangs: Pallas drops
    # the part past the end of z when it copies the block back.
    z_ref[...] = 2.0 * x


def tour(x: Float[Array, "N"]) -> Float[Array, "N"]:
    n = x.shape[0]
    return pl.pallas_call(
        tour_kernel,
        # The shape and dtype of the result: Pallas allocates it for us.
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        # One program per block; pl.cdiv rounds up so the ragged end gets one too.
        grid=(pl.cdiv(n, B),),
        # Program i reads block i of x and writes block i of z.
        in_specs=[pl.BlockSpec((B,), lambda i: (i,))],
        out_specs=pl.BlockSpec((B,), lambda i: (i,)),
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
