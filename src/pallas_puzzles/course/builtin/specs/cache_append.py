"""Puzzle 47: the cache with rows [pos, pos + N) replaced by the new rows."""

import jax
import jax.numpy as jnp
import numpy as np


def spec(cache: jnp.ndarray, new: jnp.ndarray, pos: jnp.ndarray) -> jnp.ndarray:
    return jax.lax.dynamic_update_slice(cache, new, (pos[0], 0))


def make_inputs(sizes: dict[str, int], rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """A float32 cache and new rows, and a position on a whole tile of 8 rows with room for them."""
    t, n, d = sizes["T"], sizes["N"], sizes["D"]
    cache = rng.uniform(-0.5, 0.5, size=(t, d))
    new = rng.uniform(-0.5, 0.5, size=(n, d))
    pos = 8 * rng.integers(0, (t - n) // 8 + 1)
    return cache.astype(np.float32), new.astype(np.float32), np.array([pos], np.int32)
