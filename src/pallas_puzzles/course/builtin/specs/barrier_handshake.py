import jax.numpy as jnp


def spec(x):
    """Each device gets [its left neighbour's block, its right neighbour's block]."""
    return jnp.stack([jnp.roll(x, 1, axis=0), jnp.roll(x, -1, axis=0)], axis=1)
