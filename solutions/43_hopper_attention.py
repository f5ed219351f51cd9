"""Puzzle 43: Mosaic GPU, a Hopper flash-attention step.

Everything so far comes together in attention, ``softmax(q k^T / sqrt(D)) v``
for one head, written the way Hopper kernels write it. Each block owns
``BQ = 64`` query rows; ``k`` and ``v`` (all ``T`` rows) sit in SMEM beside
them. The block walks the keys in blocks of ``BKV = 64`` and keeps, per
query row, the running maximum ``m``, the running sum ``l`` and the
unnormalised output ``acc`` (the online softmax of puzzle 17):

1. ``s = q @ k_j^T * scale`` with one wgmma; ``k_smem.at[kv].T`` is a
   transposed view, which wgmma reads directly.
2. ``m_new = max(m, rowmax(s))``; ``alpha = exp(m - m_new)``;
   ``p = exp(s - m_new)``; ``l = l * alpha + rowsum(p)``.
3. ``acc = acc * alpha + p @ v_j``, the second wgmma. Its left operand
   must be in SMEM: store ``p`` (as float16) into ``p_smem``, and
   ``plgpu.commit_smem()`` before the wgmma reads it; the tensor cores do
   not see uncommitted stores.

At the end ``o = acc / l`` goes out through ``o_smem``.

Values in registers have *layouts* (how the 128 threads hold them). A wgmma
result has ``plgpu.Layout.WGMMA``; a row reduction of it has
``plgpu.Layout.WGMMA.reduce(1)``. Loop carries must keep one layout from
start to end, so the initial ``m``, ``l`` and ``acc`` are given theirs with
``plgpu.layout_cast``; the interpreter ignores layouts, but the CUDA
lowering the checker runs needs them.

Task: ``o = softmax(q k^T / sqrt(D)) v`` for float16 ``q``, ``k``, ``v`` of
shape ``(T, D)``, returned in float32. One shape case scales ``q`` up so that
the scores are large: an ``exp`` of a score whose maximum was not
subtracted overflows there.
"""

import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jaxtyping import Array, Float

BQ = 64  # query rows per block
BKV = 64  # keys per step
ROW = plgpu.Layout.WGMMA.reduce(1)  # the layout of a row reduction of a wgmma result


def spec(q: Float[Array, "T D"], k: Float[Array, "T D"], v: Float[Array, "T D"]) -> Float[Array, "T D"]:
    """What the kernel must compute (for reading; the checker has its own copy)."""
    scores = jnp.dot(q.astype(jnp.float32), k.astype(jnp.float32).T) / math.sqrt(q.shape[1])
    return jnp.dot(jax.nn.softmax(scores, axis=1), v.astype(jnp.float32))


def attention_kernel(q_gmem, k_gmem, v_gmem, o_gmem, q_smem, k_smem, v_smem, p_smem, o_smem, barrier):
    # q_gmem, k_gmem, v_gmem: (T, D) float16; o_gmem: (T, D) float32. q_smem: (BQ, D); k_smem, v_smem: (T, D);
    # p_smem: (BQ, BKV) float16; o_smem: (BQ, D) float32; barrier: num_arrivals=3.
    t, d = k_gmem.shape
    rows = pl.ds(jax.lax.axis_index("q") * BQ, BQ)
    plgpu.copy_gmem_to_smem(q_gmem.at[rows], q_smem, barrier)
    plgpu.copy_gmem_to_smem(k_gmem, k_smem, barrier)
    plgpu.copy_gmem_to_smem(v_gmem, v_smem, barrier)
    plgpu.barrier_wait(barrier)
    scale = 1.0 / math.sqrt(d)

    def kv_step(j, carry):
        m, l, acc = carry
        kv = pl.ds(j * BKV, BKV)

        def scores(s_ref):
            plgpu.wgmma(s_ref, q_smem, k_smem.at[kv].T)
            plgpu.wgmma_wait(0)
            return s_ref[...]

        s = pl.run_scoped(scores, plgpu.ACC((BQ, BKV), jnp.float32)) * scale
        m_new = jnp.maximum(m, s.max(axis=1))
        alpha = jnp.exp(m - m_new)
        p = jnp.exp(s - m_new[:, None])
        l = l * alpha + p.sum(axis=1)
        p_smem[...] = p.astype(p_smem.dtype)
        plgpu.commit_smem()

        def values(pv_ref):
            plgpu.wgmma(pv_ref, p_smem, v_smem.at[kv])
            plgpu.wgmma_wait(0)
            return pv_ref[...]

        pv = pl.run_scoped(values, plgpu.ACC((BQ, d), jnp.float32))
        return m_new, l, acc * alpha[:, None] + pv

    m = plgpu.layout_cast(jnp.full((BQ,), -jnp.inf, jnp.float32), ROW)
    l = plgpu.layout_cast(jnp.full((BQ,), 0.0, jnp.float32), ROW)
    acc = plgpu.layout_cast(jnp.full((BQ, d), 0.0, jnp.float32), plgpu.Layout.WGMMA)
    m, l, acc = jax.lax.fori_loop(0, t // BKV, kv_step, (m, l, acc))
    o_smem[...] = acc / l[:, None]
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(o_smem, o_gmem.at[rows])
    plgpu.wait_smem_to_gmem(0)


def hopper_attention(q: Float[Array, "T D"], k: Float[Array, "T D"], v: Float[Array, "T D"]) -> Float[Array, "T D"]:
    t, d = q.shape
    return plgpu.kernel(
        attention_kernel,
        out_type=jax.ShapeDtypeStruct((t, d), jnp.float32),
        grid=(t // BQ,),
        grid_names=("q",),
        scratch_types=[
            plgpu.SMEM((BQ, d), q.dtype),
            plgpu.SMEM((t, d), k.dtype),
            plgpu.SMEM((t, d), v.dtype),
            plgpu.SMEM((BQ, BKV), q.dtype),
            plgpu.SMEM((BQ, d), jnp.float32),
            plgpu.Barrier(num_arrivals=3),
        ],
    )(q, k, v)


if __name__ == "__main__":
    from pallas_puzzles import check_file

    raise SystemExit(check_file(__file__))
