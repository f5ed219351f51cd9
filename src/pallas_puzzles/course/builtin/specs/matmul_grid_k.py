"""Puzzle 14: z = x @ y (K is a multiple of the K block in every case)."""

import jax
import jax.numpy as jnp


def spec(x: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    return jnp.dot(x, y, precision=jax.lax.Precision.HIGHEST)
