"""Puzzle 49: dropout, each block of BR rows drawing from the given key folded with the block's index."""

import jax
import jax.numpy as jnp
import numpy as np

BR = 8  # rows per block (the exercise's BR)
KEEP = 0.75  # the probability that an element is kept (the exercise's KEEP)


def spec(x: jnp.ndarray, key: jnp.ndarray) -> jnp.ndarray:
    k = jax.random.wrap_key_data(key, impl="threefry2x32")
    blocks = [jax.random.bernoulli(jax.random.fold_in(k, i), KEEP, (BR, x.shape[1]))
              for i in range(x.shape[0] // BR)]
    return jnp.where(jnp.concatenate(blocks), x / KEEP, 0.0)


def make_inputs(sizes: dict[str, int], rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """float32 values and a key that differs from case to case: any two uint32 words are a threefry key's data."""
    x = rng.uniform(-0.5, 0.5, size=(sizes["R"], sizes["C"]))
    return x.astype(np.float32), rng.integers(0, 2**32, size=2, dtype=np.uint32)
