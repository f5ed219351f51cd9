"""Puzzle 27: z = x * y + x through an inner pipeline (pltpu.emit_pipeline)."""

import jax.numpy as jnp


def spec(x: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    return x * y + x
