"""Puzzle 33: a ring all-gather: every device ends with every block.

``lax.all_gather`` over N devices, written by hand. Each device starts with
its own block; after N - 1 steps round the ring, each has all N, in order.
The grid becomes the loop over steps: ``grid=(N - 1,)``, and
``pl.program_id(0)`` is the step.

The output of each device is an (N, R, C) array in HBM, one slot per
block. At step 0 a device puts its own block into slot ``me``. At every step
it passes one block to its right neighbour, into the *same* slot there:
the block it received the step before, which belongs to device
``(me - step) mod N``. Four devices, the slot each one sends::

    step 0:  d0 sends slot 0   d1 sends slot 1   d2 sends slot 2   d3 sends slot 3
    step 1:  d0 sends slot 3   d1 sends slot 0   d2 sends slot 1   d3 sends slot 2
    step 2:  d0 sends slot 2   d1 sends slot 3   d2 sends slot 0   d3 sends slot 1

       +-----+      +-----+      +-----+      +-----+
       | d 0 |----->| d 1 |----->| d 2 |----->| d 3 |
       +-----+      +-----+      +-----+      +-----+
          ^                                      |
          +--------------------------------------+

Receiving is the wait: ``copy.wait()`` waits for my send to leave and for my
left neighbour's copy of this step to arrive (the same number of bytes, into
the slot it is passing on). A block may be passed on only after it has
arrived, that is, at the next step.

Each step needs its *own* receive semaphore (``recv_sems.at[step]``, from
``pltpu.SemaphoreType.DMA((N - 1,))``): a neighbour that runs a step ahead
could otherwise satisfy this step's wait with next step's bytes, and the block
passed on would not have arrived yet.

The handshake of puzzle 32 is given as ``handshake(left, right)``.
"""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float


def spec(x: Float[Array, "D R C"]) -> Float[Array, "DD R C"]:
    """What the devices compute together (for reading): every device holds all D blocks, in order."""
    return jnp.tile(x, (x.shape[0], 1, 1))


def neighbours():
    """(n, me, left, right): the ring's size, this device and its two neighbours."""
    n = lax.axis_size("x")
    me = lax.axis_index("x")
    return n, me, lax.rem(me + n - 1, n), lax.rem(me + 1, n)


def handshake(left, right):
    """Puzzle 32: both neighbours have entered the kernel once this returns."""
    barrier = pltpu.get_barrier_semaphore()
    pl.semaphore_signal(barrier, 1, device_id={"x": left})
    pl.semaphore_signal(barrier, 1, device_id={"x": right})
    pl.semaphore_wait(barrier, 2)


def ring_all_gather_kernel(x_ref, o_ref, copy_sem, send_sem, recv_sems):
    # x_ref: (1, R, C) in HBM. o_ref: (N, R, C) in HBM. copy_sem, send_sem: DMA semaphores.
    # recv_sems: N - 1 DMA semaphores, one per step.
    step = pl.program_id(0)
    n, me, left, right = neighbours()

    # TODO: at step 0, the handshake, then copy your own block into your slot of o_ref (o_ref.at[pl.ds(me, 1)]).
    # TODO: at every step, pass slot (me - step) mod N on to the same slot of the right neighbour, on this
    #       step's receive semaphore, and wait for the copy.
    del step, n, me, left, right


def ring_all_gather(x: Float[Array, "1 R C"]) -> Float[Array, "N R C"]:
    n = lax.axis_size("x")
    return pl.pallas_call(
        ring_all_gather_kernel,
        out_shape=jax.ShapeDtypeStruct((n, *x.shape[1:]), x.dtype),
        grid=(n - 1,),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA((n - 1,))],
        compiler_params=pltpu.CompilerParams(collective_id=0),
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
