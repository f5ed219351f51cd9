"""Puzzle 46: a SiLU gate, z = x * sigmoid(x) * y, through a pipeline the two cores share."""

import jax
import jax.numpy as jnp


def spec(x: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    return x * jax.nn.sigmoid(x) * y
