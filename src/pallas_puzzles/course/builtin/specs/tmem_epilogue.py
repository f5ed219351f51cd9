"""Blackwell chapter, fused epilogue: z = max(a @ b + bias, 0) for float16 a and b, in float32."""

import jax.numpy as jnp


def spec(a: jnp.ndarray, b: jnp.ndarray, bias: jnp.ndarray) -> jnp.ndarray:
    product = jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32), precision="highest")
    return jnp.maximum(product + bias[None, :], 0.0)
