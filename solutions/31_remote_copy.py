"""Puzzle 31: send my block to my right neighbour, chip to chip.

Everything so far ran on one chip. Large models run on many: TPU chips are
joined by fast links (ICI) into a ring or torus, and a kernel on one chip may
copy straight into the memory of another. That is a *remote DMA*:

    copy = pltpu.make_async_remote_copy(src_ref, dst_ref, send_sem, recv_sem,
                                        device_id={"x": target})
    copy.start()    # the data starts to flow from my src_ref to target's dst_ref
    copy.wait()     # wait_send() (my data has left) + wait_recv() (mine has arrived)

Every device runs the same kernel at the same time, under ``jax.shard_map``:
the checker splits the input along the mesh axis ``"x"`` and hands each device
its own block. Inside the kernel ``lax.axis_index("x")`` is this device's
number and ``lax.axis_size("x")`` how many there are. ``dst_ref`` names the
buffer *on the target device*: every device calls the same code, so when I
copy into ``o_ref`` on my right neighbour, my left neighbour copies into mine.
That is also why ``copy.wait()`` works: my ``recv_sem`` counts the bytes that
*my left neighbour's* copy brought me.

With four devices (the ring closes: device 3's right neighbour is device 0)::

     x[0]       x[1]       x[2]       x[3]
    +-----+    +-----+    +-----+    +-----+
    | d 0 |--->| d 1 |--->| d 2 |--->| d 3 |
    +-----+    +-----+    +-----+    +-----+
       ^                                |
       +--------------------------------+
    out: x[3]       x[0]       x[1]       x[2]

A copy goes to a device that might not have reached the kernel yet. Here
Pallas guards against that for you: a pallas_call without a ``collective_id``
starts with a barrier across all devices (puzzle 32 does it by hand).

Task: each device sends its block (``x_ref``, shape ``(1, R, C)``, in HBM) to
its right neighbour's ``o_ref``. The checker runs 2, 5 and 8 devices, so work the
neighbour out from ``lax.axis_index`` and ``lax.axis_size``; a ring size
written into the kernel fails.
"""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jaxtyping import Array, Float


def spec(x: Float[Array, "D R C"]) -> Float[Array, "D R C"]:
    """What the devices compute together (for reading; the checker has its own copy): x[d] moves to d + 1."""
    return jnp.roll(x, 1, axis=0)


def remote_copy_kernel(x_ref, o_ref, send_sem, recv_sem):
    # x_ref, o_ref: this device's (1, R, C) blocks, in HBM. send_sem, recv_sem: DMA semaphores.
    me = lax.axis_index("x")
    right = lax.rem(me + 1, lax.axis_size("x"))
    copy = pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id={"x": right})
    copy.start()
    copy.wait()


def remote_copy(x: Float[Array, "1 R C"]) -> Float[Array, "1 R C"]:
    # Runs on every device with that device's block of x (the checker wraps it in jax.shard_map).
    return pl.pallas_call(
        remote_copy_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA],
    )(x)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
