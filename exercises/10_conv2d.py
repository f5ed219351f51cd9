"""Puzzle 10: a batched 2-D convolution over zero-padded images.

A 2-D convolution slides a small kernel ``k`` of ``KH x KW`` weights over an
image. Output pixel ``(i, j)`` is the weighted sum of the ``KH x KW`` window
whose top-left corner is pixel ``(i, j)``:

    z[b, i, j] = sum over a < KH, c < KW of  k[a, c] * x[b, i + a, j + c]

(Deep-learning libraries call this a convolution; strictly it is a
correlation, since the kernel is not flipped.) Windows near the bottom and
right edges reach past the image; there the image counts as 0, so ``z`` has
the same shape as ``x``.

Two ideas make this easy in Pallas:

* Zero-pad in the launcher. ``jnp.pad`` runs before ``pallas_call`` and adds
  ``KH - 1`` rows of zeros at the bottom and ``KW - 1`` columns at the right,
  so every window lies inside the padded image and no masking is needed.
* Turn the sum around. Instead of one window per output pixel, loop over the
  ``KH * KW`` kernel positions: for position ``(a, c)``, the pixels
  ``x[i + a, j + c]`` for ALL outputs ``(i, j)`` form one ``H x W`` slice of
  the padded image starting at row ``a``, column ``c``. Read it with
  ``x_ref[pl.ds(a, H), pl.ds(c, W)]``, multiply by ``k[a, c]`` and add.
  ``KH`` and ``KW`` are Python ints, so a Python ``for`` loop here is
  unrolled while the kernel is traced.

A ``None`` in a block shape means "one element along this dimension, and
drop the dimension": with ``pl.BlockSpec((None, HP, WP), lambda b: (b, 0, 0))``
program ``b`` sees image ``b`` as a 2-D ``(HP, WP)`` ref.

Task: one program per image. Write the padding, the grid, the BlockSpecs and
the kernel so that ``z = conv2d(x, k)`` for ``x[Nb, H, W]`` and
``k[KH, KW]``. Take every size from the shapes.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float


def spec(x: Float[Array, "Nb H W"], k: Float[Array, "KH KW"]) -> Float[Array, "Nb H W"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    nb, h, w = x.shape
    kh, kw = k.shape
    xp = jnp.pad(x, ((0, 0), (0, kh - 1), (0, kw - 1)))
    z = jnp.zeros(x.shape, x.dtype)
    for a in range(kh):
        for c in range(kw):
            z = z + k[a, c] * xp[:, a:a + h, c:c + w]
    return z


def conv2d_kernel(x_ref, k_ref, z_ref):
    # x_ref: one zero-padded image (H + KH - 1, W + KW - 1); k_ref: (KH, KW); z_ref: (H, W).
    # TODO: for every kernel position (a, c), add k[a, c] times the H x W slice of the
    # padded image that starts at row a, column c. Take H, W, KH, KW from the ref shapes.
    pass


def conv2d(x: Float[Array, "Nb H W"], k: Float[Array, "KH KW"]) -> Float[Array, "Nb H W"]:
    nb, h, w = x.shape
    kh, kw = k.shape
    xp = x  # TODO: zero-pad KH - 1 rows at the bottom and KW - 1 columns at the right.
    return pl.pallas_call(
        conv2d_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        # TODO: one program per image.
        grid=(1,),
        in_specs=[
            pl.BlockSpec((None, h, w), lambda b: (0, 0, 0)),  # TODO: program b's whole padded image
            pl.BlockSpec((kh, kw), lambda b: (0, 0)),  # TODO: is this right for k?
        ],
        out_specs=pl.BlockSpec((None, h, w), lambda b: (0, 0, 0)),  # TODO: which output image?
    )(xp, k)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
