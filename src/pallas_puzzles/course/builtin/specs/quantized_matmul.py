"""Puzzle 12: 4-bit quantized weight times float activation.

Layout (MID a multiple of 8 * GROUP):
  weight     int32   (N0, MID // 8)          eight 4-bit weights per word, low nibble first
  scale      float32 (N0, MID // GROUP)      one scale per group of GROUP weights in a row
  offset     int32   (N0, MID // GROUP // 8) one 4-bit offset per group, packed like weight
  activation float32 (MID, N1)
  z[r, n] = sum_m scale[r, m // GROUP] * (w[r, m] - o[r, m // GROUP]) * activation[m, n]
"""

import jax.numpy as jnp
import numpy as np

GROUP = 16  # weights per group: one scale and one offset each


def unpack(words: jnp.ndarray) -> jnp.ndarray:
    """(R, C) int32 -> (R, 8 * C) values in 0..15, low nibble first."""
    shifts = 4 * jnp.arange(8, dtype=jnp.int32)
    nibbles = (words[:, :, None] >> shifts) & 0xF  # arithmetic shift, then mask: right for negative words
    return nibbles.reshape(words.shape[0], -1)


def spec(scale: jnp.ndarray, offset: jnp.ndarray, weight: jnp.ndarray, activation: jnp.ndarray) -> jnp.ndarray:
    w = unpack(weight).astype(jnp.float32)
    o = jnp.repeat(unpack(offset), GROUP, axis=1).astype(jnp.float32)
    s = jnp.repeat(scale, GROUP, axis=1)
    return jnp.matmul(s * (w - o), activation, precision="highest")


def pack(nibbles: np.ndarray) -> np.ndarray:
    """(R, 8 * C) values in 0..15 -> (R, C) int32, low nibble first, wrapping into the sign bit."""
    r, n = nibbles.shape
    grouped = nibbles.reshape(r, n // 8, 8).astype(np.uint32)
    words = np.zeros((r, n // 8), np.uint32)
    for p in range(8):
        words |= grouped[:, :, p] << np.uint32(4 * p)
    return words.view(np.int32)


def make_inputs(sizes: dict[str, int], rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    n0, mid, n1 = sizes["N0"], sizes["MID"], sizes["N1"]
    assert mid % (8 * GROUP) == 0, "MID must be a multiple of 8 * GROUP"
    groups = mid // GROUP
    derived = {"G": groups, "OW": groups // 8, "WW": mid // 8}
    assert all(sizes.get(k, v) == v for k, v in derived.items()), f"derived sizes must be {derived}"
    scale = rng.uniform(0.01, 0.1, size=(n0, groups)).astype(np.float32)
    offset = pack(rng.integers(0, 16, size=(n0, groups)))
    weight = pack(rng.integers(0, 16, size=(n0, mid)))
    activation = rng.uniform(-0.5, 0.5, size=(mid, n1)).astype(np.float32)
    return scale, offset, weight, activation
