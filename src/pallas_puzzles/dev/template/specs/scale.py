"""What both puzzles compute: the checker's own copy, which the learner cannot edit."""

import jax.numpy as jnp


def spec(x: jnp.ndarray) -> jnp.ndarray:
    return 3.0 * x
