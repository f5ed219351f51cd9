"""Puzzle 35: an all-reduce that uses the links in both directions.

Every chip-to-chip link carries data both ways at once, so a ring that only
sends to the right leaves half the bandwidth idle. Split the data: the top
half of the rows goes round the ring to the right, the bottom half to the
left, each in a ring of its own::

           top half ---->          top half ---->          top half ---->
    +-----+           +-----+           +-----+           +-----+
    | d 0 |           | d 1 |           | d 2 |           | d 3 |   (both rings close: d3 <-> d0)
    +-----+           +-----+           +-----+           +-----+
           <---- bottom half       <---- bottom half       <---- bottom half

Task: ``lax.psum``: every device ends with the sum of all devices' blocks.
Each ring passes the *values* along, as in an all-gather, and every device
adds what arrives: after N - 1 steps (``grid=(N - 1,)``) each has added every
other device's half. Each ring works like puzzle 34's: two slots
(``buf[ring, slot]``), a "slot free" REGULAR semaphore, and its own DMA
semaphores, so the two rings never wait on each other's counts. Ring 0 goes
right (it receives from the left neighbour, so that is who hears "slot
free"); ring 1 goes left (it receives from the right). Start both copies
before waiting for either, so both links are busy at once.

When it passes, the traffic card shows N/2 times the minimum at N devices:
passing whole values round the ring is simple, but a reduce-scatter (puzzle
34) followed by an all-gather (puzzle 33) moves only 2 (N - 1) / N of a block
per device. Both directions at once halve the time, not the bytes.
"""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float


def spec(x: Float[Array, "D R C"]) -> Float[Array, "D R C"]:
    """What the devices compute together (for reading): every device holds the sum over devices."""
    return jnp.broadcast_to(x.sum(axis=0, keepdims=True), x.shape)


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


def bidirectional_all_reduce_kernel(x_ref, o_ref, buf, send_sems, recv_sems, free_sems):
    # x_ref, o_ref: (1, R, C). buf: (2 rings, 2 slots, R // 2, C). send_sems, recv_sems: two DMA semaphores
    # each; free_sems: two REGULAR ones. Ring 0 carries the top half to the right, ring 1 the bottom half left.
    step = pl.program_id(0)
    n, me, left, right = neighbours()
    h = x_ref.shape[1] // 2
    work = lax.rem(step, 2)

    # TODO: step 0: the handshake; your top half into buf[0, work], your bottom half into buf[1, work];
    #       the output starts as your own block.
    # TODO: each ring: tell the device that sends to you your slot is free, wait until the receiver's is,
    #       start the copy of buf.at[ring, work] into buf.at[ring, 1 - work] on the next device of that ring.
    # TODO: wait for both copies, then add both halves that arrived into the output.
    del step, n, me, left, right, h, work


def bidirectional_all_reduce(x: Float[Array, "1 R C"]) -> Float[Array, "1 R C"]:
    n = lax.axis_size("x")
    _, r, c = x.shape
    return pl.pallas_call(
        bidirectional_all_reduce_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(n - 1,),
        in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
        out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
        scratch_shapes=[pltpu.VMEM((2, 2, r // 2, c), x.dtype), pltpu.SemaphoreType.DMA((2,)),
                        pltpu.SemaphoreType.DMA((2,)), pltpu.SemaphoreType.REGULAR((2,))],
        compiler_params=pltpu.CompilerParams(collective_id=0),
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
