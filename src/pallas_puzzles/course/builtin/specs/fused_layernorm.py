"""Puzzle 15: layer norm over the rows of x, eps = 1e-5."""

import jax.numpy as jnp

EPS = 1e-5


def spec(x: jnp.ndarray, gamma: jnp.ndarray, beta: jnp.ndarray) -> jnp.ndarray:
    mean = jnp.mean(x, axis=1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + EPS) * gamma[None, :] + beta[None, :]
