"""Puzzle 26: column sums of x, fetched chunk by chunk into two VMEM slots."""

import jax.numpy as jnp


def spec(x: jnp.ndarray) -> jnp.ndarray:
    return jnp.sum(x, axis=0, keepdims=True)
