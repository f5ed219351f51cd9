"""Puzzle 28: column sums, half of the rows on each of two cores."""

import jax.numpy as jnp


def spec(x: jnp.ndarray) -> jnp.ndarray:
    return jnp.sum(x, axis=0, keepdims=True)
