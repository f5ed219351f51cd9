"""Puzzle 12: a matmul with 4-bit quantized weights.

To save memory, a quantized network stores each weight in 4 bits. A 4-bit
value (a *nibble*) is an integer 0..15, and eight of them are packed into one
int32 word, low nibble first: nibble ``p`` of a word is its bits
``4p .. 4p + 3``, so weight ``m`` of a row is nibble ``m % 8`` of word
``m // 8``. Read nibble ``p`` with ``(word >> (4 * p)) & 0xF``.

Mind the sign: when nibble 7 is 8 or more, bit 31 is set and the int32 word
is negative. ``>>`` on int32 is an *arithmetic* shift (it copies the sign bit
in from the left), but ``& 0xF`` keeps only the low four bits afterwards, so
every nibble still comes out in 0..15. Nibbles are unsigned: do not turn
8..15 into negative numbers.

The weights of a row come in *groups* of ``GROUP`` consecutive weights. Each
group has one float *scale* and one 4-bit *offset*; the offsets are packed
eight per int32 word in the same way. A weight's real value is

    scale[r, g] * (weight nibble - offset nibble of group g),  g = m // GROUP

and the output is the dequantised weight matrix times the float activation:

    z[r, n] = sum over m of  dequantised[r, m] * activation[m, n]

Shapes, with ``MID`` a multiple of ``8 * GROUP``:

* ``weight``     int32 ``(N0, MID // 8)``
* ``scale``      float32 ``(N0, MID // GROUP)``
* ``offset``     int32 ``(N0, MID // GROUP // 8)``
* ``activation`` float32 ``(MID, N1)``, and ``z`` is ``(N0, N1)``.

Vectorise the unpacking: ``words[:, :, None] >> shifts`` with ``shifts`` of
shape ``(1, 1, 8)`` holding ``0, 4, ..., 28`` gives every nibble at once, and
a reshape to ``(R, 8 * C)`` puts them in weight order. To match weights with
their groups, view the ``(B0, MID)`` weights as ``(B0, groups, GROUP)``: the
per-group scale and offset then broadcast as ``[:, :, None]``.

The launcher is given: program ``(i, j)`` gets ``B0`` whole rows of weight,
scale and offset and ``B1`` columns of the activation. Task: write ``unpack``
and the kernel.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jaxtyping import Array, Float, Int

B0 = 32  # rows of z per program
B1 = 32  # columns of z per program
GROUP = 16  # consecutive weights sharing one scale and one offset


def spec(
    scale: Float[Array, "N0 G"],
    offset: Int[Array, "N0 OW"],
    weight: Int[Array, "N0 WW"],
    activation: Float[Array, "MID N1"],
) -> Float[Array, "N0 N1"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    def nibbles(words):
        shifts = 4 * jnp.arange(8)
        return ((words[:, :, None] >> shifts) & 0xF).reshape(words.shape[0], -1)

    w = nibbles(weight)
    o = jnp.repeat(nibbles(offset), GROUP, axis=1)
    s = jnp.repeat(scale, GROUP, axis=1)
    return (s * (w - o)) @ activation


def unpack(words):
    """(R, C) int32 words -> (R, 8 * C) int32 nibbles in 0..15, low nibble first."""
    r, c = words.shape
    shifts = 4 * jax.lax.broadcasted_iota(jnp.int32, (1, 1, 8), 2)  # 0, 4, ..., 28
    nibbles = (words[:, :, None] >> shifts) & 0xF  # (R, C, 8): nibble p of word c
    return nibbles.reshape(r, 8 * c)


def quantized_matmul_kernel(scale_ref, offset_ref, weight_ref, activation_ref, z_ref):
    # scale_ref (B0, G), offset_ref (B0, G // 8), weight_ref (B0, MID // 8): B0 rows;
    # activation_ref (MID, B1); z_ref (B0, B1).
    b0, groups = scale_ref.shape
    weight = unpack(weight_ref[...]).astype(jnp.float32).reshape(b0, groups, GROUP)
    offset = unpack(offset_ref[...]).astype(jnp.float32)  # (B0, G)
    scale = scale_ref[...]
    dequantised = scale[:, :, None] * (weight - offset[:, :, None])
    z_ref[...] = jnp.dot(
        dequantised.reshape(b0, groups * GROUP), activation_ref[...], preferred_element_type=jnp.float32
    )


def quantized_matmul(
    scale: Float[Array, "N0 G"],
    offset: Int[Array, "N0 OW"],
    weight: Int[Array, "N0 WW"],
    activation: Float[Array, "MID N1"],
) -> Float[Array, "N0 N1"]:
    n0, groups = scale.shape
    mid, n1 = activation.shape
    rows = lambda i, j: (i, 0)  # noqa: E731 - B0 whole rows of weight, scale and offset
    return pl.pallas_call(
        quantized_matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((n0, n1), activation.dtype),
        grid=(pl.cdiv(n0, B0), pl.cdiv(n1, B1)),
        in_specs=[
            pl.BlockSpec((B0, groups), rows),
            pl.BlockSpec((B0, offset.shape[1]), rows),
            pl.BlockSpec((B0, weight.shape[1]), rows),
            pl.BlockSpec((mid, B1), lambda i, j: (0, j)),
        ],
        out_specs=pl.BlockSpec((B0, B1), lambda i, j: (i, j)),
    )(scale, offset, weight, activation)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
