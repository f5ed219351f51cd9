"""Puzzle 34: a ring reduce-scatter with two slots and a "slot free" semaphore.

``lax.psum_scatter`` by hand: every device holds a partial sum of all N
blocks, ``x_ref[0, j]`` being its share of block j; at the end device j holds
block j summed over all devices. This time the *accumulator* travels: the sum
for block j starts at device j + 1, goes right round the ring, each device
adding its own share, and arrives home at device j after N - 1 hops, where
the last share is added and the result stored. At step s device ``me`` holds
the running sum of block ``(me - s - 1) mod N``::

    step 0:  d0 has block 3   d1 has block 0   d2 has block 1   d3 has block 2
    step 1:  d0 has block 2   d1 has block 3   d2 has block 0   d3 has block 1
    step 3:  d0 has block 0   d1 has block 1   d2 has block 2   d3 has block 3  (stored)

       +-----+      +-----+      +-----+      +-----+
       | d 0 |----->| d 1 |----->| d 2 |----->| d 3 |
       +-----+<-.   +-----+<-.   +-----+<-.   +-----+
          ^      `-- free --'  `-- free --'      |      "free": my receive slot is empty
          +--------------------------------------+

The running sums live in a VMEM buffer of two slots: slot ``step % 2`` is the
one being worked on, and the neighbour's copy lands in the other. A sender
knows nothing about its receiver, though: if the right neighbour is slow, the
next copy could land in a slot it is still reading. So each device says when
its receive slot is free, on a REGULAR semaphore: at the start of every step
it signals its *left* neighbour (who sends to it), and before sending it waits
for its right neighbour's signal. Every signal is waited for exactly once, so
the semaphore ends at zero, as a TPU requires.

Grid ``(N,)``: steps 0 to N - 2 add and send; the last step adds and stores.
"""

import jax
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float


def spec(x: Float[Array, "D D R C"]) -> Float[Array, "D R C"]:
    """What the devices compute together (for reading): block j, summed over the devices, ends on device j."""
    return x.sum(axis=0)


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


def ring_reduce_scatter_kernel(x_ref, o_ref, buf, send_sem, recv_sem, free_sem):
    # x_ref: (1, N, R, C), this device's share of every block. o_ref: (1, R, C). buf: (2, R, C) slots.
    # send_sem, recv_sem: DMA semaphores. free_sem: a REGULAR semaphore ("my receive slot is free").
    step = pl.program_id(0)
    n, me, left, right = neighbours()
    work = lax.rem(step, 2)
    # TODO: step 0: the handshake, and slot `work` starts as your share of block (me - 1) mod N.
    #       Later steps: add your share of block (me - step - 1) mod N into slot `work`.
    # TODO: every step but the last: tell your left neighbour your other slot is free, wait until the right
    #       neighbour's is, then copy slot `work` into its other slot and wait for the copy.
    # TODO: the last step: store slot `work` in o_ref.
    del step, n, me, left, right, work


def ring_reduce_scatter(x: Float[Array, "1 N R C"]) -> Float[Array, "1 R C"]:
    _, n, r, c = x.shape
    return pl.pallas_call(
        ring_reduce_scatter_kernel,
        out_shape=jax.ShapeDtypeStruct((1, r, c), x.dtype),
        grid=(n,),
        in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
        out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
        scratch_shapes=[pltpu.VMEM((2, r, c), x.dtype), pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA,
                        pltpu.SemaphoreType.REGULAR],
        compiler_params=pltpu.CompilerParams(collective_id=0),
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
