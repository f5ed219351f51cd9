"""Puzzle 20: z = x @ y for bf16 x and y, computed in float32."""

import jax.numpy as jnp


def spec(x: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    x32 = jnp.asarray(x).astype(jnp.float32)  # exact: every bf16 value is a float32 value
    y32 = jnp.asarray(y).astype(jnp.float32)
    return jnp.dot(x32, y32, precision="highest")
