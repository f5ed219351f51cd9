"""Puzzle 11: z[b] = x[b] @ y[b]."""

import jax.numpy as jnp


def spec(x: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    return jnp.matmul(x, y, precision="highest")
