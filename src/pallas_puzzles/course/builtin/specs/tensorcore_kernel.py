"""Puzzle 44: z = x * x + 1, half of the rows on each TensorCore."""

import jax.numpy as jnp


def spec(x: jnp.ndarray) -> jnp.ndarray:
    return x * x + 1.0
