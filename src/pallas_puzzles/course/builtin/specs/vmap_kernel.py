"""Puzzle 19: a gated unit, z = x * sigmoid(y), over a batch of examples."""

import jax
import jax.numpy as jnp


def spec(x: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    return jnp.asarray(x) * jax.nn.sigmoid(jnp.asarray(y))
