"""Puzzle 25: z = 2x + 1, computed in VMEM between two hand-made copies."""

import jax.numpy as jnp


def spec(x: jnp.ndarray) -> jnp.ndarray:
    return 2.0 * x + 1.0
