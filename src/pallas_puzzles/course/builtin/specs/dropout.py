"""Puzzle 49: dropout, each block of BR rows drawing from the seed's key folded with the block's index."""

import jax
import jax.numpy as jnp
import numpy as np

BR = 8  # rows per block (the exercise's BR)
KEEP = 0.75  # the probability that an element is kept (the exercise's KEEP)


def spec(x: jnp.ndarray, seed: jnp.ndarray) -> jnp.ndarray:
    key = jax.random.key(seed[0])
    blocks = [jax.random.bernoulli(jax.random.fold_in(key, i), KEEP, (BR, x.shape[1]))
              for i in range(x.shape[0] // BR)]
    return jnp.where(jnp.concatenate(blocks), x / KEEP, 0.0)


def make_inputs(sizes: dict[str, int], rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """float32 values and a seed that differs from case to case."""
    x = rng.uniform(-0.5, 0.5, size=(sizes["R"], sizes["C"]))
    return x.astype(np.float32), np.array([rng.integers(0, 2**31 - 1)], np.int32)
