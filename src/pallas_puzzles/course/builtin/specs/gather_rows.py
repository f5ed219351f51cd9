"""Puzzle 18: z[i, :] = table[indices[i], :]."""

import jax.numpy as jnp
import numpy as np


def spec(indices: jnp.ndarray, table: jnp.ndarray) -> jnp.ndarray:
    return jnp.asarray(table)[jnp.asarray(indices), :]


def make_inputs(sizes: dict[str, int], rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Indices in [0, V) that always include the last row and a repeat; a float32 table."""
    n, v, d = sizes["N"], sizes["V"], sizes["D"]
    indices = rng.integers(0, v, size=n)
    indices[0] = v - 1  # the last table row: an off-by-one index_map steps past the table
    if n > 2:
        indices[-1] = indices[1]  # the same row twice
    table = rng.uniform(-0.5, 0.5, size=(v, d))
    return indices.astype(np.int32), table.astype(np.float32)
