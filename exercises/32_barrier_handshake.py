"""Puzzle 32: the barrier handshake: make sure your neighbours are there before you write to them.

Puzzle 31's pallas_call had no ``collective_id``, so Pallas put a barrier
across *all* devices in front of the kernel: nobody started before everybody
had arrived. That is safe, and slow on a large pod: every device waits for the
slowest one, though it only talks to two. A kernel can instead give its
pallas_call ``compiler_params=pltpu.CompilerParams(collective_id=0)`` and do a
*handshake* with exactly the devices it talks to.

The tool is the *barrier semaphore*, ``pltpu.get_barrier_semaphore()``: one
counter per device that other devices may raise even before this device has
entered the kernel (a semaphore in scratch_shapes exists only once the kernel
runs). ``pl.semaphore_signal(sem, 1, device_id={"x": d})`` raises device d's
copy of it by one; ``pl.semaphore_wait(sem, k)`` waits until mine reaches k,
then takes k off. So::

    signal left  -+        +- signal right
                  v        v
      left  <--- [   me   ] ---> right
                  ^        ^
    left signals -+        +- right signals
    wait for 2: both neighbours have entered the kernel

After the handshake I may copy to, or signal, either neighbour: I know it
has entered the kernel. Copying before the handshake is the bug the checker
looks for (on a TPU it corrupts memory or crashes, now and then).

Task: every device sends its block to *both* neighbours. The output of each
device, shape ``(1, 2, R, C)``, holds the block of its left neighbour in
``[:, 0]`` and that of its right neighbour in ``[:, 1]``. With four devices::

    +-----+  x[0] ->  +-----+  x[1] ->  +-----+  x[2] ->  +-----+
    | d 0 |           | d 1 |           | d 2 |           | d 3 |   (and x[3] -> d 0)
    +-----+  <- x[1]  +-----+  <- x[2]  +-----+  <- x[3]  +-----+   (and x[0] -> d 3)

Two copies are in flight at once, so give each its own pair of semaphores
(``send_sems.at[0]``, ``recv_sems.at[0]`` for the one going right; ``.at[1]`` for
the one going left). On two devices the left and right neighbours are the
same device: the code needs no special case.
"""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float


def spec(x: Float[Array, "D R C"]) -> Float[Array, "D 2 R C"]:
    """What the devices compute together (for reading): [left neighbour's block, right neighbour's block]."""
    return jnp.stack([jnp.roll(x, 1, axis=0), jnp.roll(x, -1, axis=0)], axis=1)


def barrier_handshake_kernel(x_ref, o_ref, send_sems, recv_sems):
    # x_ref: (1, R, C) in HBM. o_ref: (1, 2, R, C) in HBM. send_sems, recv_sems: two DMA semaphores each.
    n = lax.axis_size("x")
    me = lax.axis_index("x")
    left, right = lax.rem(me + n - 1, n), lax.rem(me + 1, n)

    # TODO: the handshake: signal both neighbours on pltpu.get_barrier_semaphore(), then wait for both.
    # TODO: copy x_ref into o_ref.at[:, 0] on the right neighbour and into o_ref.at[:, 1] on the left one,
    #       each copy with its own semaphores; start both, then wait for both.
    del left, right


def barrier_handshake(x: Float[Array, "1 R C"]) -> Float[Array, "1 2 R C"]:
    _, r, c = x.shape
    return pl.pallas_call(
        barrier_handshake_kernel,
        out_shape=jax.ShapeDtypeStruct((1, 2, r, c), x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA((2,)), pltpu.SemaphoreType.DMA((2,))],
        compiler_params=pltpu.CompilerParams(collective_id=0),
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
