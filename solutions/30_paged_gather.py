"""Puzzle 30: gather KV-cache pages by hand: many copies in flight at once.

Paged attention keeps a sequence's keys and values in fixed-size *pages*
scattered through one big pool in HBM, and a *page table* says which pool
page holds the sequence's page ``s``. Before a kernel can attend, it must
bring the sequence's pages together in VMEM, in order. A BlockSpec could
fetch one page per grid step, but a kernel that issues the copies itself can
do better: start *all* of them, so that the DMA engines work on every page
at once, and only then wait.

Three things from earlier puzzles meet here: the page table arrives by
scalar prefetch (puzzle 18) and is read in the kernel as ``table_ref[s]``;
the pool stays in HBM (``memory_space=pl.ANY``, puzzle 25); and each page
gets its own DMA semaphore from an array of them (puzzle 26):
``pltpu.SemaphoreType.DMA((S,))``. Use one loop that starts every copy and
a second loop that waits for every copy; each wait must describe the same
copy (source window, destination window, semaphore) as its start.

Task: ``z[s * P : (s + 1) * P, :] = pool[table[s]]`` for a pool of shape
``(NP, P, D)`` (NP pages of P rows) and a table of S page numbers. ``z``,
shape ``(S * P, D)``, is an ordinary VMEM output: the copies land in it
directly. Write the kernel.
"""

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float, Int


def spec(table: Int[Array, "S"], pool: Float[Array, "NP P D"]) -> Float[Array, "SP D"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return pool[table].reshape(-1, pool.shape[2])


def paged_gather_kernel(table_ref, pool_hbm, z_ref, sems):
    # table_ref: S page numbers (SMEM). pool_hbm: (NP, P, D) in HBM. z_ref: (S * P, D) in VMEM.
    pages = table_ref.shape[0]
    rows = pool_hbm.shape[1]

    def copy(s):
        return pltpu.make_async_copy(pool_hbm.at[table_ref[s]], z_ref.at[pl.ds(s * rows, rows)], sems.at[s])

    def start(s, carry):
        copy(s).start()
        return carry

    def wait(s, carry):
        copy(s).wait()
        return carry

    lax.fori_loop(0, pages, start, 0)
    lax.fori_loop(0, pages, wait, 0)


def paged_gather(table: Int[Array, "S"], pool: Float[Array, "NP P D"]) -> Float[Array, "SP D"]:
    s = table.shape[0]
    _, p, d = pool.shape
    return pl.pallas_call(
        paged_gather_kernel,
        out_shape=jax.ShapeDtypeStruct((s * p, d), pool.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
            scratch_shapes=[pltpu.SemaphoreType.DMA((s,))],
        ),
    )(table, pool)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
