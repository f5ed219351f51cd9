"""Puzzle 29: a grouped matmul; tile t of 8 rows uses weight w[tile_group[t]]."""

import jax.numpy as jnp
import numpy as np

TM = 8


def spec(tile_group: jnp.ndarray, x: jnp.ndarray, w: jnp.ndarray) -> jnp.ndarray:
    row_group = jnp.repeat(jnp.asarray(tile_group), TM)
    return jnp.einsum("mk,mkn->mn", x, w[row_group], precision="highest")


def make_inputs(sizes: dict[str, int], rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Sorted tile groups with ragged sizes: the last group always used, one group left empty when G > 2."""
    m, k, n, g = sizes["M"], sizes["K"], sizes["N"], sizes["G"]
    tiles = m // TM
    groups = np.sort(rng.integers(0, g, size=tiles))
    groups[-1] = g - 1  # the last expert: an off-by-one index_map steps past w
    if g > 2:
        groups[groups == 1] = 0  # expert 1 gets no rows at all
    x = rng.uniform(-0.5, 0.5, size=(m, k)).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, size=(g, k, n)).astype(np.float32)
    return groups.astype(np.int32), x, w
