"""Puzzle 54: Blackwell, two blocks of a cluster share an operand by multicast.

Blocks that multiply the same rows of ``a`` by different columns of ``b``
each load those rows from GMEM: the same bytes cross the memory bus twice.
A *cluster* groups blocks that run at the same time on neighbouring SMs; a
TMA copy with ``collective_axes`` *multicasts*: the cluster's blocks share
the load, and every block receives the whole tile in its own SMEM::

    cluster of 2 blocks (axis "c"):     block c = 0              block c = 1
    GMEM  a[rows] ----- multicast --->  a_smem (128, K)           a_smem (128, K)   (the same tile)
    GMEM  b[:, cols_c] -- own copy -->  b_smem (K, 128) cols 0    b_smem (K, 128) cols 1
    TMEM                                acc_tmem (128, 128)       acc_tmem (128, 128)
    GMEM  z[rows, cols_c] <-----------  registers                 registers

``plgpu.kernel(..., cluster=(2,), cluster_names=("c",))`` makes clusters of
two along ``"c"``, on top of the grid: ``jax.lax.axis_index("c")`` is the
block's place in its cluster, 0 or 1. The multicast copy is
``plgpu.copy_gmem_to_smem(a_gmem.at[rows], a_smem, barrier,
collective_axes="c")``, and *every* block of the cluster issues it (each
loads its share); each block then waits on its own barrier, which completes
when its SMEM holds the whole tile. A block that skips the copy leaves its
partner waiting for ever.

Task: ``z = a @ b`` for float16 ``a`` (M, K), ``b`` (K, N), in float32. The
grid has one cluster per 128 rows and 256 columns of ``z``; block ``c`` of
the cluster computes columns ``c * 128`` to ``c * 128 + 127`` of them, with
one tcgen05 MMA, from the multicast rows of ``a``.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jaxtyping import Array, Float

TM = 128  # rows of z per cluster (both blocks)
TN = 128  # columns of z per block
CLUSTER = 2  # blocks per cluster, along "c"
SWIZZLE = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))  # the MMA's SMEM layout for float16


def spec(a: Float[Array, "M K"], b: Float[Array, "K N"]) -> Float[Array, "M N"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    return jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32))


def pair_kernel(a_gmem, b_gmem, z_gmem, a_smem, b_smem, acc_tmem, tma_barrier, mma_barrier):
    # a_smem: (TM, K), b_smem: (K, TN) swizzled; acc_tmem: (TM, TN) f32;
    # tma_barrier: 2 arrivals (a's multicast and b's copy); mma_barrier: orders_tensor_core=True.
    rows = pl.ds(jax.lax.axis_index("m") * TM, TM)
    cols = pl.ds((jax.lax.axis_index("n") * CLUSTER + jax.lax.axis_index("c")) * TN, TN)
    # TODO: multicast this cluster's rows of a into a_smem, copy this block's columns of b into b_smem (both
    #       on tma_barrier), and wait.
    # TODO: one tcgen05 MMA into acc_tmem, wait for it, and read it back into this block's tile of z.
    del rows, cols

def multicast_pair(a: Float[Array, "M K"], b: Float[Array, "K N"]) -> Float[Array, "M N"]:
    m, k = a.shape
    n = b.shape[1]
    return plgpu.kernel(
        pair_kernel,
        out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
        grid=(m // TM, n // (CLUSTER * TN)),
        grid_names=("m", "n"),
        cluster=(CLUSTER,),
        cluster_names=("c",),
        scratch_types=[
            plgpu.SMEM((TM, k), a.dtype, transforms=SWIZZLE),
            plgpu.SMEM((k, TN), b.dtype, transforms=SWIZZLE),
            plgpu.TMEM((TM, TN), jnp.float32),
            plgpu.Barrier(num_arrivals=2),
            plgpu.Barrier(orders_tensor_core=True),
        ],
    )(a, b)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
