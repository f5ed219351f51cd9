import jax.numpy as jnp


def spec(x):
    """Every device ends with all D blocks, in order."""
    return jnp.tile(x, (x.shape[0], 1, 1))
