"""Puzzle 3: outer add.

Inside a kernel, a loaded block is an ordinary jax array, and jnp
broadcasting works as usual. ``x[None, :]`` is a row (shape ``(1, N0)``) and
``y[:, None]`` a column (shape ``(N1, 1)``); adding them gives an ``(N1, N0)``
table.

Index order matters: the output is indexed ``z[j, i]``, rows by ``y``'s index
``j`` and columns by ``x``'s index ``i``.

Task: with each array in a single block, write ``outer_add_kernel`` so that
``z[j, i] = x[i] + y[j]``.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float


def spec(x: Float[Array, "N0"], y: Float[Array, "N1"]) -> Float[Array, "N1 N0"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return x[None, :] + y[:, None]


def outer_add_kernel(x_ref, y_ref, z_ref):
    # x_ref holds all N0 values of x, y_ref all N1 values of y; z_ref is N1 x N0.
    z_ref[...] = x_ref[...][None, :] + y_ref[...][:, None]


def outer_add(x: Float[Array, "N0"], y: Float[Array, "N1"]) -> Float[Array, "N1 N0"]:
    return pl.pallas_call(
        outer_add_kernel,
        out_shape=jax.ShapeDtypeStruct((y.shape[0], x.shape[0]), x.dtype),
    )(x, y)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
