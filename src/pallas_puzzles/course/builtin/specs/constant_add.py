"""Puzzles 1 and 2: z = x + 10."""

import jax.numpy as jnp


def spec(x: jnp.ndarray) -> jnp.ndarray:
    return x + 10.0
