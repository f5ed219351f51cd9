"""Puzzle 10: z[b, i, j] = sum_{a, c} k[a, c] * x[b, i + a, j + c], zero past the bottom/right edge."""

import jax.numpy as jnp


def spec(x: jnp.ndarray, k: jnp.ndarray) -> jnp.ndarray:
    nb, h, w = x.shape
    kh, kw = k.shape
    xp = jnp.pad(x, ((0, 0), (0, kh - 1), (0, kw - 1)))
    z = jnp.zeros(x.shape, x.dtype)
    for a in range(kh):
        for c in range(kw):
            z = z + k[a, c] * xp[:, a:a + h, c:c + w]
    return z
