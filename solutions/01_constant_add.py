"""Puzzle 1: constant add.

A Pallas kernel never sees whole arrays. It receives *refs*: handles to a block
of memory that the kernel reads with ``ref[...]`` and writes with
``ref[...] = value``. ``pl.pallas_call`` allocates the output for you and
passes it to the kernel as the last ref, so a kernel returns nothing: it
writes its answer into the output ref.

Here the whole vector is one block, so the kernel's refs hold all of ``x``
and all of ``z``.

Task: write ``constant_add_kernel`` so that ``z = x + 10``.

Check it: save the file while ``pallas-puzzles watch`` runs, or run
``pallas-puzzles verify 1`` (or ``python`` on this file).
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float


def spec(x: Float[Array, "N"]) -> Float[Array, "N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return x + 10.0


def constant_add_kernel(x_ref, z_ref):
    # x_ref and z_ref each hold one block: here, the whole vector.
    z_ref[...] = x_ref[...] + 10.0


def constant_add(x: Float[Array, "N"]) -> Float[Array, "N"]:
    """The launcher: one program, one block covering the whole array."""
    return pl.pallas_call(
        constant_add_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
