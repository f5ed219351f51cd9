"""Puzzle 6: the gradient of z = relu(x * y[:, None]) with respect to x.

x and dz have shape (N1, N0) and y has shape (N1,): y[j] scales row j of x.
The gradient comes from jax.vjp of the forward function, so the formula shown
to learners, dx = (x * y[:, None] > 0) * y[:, None] * dz, is checked against
autodiff rather than against itself.
"""

import jax
import jax.numpy as jnp


def spec(x: jnp.ndarray, y: jnp.ndarray, dz: jnp.ndarray) -> jnp.ndarray:
    def forward(x_: jnp.ndarray) -> jnp.ndarray:
        return jax.nn.relu(x_ * y[:, None])

    _, pullback = jax.vjp(forward, jnp.asarray(x))
    (dx,) = pullback(jnp.asarray(dz))
    return dx
