"""Puzzle 23: z = x @ w, with a small w."""

import jax
import jax.numpy as jnp


def spec(x: jnp.ndarray, w: jnp.ndarray) -> jnp.ndarray:
    return jnp.dot(x, w, precision=jax.lax.Precision.HIGHEST)
