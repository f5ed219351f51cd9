"""Puzzle 30: z = the table's pool pages, one after another."""

import jax.numpy as jnp
import numpy as np


def spec(table: jnp.ndarray, pool: jnp.ndarray) -> jnp.ndarray:
    return jnp.asarray(pool)[jnp.asarray(table)].reshape(-1, pool.shape[2])


def make_inputs(sizes: dict[str, int], rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """A page table that uses the last pool page and repeats one page; a float32 pool."""
    s, npages, p, d = sizes["S"], sizes["NP"], sizes["P"], sizes["D"]
    table = rng.integers(0, npages, size=s)
    table[0] = npages - 1
    if s > 2:
        table[-1] = table[1]
    pool = rng.uniform(-0.5, 0.5, size=(npages, p, d))
    return table.astype(np.int32), pool.astype(np.float32)
