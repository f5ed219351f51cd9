"""Puzzle 47: append to a KV cache in place: input_output_aliases.

A decoder keeps a cache of the keys (and values) of every token so far and appends a
few rows per step. Copying the whole cache to add 8 rows would move the cache through
HBM twice per step; the kernel should write only the new rows, *into the cache itself*.

A ``pallas_call`` normally gets a fresh HBM buffer for each output. With

    input_output_aliases={2: 0}

output 0 *is* input 2's buffer: what the kernel does not write keeps the input's
values, and what it writes changes them in place. (Under ``jax.jit`` with the cache
donated, ``donate_argnums``, no copy happens at all; without donation XLA first copies
the input so that the caller's array survives, and the kernel is still in place.) The
aliased output must have the input's shape and dtype. Forget the alias and the rows
the kernel never writes are whatever the fresh buffer held: garbage on a TPU.

Everything stays in HBM (``memory_space=pl.ANY``): the kernel copies the new rows
straight from their HBM buffer into the cache's, one DMA, with ``pltpu.sync_copy``; a
window of a ref is ``ref.at[pl.ds(start, size)]``. The position comes in SMEM, the
TPU's scalar memory, where a kernel reads single numbers (``pos_ref[0]``) to compute
addresses; it is a multiple of 8, so the rows land on whole (8, 128) tiles.

Task: return ``cache`` with rows ``[pos, pos + N)`` replaced by ``new`` (``cache`` of
shape ``(T, D)``, ``new`` of shape ``(N, D)``, ``pos`` an int32 array of shape ``(1,)``).
Write the kernel and the launcher's specs and alias.
"""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float, Int


def spec(cache: Float[Array, "T D"], new: Float[Array, "N D"], pos: Int[Array, "1"]) -> Float[Array, "T D"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return jax.lax.dynamic_update_slice(cache, new, (pos[0], 0))


def cache_append_kernel(pos_ref, new_hbm, cache_hbm, out_hbm):
    # pos_ref: (1,) in SMEM. new_hbm (N, D), cache_hbm and out_hbm (T, D): HBM, and out_hbm is
    # cache_hbm's buffer (aliased), so only the new rows need writing.
    del cache_hbm  # the same buffer as out_hbm
    # TODO: copy the new rows into out_hbm at row pos_ref[0].


def cache_append(cache: Float[Array, "T D"], new: Float[Array, "N D"], pos: Int[Array, "1"]) -> Float[Array, "T D"]:
    hbm = pl.BlockSpec(memory_space=pl.ANY)
    return pl.pallas_call(
        cache_append_kernel,
        out_shape=jax.ShapeDtypeStruct(cache.shape, cache.dtype),
        # TODO: pos in SMEM, new and cache left in HBM (hbm), and the output too.
        # TODO: the cache's buffer as the output (input_output_aliases).
    )(pos, new, cache)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
