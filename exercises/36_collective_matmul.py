"""Puzzle 36: a collective matmul: send the next block while you multiply this one.

A layer's weights are often split by columns across devices, and its input
by rows: device d holds rows block ``x[d]`` (shape ``(R, K)``) and the weight
columns ``w[d]`` (``(K, C)``). Each device needs the *whole* input times its own
weights, ``concat(x) @ w[d]``, shape ``(N * R, C)``. An all-gather of x first,
then one big matmul, would leave the MXU idle while the data moves. Instead,
pass the row blocks round the ring and multiply each one as it comes: while
block s is being multiplied, block s + 1 is already on its way::

    step s on device me:      start copy of buf[s % 2] --> right neighbour
                              o[rows of (me - s) mod N] = buf[s % 2] @ w     <- overlaps the copy
                              wait for the copy (mine has left, the next block has arrived)

       +-----+      +-----+      +-----+      +-----+
       | d 0 |----->| d 1 |----->| d 2 |----->| d 3 |     x blocks travel right,
       +-----+      +-----+      +-----+      +-----+     w stays where it is
          ^                                      |
          +--------------------------------------+

Grid ``(N,)``: N blocks to multiply, N - 1 copies (none after the last). The
two slots and the "slot free" semaphore work as in puzzle 34.

This puzzle is graded on overlap too. The interpreter has no clock, but the
checker reads your kernel in program order: between a copy's start and its
wait there must be a product (the matmul) that goes into the output, then
or later. A kernel that waits for its copy before computing the product, or
only stores something else meanwhile, leaves the MXU idle while the data
moves, and fails.
"""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float


def spec(x: Float[Array, "D R K"], w: Float[Array, "D K C"]) -> Float[Array, "D DR C"]:
    """What the devices compute together (for reading): device d holds all rows of x times its w[d]."""
    return jnp.einsum("mk,dkc->dmc", x.reshape(-1, x.shape[-1]), w)


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


def collective_matmul_kernel(x_ref, w_ref, o_ref, buf, send_sem, recv_sem, free_sem):
    # x_ref: (1, R, K) this device's rows. w_ref: (1, K, C) its weight columns. o_ref: (1, N * R, C).
    # buf: (2, R, K) slots. send_sem, recv_sem: DMA semaphores; free_sem: REGULAR ("my slot is free").
    step = pl.program_id(0)
    n, me, left, right = neighbours()
    work = lax.rem(step, 2)
    more = step < n - 1
    rows = x_ref.shape[1]

    # TODO: step 0: the handshake, and your own rows into slot `work`.
    # TODO: every step but the last: the slot-free handshake, then start the copy of slot `work` into the
    #       other slot of the right neighbour.
    # TODO: multiply slot `work` (the rows of device (me - step) mod N) by your weights into their rows of
    #       o_ref, and only then, every step but the last, wait for the copy.
    del step, n, me, left, right, work, more, rows


def collective_matmul(x: Float[Array, "1 R K"], w: Float[Array, "1 K C"]) -> Float[Array, "1 NR C"]:
    n = lax.axis_size("x")
    _, r, k = x.shape
    return pl.pallas_call(
        collective_matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((1, n * r, w.shape[2]), jnp.float32),
        grid=(n,),
        in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM), pl.BlockSpec(memory_space=pltpu.VMEM)],
        out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
        scratch_shapes=[pltpu.VMEM((2, r, k), x.dtype), pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA,
                        pltpu.SemaphoreType.REGULAR],
        compiler_params=pltpu.CompilerParams(collective_id=0),
    )(x, w)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
