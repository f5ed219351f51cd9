"""Puzzle 17: attention forward, softmax(q k^T / sqrt(D)) v."""

import math

import jax
import jax.numpy as jnp


def spec(q: jnp.ndarray, k: jnp.ndarray, v: jnp.ndarray) -> jnp.ndarray:
    q, k, v = (jnp.asarray(a, jnp.float32) for a in (q, k, v))
    scores = jnp.dot(q, k.T, precision="highest") / math.sqrt(q.shape[1])
    return jnp.dot(jax.nn.softmax(scores, axis=1), v, precision="highest")
