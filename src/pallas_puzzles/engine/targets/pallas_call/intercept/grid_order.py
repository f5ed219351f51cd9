"""The order of 'parallel' grid axes: never the order they are written in.

A 'parallel' axis promises that its steps are independent: a TPU may split them
over cores or run them in any order. Pallas's TPU interpreter runs each such axis
in an order drawn from InterpretParams.random_seed; with two steps that order is
the written one half the time, so a kernel that carries state along the axis
could pass every shape case. While a check runs, the first shape case runs every
parallel axis backwards (StrictSession.reverse_parallel), and in the others a
shuffle that leaves an axis in order is reversed: every parallel axis of two or
more steps runs out of order in every case, however it was spelt ("parallel",
pltpu.PARALLEL), since the interpreter's own reading of the semantics decides
which axes these are.

The interpreter draws the orders in one private helper, _get_randomized_grid_coordinates
(pallas_call/jax_private.py, with the versions checked: one permutation per parallel axis,
an empty array for the others); this wraps it.
"""

from __future__ import annotations

from typing import Any

from pallas_puzzles.engine.targets.pallas_call import jax_private
from pallas_puzzles.engine.targets.pallas_call.intercept.session import active

_installed = False


def _out_of_order(coordinates: Any, reverse: bool) -> Any:
    """One axis's order of steps: backwards when asked, or when the shuffle left it in order."""
    import jax.numpy as jnp

    steps = coordinates.shape[0]
    if steps < 2:  # an 'arbitrary' axis (no permutation) or a single step
        return coordinates
    forwards = jnp.arange(steps, dtype=coordinates.dtype)
    backwards = forwards[::-1]
    if reverse:
        return backwards
    return jnp.where(jnp.all(coordinates == forwards), backwards, coordinates)


def install() -> None:
    """Wrap the interpreter's choice of order (idempotent); it changes orders only while a session is active."""
    global _installed
    if _installed:
        return
    interpreter = jax_private.interpreter()
    original = interpreter._get_randomized_grid_coordinates

    def ordered(grid: Any, mosaic_params: Any, random_seed: Any) -> tuple[Any, ...]:
        coordinates = original(grid, mosaic_params, random_seed)
        session = active.session
        if session is None:
            return coordinates
        return tuple(_out_of_order(axis, session.reverse_parallel) for axis in coordinates)

    interpreter._get_randomized_grid_coordinates = ordered
    _installed = True
