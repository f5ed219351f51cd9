import jax.numpy as jnp


def spec(x):
    """Device d's block goes to device d + 1 (the ring closes)."""
    return jnp.roll(x, 1, axis=0)
