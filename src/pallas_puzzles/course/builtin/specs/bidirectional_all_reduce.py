import jax.numpy as jnp


def spec(x):
    """Every device holds the sum over devices."""
    return jnp.broadcast_to(x.sum(axis=0, keepdims=True), x.shape)
