"""Blackwell chapter, two blocks sharing a by multicast: z = a @ b for float16 a and b, accumulated in float32."""

import jax.numpy as jnp


def spec(a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    # Products of float16 values are exact in float32; only the order of the additions differs.
    return jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32), precision="highest")
