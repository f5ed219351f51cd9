"""Mosaic GPU chapter, a grid of blocks: z = relu(x) + 1 over rows that do not fill the last block."""

import jax.numpy as jnp


def spec(x: jnp.ndarray) -> jnp.ndarray:
    return jnp.maximum(x, 0.0) + 1.0
