"""Puzzle 49: dropout with random numbers drawn inside the kernel.

Dropout keeps each element with probability KEEP, scaled by ``1 / KEEP``, and zeroes
the rest. Drawing the random numbers inside the kernel saves reading a mask as large
as ``x`` from HBM: only a key comes in.

Which random numbers. The TPU has a hardware generator (``pltpu.prng_seed`` and
``pltpu.prng_random_bits``): fast, but its numbers differ between TPU generations and
nothing on a CPU reproduces them. JAX's PRNG guide recommends the portable way for
numbers you can check: ``jax.random`` inside the kernel, with a ``threefry2x32`` key,
gives bit for bit what the same calls give outside it, on any chip. A key travels as
its data, two uint32 words (what ``jax.random.key_data(key)`` gives), into SMEM, and
the kernel wraps them back into a key:

    key = jax.random.wrap_key_data(jnp.stack([kd_ref[0], kd_ref[1]]), impl="threefry2x32")

Every block needs its own numbers. Draw with the same key in every block and every
block drops the same elements; fold the block's index into the key first:
``key = jax.random.fold_in(key, pl.program_id(0))``. (For the hardware generator the
same trap reads: seed it once per block with the block's index, not with one value.)

The check compares your output with these exact numbers and also with what holds on
any hardware: blocks drop different elements, another key gives another output, and
about KEEP of the elements survive.

Task: for ``x`` of shape ``(R, C)`` (R a multiple of ``BR = 8``) and ``key`` the data
of a threefry2x32 key (uint32, shape ``(2,)``, as ``jax.random.key_data`` gives it):
with ``k = jax.random.wrap_key_data(key)``, block i of BR rows keeps the elements
where ``jax.random.bernoulli(jax.random.fold_in(k, i), KEEP, (BR, C))`` is true, as
``x / KEEP``, and is 0 elsewhere. The launcher is written: the kernel is yours.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float, UInt32

BR = 8  # rows per block: one grid step each
KEEP = 0.75  # the probability that an element is kept


def spec(x: Float[Array, "R C"], key: UInt32[Array, "2"]) -> Float[Array, "R C"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    k = jax.random.wrap_key_data(key, impl="threefry2x32")
    blocks = [jax.random.bernoulli(jax.random.fold_in(k, i), KEEP, (BR, x.shape[1]))
              for i in range(x.shape[0] // BR)]
    return jnp.where(jnp.concatenate(blocks), x / KEEP, 0.0)


def dropout_kernel(kd_ref, x_ref, z_ref):
    # kd_ref: (2,) uint32 in SMEM, the key's data. x_ref, z_ref: (BR, C) blocks in VMEM.
    # TODO: the key from its data, made this block's own with its index.
    # TODO: keep each element with probability KEEP (scaled by 1 / KEEP), else 0.
    pass


def dropout(x: Float[Array, "R C"], key: UInt32[Array, "2"]) -> Float[Array, "R C"]:
    r, c = x.shape
    block = pl.BlockSpec((BR, c), lambda i: (i, 0))
    return pl.pallas_call(
        dropout_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(r // BR,),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), block],  # the key's data in SMEM, x in blocks
        out_specs=block,
    )(key, x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
