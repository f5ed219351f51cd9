import jax.numpy as jnp


def spec(x, w):
    """Device d holds all rows of x times its own weight columns w[d]."""
    return jnp.einsum("mk,dkc->dmc", x.reshape(-1, x.shape[-1]), w)
