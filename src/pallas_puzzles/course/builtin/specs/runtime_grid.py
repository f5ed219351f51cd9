"""Puzzle 48: column sums of the first `count` rows, a grid step per block of real rows."""

import jax.numpy as jnp
import numpy as np

BR = 8  # rows per block (the exercise's BR): counts are whole blocks


def spec(x: jnp.ndarray, count: jnp.ndarray) -> jnp.ndarray:
    rows = jnp.arange(x.shape[0])[:, None] < count[0]
    return jnp.sum(jnp.where(rows, x, 0.0), axis=0, keepdims=True)


def make_inputs(sizes: dict[str, int], rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """float32 rows and a count of real rows: whole blocks, at least one, fewer than all where there is room."""
    r, c = sizes["R"], sizes["C"]
    x = rng.uniform(-0.5, 0.5, size=(r, c))
    blocks = r // BR
    count = BR * int(rng.integers(1, blocks)) if blocks > 1 else BR
    return x.astype(np.float32), np.array([count], np.int32)
