"""Mosaic GPU chapter, a flash-attention step: softmax(q k^T / sqrt(D)) v for one head, float16 inputs."""

import math

import jax
import jax.numpy as jnp


def spec(q: jnp.ndarray, k: jnp.ndarray, v: jnp.ndarray) -> jnp.ndarray:
    q32, k32, v32 = (jnp.asarray(a).astype(jnp.float32) for a in (q, k, v))
    scores = jnp.dot(q32, k32.T, precision="highest") / math.sqrt(q.shape[1])
    return jnp.dot(jax.nn.softmax(scores, axis=1), v32, precision="highest")
